use super::file_data_store::FileDataStore;
use crate::errors::Result;
use crate::fsshttpb::data::exguid::ExGuid;
use crate::onestore::desktop::file_node::FileNodeData;
use crate::onestore::desktop::file_structure::FileNodeList;
use crate::onestore::desktop::objects::object_space::ObjectSpace;
use crate::onestore::desktop::objects::parse_context::ParseContext;

// See
// - [MS-ONESTORE 2.1.14](https://learn.microsoft.com/en-us/openspecs/office_file_formats/ms-onestore/28e21c1f-94b6-4f98-9d81-2e1278ebefc6)
// - [MS-ONESTORE 1.3.2](https://learn.microsoft.com/en-us/openspecs/office_file_formats/ms-onestore/e3f4f871-f674-4198-9cb8-d67e1eeac2f3)
#[derive(Debug)]
pub(crate) struct RootFileNodeList {
    pub(crate) root_object_space_index: usize,
    pub(crate) object_spaces: Vec<ObjectSpace>,
    /// The object spaces that could not be read, with the reason: each page of a section is an
    /// object space of its own, so one page's damage leaves the others readable.
    pub(crate) damaged_object_spaces: Vec<(ExGuid, String)>,
    // pub(crate) file_data_store: Option<FileDataStore>,
}

/// The object spaces read, those that could not be (with the reason), and the root's id.
type ParsedObjectSpaces = (Vec<ObjectSpace>, Vec<(ExGuid, String)>, Option<ExGuid>);

impl<'a> RootFileNodeList {
    pub(crate) fn root_object_space(&self) -> &ObjectSpace {
        &self.object_spaces[self.root_object_space_index]
    }

    pub(crate) fn parse(
        node_list: &'a FileNodeList,
        context: &'a ParseContext<'a>,
    ) -> Result<Self> {
        let file_data_store = Self::find_file_data_store(node_list)?;

        let context = if let Some(file_data_store) = &file_data_store {
            context.with_file_data_store(file_data_store)
        } else {
            context.clone()
        };
        let (object_spaces, damaged_object_spaces, root_object_space_id) =
            Self::parse_object_spaces(node_list, &context)?;

        let root_object_space_id = root_object_space_id.ok_or_else(|| {
            onestore_parse_error!("Root file node list did not contain a node with the root ID")
        })?;
        // The root object space is the section itself: without it nothing can be read.
        if let Some((_, reason)) = damaged_object_spaces
            .iter()
            .find(|(id, _)| *id == root_object_space_id)
        {
            return Err(
                onestore_parse_error!("The root object space is damaged: {}", reason).into(),
            );
        }
        let root_object_space_index =
            Self::find_root_object_space_index(&object_spaces, root_object_space_id)?;

        Ok(Self {
            root_object_space_index,
            // file_data_store,
            object_spaces,
            damaged_object_spaces,
        })
    }

    fn find_file_data_store(node_list: &'a FileNodeList) -> Result<Option<FileDataStore>> {
        let mut file_data_store = None;
        let mut iterator = node_list.iter_data();

        while iterator.peek().is_some() {
            if let Some(data_store) = FileDataStore::try_parse(&mut iterator)? {
                if file_data_store.is_some() {
                    return Err(onestore_parse_error!(
                        "Only one file_data_store can exist in the root node list"
                    )
                    .into());
                }
                file_data_store = Some(data_store);
            } else {
                iterator.next();
            }
        }

        Ok(file_data_store)
    }

    fn parse_object_spaces(
        node_list: &'a FileNodeList,
        context: &ParseContext<'a>,
    ) -> Result<ParsedObjectSpaces> {
        let mut object_spaces = Vec::new();
        let mut damaged_object_spaces = Vec::new();
        let mut root_object_space_id = None;

        let mut iterator = node_list.iter_data();
        let mut last_index = iterator.get_index();

        while let Some(current) = iterator.peek() {
            let space_id = match current {
                FileNodeData::ObjectSpaceManifestListReferenceFND(reference) => {
                    Some(reference.gosid)
                }
                _ => None,
            };
            let parsed = ObjectSpace::try_parse(&mut iterator, context);
            if let (Some(id), Err(err)) = (space_id, &parsed) {
                damaged_object_spaces.push((id.into(), err.to_string()));
            } else if let Some(object_space) = parsed? {
                object_spaces.push(object_space);
            } else if FileDataStore::try_parse(&mut iterator)?.is_some() {
                // FileDataStore can only appear in the root file node list. It may be
                // located anywhere in this list, so skip it in this pass.
            } else if let FileNodeData::ObjectSpaceManifestRootFND(data) = current {
                root_object_space_id = Some(data.gosid_root.into());

                iterator.next();
            } else {
                return Err(onestore_parse_error!(
                    "Unexpected entry in the root file node list: {:?}",
                    current
                )
                .into());
            }

            let index = iterator.get_index();
            if index == last_index {
                return Err(onestore_parse_error!(
                    "Parser did not advance while parsing root file node list entry: {:?}",
                    current
                )
                .into());
            }
            last_index = index;
        }

        Ok((object_spaces, damaged_object_spaces, root_object_space_id))
    }

    fn find_root_object_space_index(
        object_spaces: &[ObjectSpace],
        root_id: ExGuid,
    ) -> Result<usize> {
        object_spaces
            .iter()
            .position(|space| space.id == root_id)
            .ok_or_else(|| onestore_parse_error!("Should have a default object space").into())
    }
}
