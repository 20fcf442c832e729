//! The replay harness: runs each method's allocation stream from a trace through the real C
//! ABI (the header's inline fast path, compiled into `src/driver/replay.c`), then writes the
//! arena's counters for that method to a stats log, as a JIT calling `jitarena_method_done`
//! would.

use std::io::BufWriter;
use std::path::{Path, PathBuf};

use crate::output::{check_not_input, OutputFile};
pub use crate::progress::Progress;
use ::jitarena::counters::Schema;
use ::jitarena::error::Error;
use ::jitarena::format::io_error;
use ::jitarena::log::{LogWriter, MethodCounts};
use ::jitarena::sys::{jitarena, jitarena_event, JITARENA_DEFAULT_PAGE_SIZE};
use ::jitarena::trace;
use ::jitarena::Arena;
use ::jitarena::Shared;

extern "C" {
    fn jitarena_replay(arena: *mut jitarena, events: *const jitarena_event, count: usize) -> usize;
    fn jitarena_replay_uncounted(
        arena: *mut jitarena,
        events: *const jitarena_event,
        count: usize,
    ) -> usize;
}

/// Runs events through the C driver's inline path into `arena` (counted, or compiled with
/// `JITARENA_NO_COUNTERS`); returns how many allocations failed. For benchmarks and tools that
/// drive an [`::jitarena::Arena`] from Rust as a C JIT would.
pub fn replay_events(arena: &::jitarena::Arena, events: &[jitarena_event], counted: bool) -> usize {
    let driver = if counted {
        jitarena_replay
    } else {
        jitarena_replay_uncounted
    };
    // SAFETY: the arena is live for the call and `Arena` is not `Sync`, so this thread is its
    // only user; `events` is a valid slice.
    unsafe { driver(arena.as_c_ptr(), events.as_ptr(), events.len()) }
}

/// The allocator variant to replay with.
#[derive(Debug, Clone)]
pub struct ReplayOptions {
    /// Page size in bytes.
    pub page_size: usize,
    /// Memory limit per method (0: none).
    pub limit_bytes: u64,
    /// Whether the inline path counts (false: the `JITARENA_NO_COUNTERS` driver).
    pub counters: bool,
    /// Whether the arenas record bytes per (phase, kind) (`kinds_by_phase` in the config), so
    /// that the log's records carry them.
    pub kinds_by_phase: bool,
    /// Show progress on standard error when it is a terminal.
    pub progress: bool,
}

impl Default for ReplayOptions {
    fn default() -> ReplayOptions {
        ReplayOptions {
            page_size: JITARENA_DEFAULT_PAGE_SIZE as usize,
            limit_bytes: 0,
            counters: true,
            kinds_by_phase: false,
            progress: false,
        }
    }
}

/// What a replay did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReplaySummary {
    /// Methods replayed.
    pub methods: u64,
    /// Allocation requests replayed.
    pub allocations: u64,
    /// Requests that failed (limit or out of memory).
    pub failed: u64,
    /// Readers' warnings (cut-short traces).
    pub warnings: Vec<String>,
}

/// Replays every method of `traces`, into the stats log `output` when given (which needs
/// counters: an uncounted replay has nothing to log). A trace's warnings (cut short, methods in
/// parts that never closed) go into the log as cut notes, so that its readers and a memory
/// diff see the loss. The output may not be one of the traces
/// or lie in a directory among them; it is written under a temporary name and renamed into
/// place when the replay succeeds, so a failed replay leaves any earlier file as it was.
pub fn replay(
    traces: &[PathBuf],
    output: Option<&Path>,
    options: &ReplayOptions,
) -> Result<ReplaySummary, Error> {
    let file = match output {
        Some(path) if !options.counters => {
            return Err(Error::new(
                ::jitarena::ErrorCode::Config,
                format!("{}: an uncounted replay has no counters to log (drop the output or the no-counters switch)", path.display()),
            ));
        }
        Some(path) => {
            check_not_input(path, traces)?;
            Some(OutputFile::create(path)?)
        }
        None => None,
    };
    let mut summary = ReplaySummary::default();
    let progress = Progress::new(options.progress, "replay");
    {
        let mut log = match &file {
            Some(file) => {
                let path = file.target();
                let writer = LogWriter::new(BufWriter::with_capacity(1 << 16, file.file()))
                    .map_err(|e| io_error(path, "write", &e))?;
                Some((path, writer))
            }
            None => None,
        };
        for (i, path) in traces.iter().enumerate() {
            progress.set_stage(format!("file {}/{}", i + 1, traces.len()));
            let mut reader = trace::open(path)?;
            replay_one(
                &mut reader,
                options,
                &mut summary,
                &progress,
                |schema, info, counts| match &mut log {
                    Some((path, w)) => w
                        .write(
                            schema,
                            info.name.as_deref(),
                            info.context,
                            info.tier.as_deref(),
                            counts,
                        )
                        .map_err(|e| io_error(path, "write", &e)),
                    None => Ok(()),
                },
            )?;
            let warnings = reader.warnings();
            // A trace cut short, or with methods in parts that never closed, lost methods:
            // the log says so (a cut note), so that a memory diff over it is INCOMPLETE
            // (`truncated`) rather than a pass over what was lost.
            if let Some((out, w)) = &mut log {
                for warning in &warnings {
                    w.write_cut_note(warning)
                        .map_err(|e| io_error(out, "write", &e))?;
                }
            }
            summary.warnings.extend(warnings);
        }
        if let Some((path, w)) = log {
            w.finish()
                .and_then(|b| b.into_inner().map_err(|e| e.into_error()))
                .map_err(|e| io_error(path, "write", &e))?;
        }
    }
    if let Some(file) = file {
        file.commit()?;
    }
    progress.finish();
    Ok(summary)
}

/// Replays one trace, handing each method's counters to `sink`. Each method's events are
/// decoded and replayed a chunk at a time ([`trace::MethodEvents`]), into one arena: memory
/// follows the trace's largest frame, not 16 bytes per event.
pub fn replay_one(
    reader: &mut trace::TraceReader,
    options: &ReplayOptions,
    summary: &mut ReplaySummary,
    progress: &Progress,
    mut sink: impl FnMut(
        &Shared<Schema>,
        &::jitarena::log::MethodInfo,
        &MethodCounts,
    ) -> Result<(), Error>,
) -> Result<(), Error> {
    let mut replayer = Replayer::new(options.clone());
    while let Some(mut method) = reader.next_events()? {
        replayer.start(method.schema())?;
        let mut failed = 0;
        while let Some(chunk) = method.next_chunk()? {
            failed += replayer.feed(chunk);
        }
        replayer.finish()?;
        sink(method.schema(), method.info(), replayer.counts())?;
        summary.methods += 1;
        summary.failed += failed as u64;
        summary.allocations += method.allocations();
        progress.add(1);
    }
    Ok(())
}

/// Replays methods one at a time through an arena of their schema (made anew when the schema
/// changes), through the C driver's inline path: whole ([`Replayer::run`]), or a chunk of
/// events at a time ([`Replayer::start`], [`Replayer::feed`], [`Replayer::finish`]), which
/// counts the same.
pub struct Replayer {
    options: ReplayOptions,
    arena: Option<(Shared<Schema>, Arena)>,
    counts: MethodCounts,
}

impl Replayer {
    /// A replayer for an allocator variant.
    pub fn new(options: ReplayOptions) -> Replayer {
        Replayer {
            options,
            arena: None,
            counts: MethodCounts::default(),
        }
    }

    /// Replays one method; afterwards [`Replayer::counts`] holds its counters (none when the
    /// replay is uncounted) and the arena is empty again. Returns the number of requests that
    /// failed.
    #[inline(never)] // a per-method function, kept whole so that profiles can name it
    pub fn run(&mut self, method: &trace::TraceMethod) -> Result<usize, Error> {
        self.start(&method.schema)?;
        let failed = self.feed(&method.events);
        self.finish()?;
        Ok(failed)
    }

    /// Starts a method of `schema`: its arena, made when the schema is not the last one's.
    pub fn start(&mut self, schema: &Shared<Schema>) -> Result<(), Error> {
        let fresh = self
            .arena
            .as_ref()
            .is_none_or(|(last, _)| !Shared::ptr_eq(last, schema));
        if fresh {
            self.arena = None;
            self.arena = Some((
                Shared::clone(schema),
                Arena::from_schema(
                    Shared::clone(schema),
                    self.options.page_size,
                    self.options.limit_bytes,
                    self.options.kinds_by_phase,
                )?,
            ));
        }
        Ok(())
    }

    /// Replays the method's next events (after [`Replayer::start`]; nothing before it) into
    /// its arena; returns how many requests failed. The arena keeps its phase and pages from
    /// one call to the next: events in chunks count as they do in one call.
    pub fn feed(&mut self, events: &[jitarena_event]) -> usize {
        let Some((_, arena)) = self.arena.as_ref() else {
            return 0;
        };
        replay_events(arena, events, self.options.counters)
    }

    /// Ends the method: its counters into [`Replayer::counts`] (none when the replay is
    /// uncounted), and the arena emptied for the next.
    pub fn finish(&mut self) -> Result<(), Error> {
        let Some((_, arena)) = self.arena.as_mut() else {
            return Ok(());
        };
        if self.options.counters {
            arena.fill_counts(&mut self.counts)?;
        } else {
            self.counts = MethodCounts::default();
        }
        arena.reset();
        Ok(())
    }

    /// The counters of the method replayed last.
    pub fn counts(&self) -> &MethodCounts {
        &self.counts
    }
}
