//! The parser run on a thread of its own, with a stack sized for the parser's own nesting bounds.
//!
//! The vendored parser reads outlines, ink and property sets recursively, stopping at fixed depths
//! (`vendor/onenote_parser/PATCHES.md`: 128 outline levels, for one). A damaged or hostile file can
//! reach those depths, and a stack overflow ends the whole process rather than costing the
//! section. How much stack the bounds need depends on the build and on the caller's thread: an
//! unoptimised build spends about 6.5 KB per outline level (840 KB at the bound), and tokio's
//! blocking threads and the test harness's threads have 2 MB in all. A thread whose stack is
//! known makes that margin the parser's own, whoever calls it.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Mutex;

/// The parser thread's stack: far more than the parser's bounds need in an unoptimised build
/// (about 840 KB for the outline bound). Only the pages a parse touches are ever committed.
pub(super) const PARSER_STACK_BYTES: usize = 32 << 20;

/// Runs `parse` on a thread with [`PARSER_STACK_BYTES`] of stack and waits for it; a panic is
/// returned as its message. When no thread can be started (the process is at its limit), the
/// parse runs on the caller's thread rather than failing the section.
pub(super) fn run<T: Send>(parse: impl FnOnce() -> T + Send) -> Result<T, String> {
    let slot = Mutex::new(Some(parse));
    let take = || {
        slot.lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
            .expect("the parse runs once")
    };
    let joined = std::thread::scope(|s| {
        let spawned = std::thread::Builder::new()
            .name("onenote-parser".into())
            .stack_size(PARSER_STACK_BYTES)
            .spawn_scoped(s, || take()());
        match spawned {
            Ok(handle) => handle.join(),
            Err(e) => {
                tracing::warn!(error = %e, "no thread for the OneNote parser; parsing on the caller's thread");
                catch_unwind(AssertUnwindSafe(|| take()()))
            }
        }
    });
    joined.map_err(|panic| {
        panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "it failed on this file".into())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Recursion `depth` deep with a 4 KB frame per level (kept from being optimised away by
    /// `black_box`).
    fn recurse(depth: usize) -> usize {
        let frame = std::hint::black_box([0u8; 4096]);
        if depth == 0 {
            return frame[0] as usize;
        }
        recurse(depth - 1) + std::hint::black_box(frame[1]) as usize
    }

    #[test]
    fn a_parse_deeper_than_a_blocking_threads_stack_completes() {
        // 4 MB of frames: more than tokio's blocking threads and the test threads have (2 MB).
        let r = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(|| run(|| recurse(1024)))
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(r, Ok(0));
    }

    #[test]
    fn a_panic_is_its_message() {
        assert_eq!(
            run(|| -> u8 { panic!("bad offset") }),
            Err("bad offset".into())
        );
        let owned = run(|| -> u8 { panic!("{} bytes", 3) });
        assert_eq!(owned, Err("3 bytes".into()));
    }
}
