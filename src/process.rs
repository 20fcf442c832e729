//! The process-wide state of this copy of the library, for Rust callers, as the C entry points
//! `jitarena_log_open` and the rest give it: the stats log each finished method is appended
//! to, the allocation trace, and the aggregate of every method's counters. A program that
//! links its own copy of the library (a JIT loaded beside another) has its own. Each call
//! installs the fork handlers first (see "Process-wide state" in the header: a forked child never
//! writes to its parent's files).

use crate::error::Error;
use crate::fork;
use crate::recorder;

pub use crate::recorder::{aggregate, aggregate_enable, aggregate_reset, expand_path, MethodRef};

/// Opens the stats log at `path` (`%p`: the process id; `%m`: this copy's module), emptying
/// it at the first record; fails when a log is open, or another writer holds the file.
pub fn log_open(path: &str) -> Result<(), Error> {
    fork::install_handlers();
    recorder::log_open(path)
}

/// Flushes and closes the stats log.
pub fn log_close() -> Result<(), Error> {
    recorder::log_close()
}

/// Starts recording the allocations of arenas created from now on into a binary trace.
pub fn trace_open(path: &str) -> Result<(), Error> {
    fork::install_handlers();
    recorder::trace_open(path)
}

/// Stops recording and closes the trace.
pub fn trace_close() -> Result<(), Error> {
    recorder::trace_close()
}
