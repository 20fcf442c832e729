//! # jitarena
//!
//! A compiler arena allocator with a C ABI (`include/jitarena.h`) whose inline fast path counts
//! every allocation by kind at a cost of three additions, so that one Release build of a JIT
//! serves both throughput and memory diffs.
//!
//! - [`Arena`]: the safe Rust API over the same arena the C ABI exposes.
//! - The C ABI: `include/jitarena.h`, `include/jitarena.hpp`; link `libjitarena.a`.
//!
//! See the README for the C quick start and `docs/` for the file formats.
#![warn(missing_docs)]

pub mod arena;
mod capi;
pub mod counters;
pub mod error;

/// The shared layout, generated from `include/jitarena.h` by bindgen (see `tests/bindings_fresh.rs`).
#[allow(
    non_camel_case_types,
    non_upper_case_globals,
    dead_code,
    missing_docs,
    clippy::all
)]
pub(crate) mod sys;

pub use arena::{Arena, Config, Kind, Phase, Snapshot};
pub use counters::{Counters, Schema};
pub use error::{Error, ErrorCode};
