pub(crate) mod guid;
pub(crate) mod multi_byte;
