use crate::errors::{ErrorKind, Result};
use crate::fsshttpb::data::cell_id::CellId;
use crate::fsshttpb::data_element::storage_index::StorageIndex;
use crate::fsshttpb::data_element::storage_manifest::StorageManifest;
use crate::fsshttpb::packaging::OneStorePackaging;
use crate::onestore::fsshttpb::header::StoreHeader;
use crate::onestore::fsshttpb::object_space::ObjectSpace;
use crate::onestore::fsshttpb::revision::Revision;
use crate::onestore::{OneStore, OneStoreType};
use crate::shared::guid::Guid;
use std::collections::{HashMap, HashSet};

pub(crate) mod header;
pub(crate) mod mapping_table;
pub(crate) mod object;
pub(crate) mod object_space;
pub(crate) mod revision;
mod revision_role;

/// A OneNote file packaged in a FSSHTTPB envelope.
///
/// See [\[MS-ONESTORE\] 2.7]
///
/// [\[MS-ONESTORE\] 2.7]: https://docs.microsoft.com/en-us/openspecs/office_file_formats/ms-onestore/189f186c-84ea-4892-afca-633c22bf9389
#[derive(Debug)]
#[allow(dead_code)]
pub(crate) struct PackagingStore {
    schema: Guid,
    header: StoreHeader,
    data_root: ObjectSpace,
    object_spaces: HashMap<CellId, ObjectSpace>,
    /// The object spaces that could not be read, with the reason: each page of a section is an
    /// object space of its own, so one page's damage leaves the others readable.
    damaged_object_spaces: HashMap<CellId, String>,
}

impl PackagingStore {
    pub(crate) fn data_root(&self) -> &ObjectSpace {
        &self.data_root
    }

    pub(crate) fn is_onestore(&self) -> bool {
        self.schema == guid!("{1F937CB4-B26F-445F-B9F8-17E20160E461}")
    }
}

impl OneStore for PackagingStore {
    fn file_identity(&self) -> Guid {
        self.header.file_identity()
    }

    fn get_type(&self) -> Result<OneStoreType> {
        if self.is_onestore() {
            Ok(OneStoreType::Section)
        } else {
            Ok(OneStoreType::TableOfContents)
        }
    }

    fn data_root(&self) -> &dyn crate::onestore::ObjectSpace {
        &self.data_root
    }

    fn object_space(&self, id: CellId) -> Option<&dyn crate::onestore::ObjectSpace> {
        self.object_spaces
            .get(&id)
            .map(|space| space as &dyn crate::onestore::ObjectSpace)
    }

    fn object_space_damage(&self, id: CellId) -> Option<&str> {
        self.damaged_object_spaces.get(&id).map(String::as_str)
    }
}

pub(crate) fn parse_store(package: &OneStorePackaging) -> Result<PackagingStore> {
    let mut parsed_object_spaces = HashSet::new();

    // [ONESTORE] 2.7.1: Parse storage manifest
    let storage_index = package
        .data_element_package
        .find_storage_index_by_id(package.storage_index)
        .or_else(|| package.data_element_package.find_storage_index())
        .ok_or_else(|| ErrorKind::MalformedOneStoreData("storage index is missing".into()))?;
    let storage_manifest = package
        .data_element_package
        .find_storage_manifest()
        .ok_or_else(|| ErrorKind::MalformedOneStoreData("storage manifest is missing".into()))?;

    let header_cell_id = find_header_cell_id(storage_manifest)?;

    let header_cell_mapping_id = storage_index
        .find_cell_mapping_id(header_cell_id)
        .ok_or_else(|| {
            ErrorKind::MalformedOneStoreData("header cell mapping id not found".into())
        })?;

    // [ONESTORE] 2.7.2: Parse header cell
    let header_cell = package
        .data_element_package
        .find_objects(header_cell_mapping_id, storage_index)?
        .into_iter()
        .next()
        .ok_or_else(|| {
            ErrorKind::MalformedOneStoreData("no header object in header cell".into())
        })?;

    let header = StoreHeader::parse(header_cell)?;

    parsed_object_spaces.insert(header_cell_id);

    // Revision cache deduplicates already parsed revisions by cell id.
    // Object spaces can reference revisions across cells; caching avoids re-parsing and
    // preserves identity when multiple spaces share the same revision.
    let mut revision_cache = HashMap::new();

    // Parse data root

    let data_root_cell_id = find_data_root_cell_id(storage_manifest)?;
    let (_, data_root) = parse_object_space(
        data_root_cell_id,
        storage_index,
        package,
        &mut revision_cache,
    )?;

    parsed_object_spaces.insert(data_root_cell_id);

    // Parse other object spaces

    let mut object_spaces = HashMap::new();
    let mut damaged_object_spaces = HashMap::new();

    for mapping in storage_index.cell_mappings.values() {
        if mapping.id.is_nil() {
            continue;
        }

        if parsed_object_spaces.contains(&mapping.cell_id) {
            continue;
        }

        match parse_object_space(mapping.cell_id, storage_index, package, &mut revision_cache) {
            Ok((id, group)) => {
                object_spaces.insert(id, group);
            }
            Err(err) => {
                damaged_object_spaces.insert(mapping.cell_id, err.to_string());
            }
        }
    }

    Ok(PackagingStore {
        schema: storage_manifest.id,
        header,
        data_root,
        object_spaces,
        damaged_object_spaces,
    })
}

fn parse_object_space<'a>(
    cell_id: CellId,
    storage_index: &'a StorageIndex,
    package: &'a OneStorePackaging,
    revision_cache: &mut HashMap<CellId, Revision>,
) -> Result<(CellId, ObjectSpace)> {
    let mapping = storage_index
        .cell_mappings
        .get(&cell_id)
        .ok_or_else(|| ErrorKind::MalformedOneStoreData("cell mapping not found".into()))?;

    ObjectSpace::parse(mapping, storage_index, package, revision_cache)
}

fn find_header_cell_id(manifest: &StorageManifest) -> Result<CellId> {
    manifest
        .roots
        .get(&exguid!({{"1A5A319C-C26B-41AA-B9C5-9BD8C44E07D4"}, 1}))
        .copied()
        .ok_or_else(|| ErrorKind::MalformedOneStoreData("no header cell root".into()).into())
}

fn find_data_root_cell_id(manifest: &StorageManifest) -> Result<CellId> {
    manifest
        .roots
        .get(&exguid!({{"84DEFAB9-AAA3-4A0D-A3A8-520C77AC7073"}, 2}))
        .copied()
        .ok_or_else(|| ErrorKind::MalformedOneStoreData("no header cell root".into()).into())
}
