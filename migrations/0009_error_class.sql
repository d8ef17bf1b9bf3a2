-- notebridge schema version 9: the class of a job's last error (`scope/next`, e.g. `item/never`,
-- `attempt/retry`; see `failure::Class::code`) beside its message, so `status` and a script read
-- what the failure meant instead of parsing its text. NULL for errors recorded before version 9.
ALTER TABLE jobs ADD COLUMN error_class TEXT;
