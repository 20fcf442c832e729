//! # jitarena-tools
//!
//! The `jitarena` command and what it is built from, over the library's stats logs and
//! allocation traces (the library itself, which a JIT links, is the `jitarena` crate):
//!
//! - [`cli`]: the command line (`stats`, `dump`, `merge`, `gen`, `replay`, `memdiff`,
//!   `summarize`, `demo`);
//! - [`diff`]: memdiff, per collection, and the gate's verdict;
//! - [`report`]: the stats tables and the diff reports (text, markdown, JSON, HTML);
//! - [`harness`]: the replay harness and its C driver (the header's inline path);
//! - [`sites`]: per-site bytes of two JITs' traces, symbolized and diffed (`jitarena sites`);
//! - [`gen`]: the RyuJIT-like workload generator;
//! - [`logtools`] and [`union`]: merge, dump, and the union of kind and phase lists;
//! - [`output`] and [`progress`]: safe output files and progress bars;
//! - [`text`]: names and numbers as people read them.
#![warn(missing_docs)]

pub mod cli;
pub mod diff;
pub mod gen;
pub mod harness;
pub mod inputs;
pub mod logtools;
pub mod output;
pub mod progress;
pub mod report;
pub mod sites;
mod sort;
pub mod stats;
pub mod text;
pub mod union;
