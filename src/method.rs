//! The end of a method: the process-wide aggregate, the stats log and the trace recorder that
//! `jitarena_method_done` feeds. Each is process-wide state behind its own lock, taken once per
//! method, never per allocation. A JIT that links its own copy of this library has its own.

use std::cell::RefCell;
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Once};

use parking_lot::Mutex;

use crate::arena::raw::RawArena;
use crate::counters::{Counters, Schema};
use crate::error::{Error, ErrorCode};
use crate::format::io_error;
use crate::log::{LogWriter, MethodCounts};
use crate::trace::TraceWriter;

/// Who a finished method is, as passed to `jitarena_method_done`.
#[derive(Debug, Clone, Copy, Default)]
pub struct MethodRef<'a> {
    /// Full name, if known.
    pub name: Option<&'a str>,
    /// The replay tool's index, -1 if unknown.
    pub context: i64,
    /// Tier or optimization level, if known.
    pub tier: Option<&'a str>,
}

/// A file being written, with its (expanded) path for messages.
struct Sink<W> {
    path: PathBuf,
    writer: W,
}

/// An output that may be opened explicitly or, at first use, from an environment variable.
struct Output<W> {
    open: Option<Sink<W>>,
    env_consulted: bool,
}

impl<W> Output<W> {
    const fn new() -> Output<W> {
        Output {
            open: None,
            env_consulted: false,
        }
    }
}

static LOG: Mutex<Output<LogWriter<File>>> = Mutex::new(Output::new());
static TRACE: Mutex<Output<TraceWriter<File>>> = Mutex::new(Output::new());
static RECORDING: AtomicBool = AtomicBool::new(false);
/// Whether `jitarena_method_done` may write a log record: a log is open, or `JITARENA_LOG`
/// has not been consulted yet. Lets the C entry point skip decoding the method's strings.
static LOG_MAY_WRITE: AtomicBool = AtomicBool::new(true);
static TRACE_ENV: Once = Once::new();

/// The sum of every finished method's counters, per schema.
struct Aggregate {
    schema: Arc<Schema>,
    methods: u64,
    counters: Counters,
}

static AGGREGATE: Mutex<Vec<Aggregate>> = Mutex::new(Vec::new());

thread_local! {
    static SCRATCH: RefCell<MethodCounts> = RefCell::new(MethodCounts::default());
}

/// `%p` in a path becomes the process id.
pub fn expand_path(path: &str) -> PathBuf {
    PathBuf::from(path.replace("%p", &std::process::id().to_string()))
}

fn create(path: &Path) -> Result<File, Error> {
    OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)
        .map_err(|e| io_error(path, "create", &e))
}

fn open_into<W>(
    out: &mut Output<W>,
    path: &str,
    what: &str,
    make: impl FnOnce(File) -> std::io::Result<W>,
) -> Result<(), Error> {
    out.env_consulted = true;
    if let Some(sink) = &out.open {
        return Err(Error::new(
            ErrorCode::State,
            format!(
                "a {what} is already open ({}); close it first",
                sink.path.display()
            ),
        ));
    }
    let path = expand_path(path);
    let file = create(&path)?;
    let writer = make(file).map_err(|e| io_error(&path, "write", &e))?;
    out.open = Some(Sink { path, writer });
    Ok(())
}

fn close_from<W>(
    out: &mut Output<W>,
    what: &str,
    finish: impl FnOnce(W) -> std::io::Result<()>,
) -> Result<(), Error> {
    out.env_consulted = true;
    let sink = out
        .open
        .take()
        .ok_or_else(|| Error::new(ErrorCode::State, format!("no {what} is open")))?;
    finish(sink.writer).map_err(|e| io_error(&sink.path, "close", &e))
}

/// Opens the stats log at `path` (`%p`: the process id), truncating it.
pub fn log_open(path: &str) -> Result<(), Error> {
    let mut out = LOG.lock();
    let result = open_into(&mut out, path, "stats log", LogWriter::new);
    LOG_MAY_WRITE.store(out.open.is_some(), Ordering::Release);
    result
}

/// Flushes and closes the stats log.
pub fn log_close() -> Result<(), Error> {
    let mut out = LOG.lock();
    let result = close_from(&mut out, "stats log", |w| w.finish().map(drop));
    LOG_MAY_WRITE.store(false, Ordering::Release);
    result
}

/// Whether ending a method with this arena may write its name anywhere (a log is open or may
/// open from the environment, or the arena records a trace).
pub(crate) fn wants_method_info(arena: &RawArena) -> bool {
    LOG_MAY_WRITE.load(Ordering::Acquire) || arena.trace.is_some()
}

/// Starts recording the allocations of arenas created from now on into a binary trace.
pub fn trace_open(path: &str) -> Result<(), Error> {
    TRACE_ENV.call_once(|| {});
    open_into(&mut TRACE.lock(), path, "trace", TraceWriter::new)?;
    RECORDING.store(true, Ordering::Release);
    Ok(())
}

/// Stops recording and closes the trace.
pub fn trace_close() -> Result<(), Error> {
    RECORDING.store(false, Ordering::Release);
    close_from(&mut TRACE.lock(), "trace", |w| w.finish().map(drop))
}

/// Whether arenas created now record a trace (consults `JITARENA_TRACE` the first time).
pub(crate) fn trace_recording() -> bool {
    TRACE_ENV.call_once(|| {
        let mut out = TRACE.lock();
        if !out.env_consulted {
            out.env_consulted = true;
            if let Some(path) =
                std::env::var_os("JITARENA_TRACE").and_then(|p| p.into_string().ok())
            {
                match open_into(&mut out, &path, "trace", TraceWriter::new) {
                    Ok(()) => RECORDING.store(true, Ordering::Release),
                    Err(e) => eprintln!("jitarena: JITARENA_TRACE: {e}"),
                }
            }
        }
    });
    RECORDING.load(Ordering::Acquire)
}

/// Ends a method: folds its counters into the aggregate, appends its record to the stats log
/// and its events to the trace, where those are open.
pub(crate) fn method_done(arena: &mut RawArena, method: MethodRef<'_>) -> Result<(), Error> {
    SCRATCH.with(|scratch| {
        let mut counts = scratch.borrow_mut();
        arena.fill_counts(&mut counts);
        fold(arena, &counts);
        let logged = append_log(&arena.schema, method, &counts);
        let traced = match arena.trace.as_mut() {
            Some(events) => append_trace(&arena.schema, method, events),
            None => Ok(()),
        };
        logged.and(traced)
    })
}

fn fold(arena: &RawArena, counts: &MethodCounts) {
    let schema = &arena.schema;
    let mut all = AGGREGATE.lock();
    let i = match all
        .iter()
        .position(|a| Arc::ptr_eq(&a.schema, schema) || *a.schema == **schema)
    {
        Some(i) => i,
        None => {
            all.push(Aggregate {
                schema: Arc::clone(schema),
                methods: 0,
                counters: Counters::zeroed(schema),
            });
            all.len() - 1
        }
    };
    let a = &mut all[i];
    a.methods += 1;
    let c = &mut a.counters;
    arena.add_kinds_to(&mut c.kind_bytes, &mut c.kind_count);
    for &(slot, bytes) in &counts.phases {
        c.phase_bytes[slot as usize] += bytes;
    }
    c.used_bytes += counts.used_bytes;
    c.reserved_bytes += counts.reserved_bytes;
    c.page_count += counts.page_count;
    c.largest_alloc = c.largest_alloc.max(counts.largest_alloc);
    c.limit_hit |= counts.limit_hit;
}

fn append_log(schema: &Arc<Schema>, m: MethodRef<'_>, counts: &MethodCounts) -> Result<(), Error> {
    if !LOG_MAY_WRITE.load(Ordering::Acquire) {
        return Ok(());
    }
    let mut out = LOG.lock();
    if out.open.is_none() && !out.env_consulted {
        out.env_consulted = true;
        if let Some(path) = std::env::var_os("JITARENA_LOG").and_then(|p| p.into_string().ok()) {
            let opened = open_into(&mut out, &path, "stats log", LogWriter::new);
            LOG_MAY_WRITE.store(out.open.is_some(), Ordering::Release);
            opened?;
        } else {
            LOG_MAY_WRITE.store(false, Ordering::Release);
        }
    }
    let Some(sink) = out.open.as_mut() else {
        return Ok(());
    };
    sink.writer
        .write(schema, m.name, m.context, m.tier, counts)
        .map_err(|e| io_error(&sink.path, "append a record to", &e))
}

fn append_trace(
    schema: &Arc<Schema>,
    m: MethodRef<'_>,
    events: &mut Vec<crate::sys::jitarena_event>,
) -> Result<(), Error> {
    let mut out = TRACE.lock();
    let result = match out.open.as_mut() {
        Some(sink) => sink
            .writer
            .write(schema, m.name, m.context, m.tier, events)
            .map_err(|e| io_error(&sink.path, "append a method to", &e)),
        None => Ok(()),
    };
    events.clear();
    result
}

/// The process-wide aggregate: per schema, the number of methods and their summed counters.
pub fn aggregate() -> Vec<(Arc<Schema>, u64, Counters)> {
    AGGREGATE
        .lock()
        .iter()
        .map(|a| (Arc::clone(&a.schema), a.methods, a.counters.clone()))
        .collect()
}

/// Clears the process-wide aggregate.
pub fn aggregate_reset() {
    AGGREGATE.lock().clear();
}
