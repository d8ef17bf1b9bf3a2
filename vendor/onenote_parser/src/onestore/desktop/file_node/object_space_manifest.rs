use crate::Reader;
use crate::onestore::desktop::ExGuid;
use crate::onestore::desktop::file_node::revision_manifest::RevisionManifestListReferenceFND;
use crate::onestore::desktop::file_node::shared::ParseWithRef;
use crate::onestore::desktop::file_node::{FileNodeData, FileNodeDataRef};
use crate::onestore::desktop::file_structure::FileNodeList;
use onenote_parser_macros::Parse;

#[derive(Debug, Clone, Parse)]
pub(crate) struct ObjectSpaceManifestRootFND {
    pub(crate) gosid_root: ExGuid,
}

#[derive(Debug, Clone)]
pub(crate) struct ObjectSpaceManifestListReferenceFND {
    pub(crate) gosid: ExGuid,
    // Per [section 2.1.6](https://learn.microsoft.com/en-us/openspecs/office_file_formats/ms-onestore/480f3f4d-1c13-4b58-9ee5-63919b17fb11),
    // - There is at least one revision in the list.
    // - All but the last revision must be ignored.
    //
    // `Err` holds why the list cannot be read: that damage is this object space's alone.
    pub(crate) last_revision: Result<RevisionManifestListReferenceFND, String>,
}

impl<'a> ParseWithRef<'a> for ObjectSpaceManifestListReferenceFND {
    fn parse(reader: Reader, data_ref: &FileNodeDataRef) -> crate::errors::Result<Self> {
        let last_revision = match data_ref {
            FileNodeDataRef::ElementList(list) => last_revision(list),
            FileNodeDataRef::DamagedList(reason) => Err(reason.clone()),
            _ => Err(
                "ObjectSpaceManifestListReferenceFND must point to a list of elements".to_owned(),
            ),
        };
        Ok(Self {
            gosid: ExGuid::parse(reader)?,
            last_revision,
        })
    }
}

fn last_revision(list: &FileNodeList) -> Result<RevisionManifestListReferenceFND, String> {
    for (index, item) in list.file_node_sequence.iter().enumerate() {
        if index == 0 {
            if !matches!(item.fnd, FileNodeData::ObjectSpaceManifestListStartFND(_)) {
                return Err(
                    "ObjectSpaceManifestListReferenceFND's list must start with a \
                            ObjectSpaceManifestListStartFND."
                        .to_owned(),
                );
            }
        } else if !matches!(item.fnd, FileNodeData::RevisionManifestListReferenceFND(_)) {
            return Err("All items following the first in an \
                        ObjectSpaceManifestListReferenceFND must be \
                        RevisionManifestListReferenceFNDs."
                .to_owned());
        }
    }

    list.file_node_sequence
        .iter()
        .rev()
        .find_map(|node| match &node.fnd {
            FileNodeData::RevisionManifestListReferenceFND(revision) => Some(revision.clone()),
            _ => None,
        })
        .ok_or_else(|| {
            "ObjectSpaceManifestListReferenceFND must point to a list with at least one revision"
                .to_owned()
        })
}

#[derive(Debug, Clone, Parse)]
#[allow(dead_code)]
pub(crate) struct ObjectSpaceManifestListStartFND {
    gsoid: ExGuid,
}
