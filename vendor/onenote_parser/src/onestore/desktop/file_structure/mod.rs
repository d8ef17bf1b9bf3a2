mod file_node_list;
mod file_node_list_fragment;
mod free_chunk_list_fragment;
mod header;
mod parse_context;
mod transaction_log_fragment;

pub(crate) use file_node_list::{FileNodeDataIterator, FileNodeList};
pub(crate) use file_node_list_fragment::FileNodeListFragment;
pub(crate) use free_chunk_list_fragment::FreeChunkListFragment;
pub(crate) use header::OneStoreHeader;
pub(crate) use parse_context::ParseContext;
pub(crate) use transaction_log_fragment::TransactionLogFragment;
