//! Reading OneNote's own files: read + convert time per page and per MB, and peak RSS.
fn main() {}
