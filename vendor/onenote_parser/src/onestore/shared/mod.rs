pub(crate) mod compact_id;
pub(crate) mod file_blob;
pub(crate) mod jcid;
pub(crate) mod object_prop_set;
pub(crate) mod object_stream_header;
pub(crate) mod prop_set;
pub(crate) mod property;
