pub(crate) mod binary_item;
pub(crate) mod cell_id;
pub(crate) mod compact_u64;
pub(crate) mod exguid;
pub(crate) mod object_types;
pub(crate) mod serial_number;
pub(crate) mod stream_object;
