-- notebridge schema version 11: one owner per item. The run lock makes its holder the only process
-- that changes job states, and taking the lock re-queues what a previous holder left running, so the
-- per-job lease (`lease_owner`, `lease_until`: a third ownership mechanism, read by nothing else)
-- goes. See `store::jobs` for the lifecycle.
ALTER TABLE jobs DROP COLUMN lease_owner;
ALTER TABLE jobs DROP COLUMN lease_until;
-- `notion_items.sibling_index` was written at each intent and read by nothing: a lost creation is
-- recognised among the parent's listed children by its title among those not ours
-- (`notion_children_of`), not by its position.
DROP INDEX notion_items_by_parent;
ALTER TABLE notion_items DROP COLUMN sibling_index;
CREATE INDEX notion_items_by_parent ON notion_items(parent_notion_id);
