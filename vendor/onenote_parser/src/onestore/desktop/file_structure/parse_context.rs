use std::collections::HashMap;

use crate::errors::{ErrorKind, Result};

use crate::onestore::desktop::file_structure::{
    TransactionLogFragment, file_node_list_fragment::FileNodeListHeader,
};

/// How deep file node lists may nest. [MS-ONESTORE] 2.1.14 nests them four deep at most (the root
/// list, an object space manifest list, a revision manifest list, an object group list); this
/// leaves room for writers that nest one more while keeping a damaged file from recursing until
/// the stack overflows.
pub(crate) const MAX_FILE_NODE_LIST_DEPTH: usize = 16;

#[derive(Default)]
pub(crate) struct ParseContext {
    file_node_count_mapping: HashMap<u32, usize>,
    /// Where each file node list being read starts, outermost first: a node referring to one of
    /// them would make the read recurse for ever.
    open_lists: Vec<usize>,
}

impl ParseContext {
    pub(crate) fn new() -> Self {
        Self {
            file_node_count_mapping: HashMap::new(),
            open_lists: Vec::new(),
        }
    }

    /// Runs `parse` on the file node list starting at `location`, refusing a list that is already
    /// being read (a list containing itself) and lists nested past [`MAX_FILE_NODE_LIST_DEPTH`].
    pub(crate) fn within_list<T>(
        &mut self,
        location: usize,
        parse: impl FnOnce(&mut Self) -> Result<T>,
    ) -> Result<T> {
        if self.open_lists.contains(&location) {
            return Err(ErrorKind::MalformedOneStoreData(
                format!("the file node list at {location:#x} refers back to itself").into(),
            )
            .into());
        }
        if self.open_lists.len() >= MAX_FILE_NODE_LIST_DEPTH {
            return Err(ErrorKind::MalformedOneStoreData(
                format!("file node lists nested deeper than {MAX_FILE_NODE_LIST_DEPTH}").into(),
            )
            .into());
        }
        self.open_lists.push(location);
        let result = parse(self);
        self.open_lists.pop();
        result
    }

    /// Returns the maximum number of nodes in the provided node list
    pub(crate) fn get_file_node_count(&self, header: &FileNodeListHeader) -> Option<usize> {
        self.file_node_count_mapping
            .get(&header.file_node_list_id)
            .cloned()
    }

    pub(crate) fn update_remaining_nodes_in_fragment(
        &mut self,
        header: &FileNodeListHeader,
        remaining: usize,
    ) {
        self.file_node_count_mapping
            .insert(header.file_node_list_id, remaining);
    }

    pub(crate) fn update_from_transaction_log(&mut self, log: &Vec<TransactionLogFragment>) {
        for fragment in log {
            // See [MS-ONESTORE 2.3.3.2](https://learn.microsoft.com/en-us/openspecs/office_file_formats/ms-onestore/c00897d9-d90a-4707-b9fb-58c93e490322)
            // The transaction entries specify the number of nodes in the FileNodeListFragments.
            for entry in &fragment.size_table {
                if entry.is_sentinel() {
                    continue;
                }

                let new_count = entry.transaction_entry_switch as usize;
                if let Some(current_count) = self.file_node_count_mapping.get(&entry.src_id) {
                    if *current_count < new_count {
                        self.file_node_count_mapping.insert(entry.src_id, new_count);
                    }
                } else {
                    self.file_node_count_mapping.insert(entry.src_id, new_count);
                }
            }
        }
    }
}
