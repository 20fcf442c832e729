//! The stats log: one checksummed record of counters per compiled method, preceded by the
//! schema (kind and phase names) and tier names it refers to. Layout: `docs/formats.md`.

mod copy;
mod reader;
mod visit;
mod writer;
pub use crate::counters::{checked_sum, MethodCounts, MethodInfo, MethodRecord};
pub use crate::format::dictionary::{NAME_SHOWN_MAX, TIER_SHOWN_MAX};
pub use copy::{CopyableRecord, RecordBatch};
pub use reader::{
    add_checked, read_all, sum_too_large, FailedCompile, LogReader, Mark, ReaderDictionary,
};
pub use visit::CountsVisitor;
pub use writer::LogWriter;
pub(crate) use writer::REFUSED;
