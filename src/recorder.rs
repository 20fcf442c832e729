//! The process-wide recorder: what `jitarena_method_done` feeds at the end of each method (the
//! aggregate, the stats log, the trace), and the count of forks that tells a child its
//! parent's files from its own. Each is process-wide state behind its own lock, taken once per
//! method, never per allocation. A JIT that links its own copy of this library has its own.
//! The API layer ([`crate::process`], the C entry points) installs the fork handlers before it
//! calls in here.
//!
//! `JITARENA_LOG` and `JITARENA_TRACE` are read with the C library's `getenv` (`std::env`
//! copies the value with an allocation that aborts when memory runs out): as for any `getenv`,
//! no other thread may change the environment (`std::env::set_var`) at the same time.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::arena_core::raw::RawArena;
use crate::counters::MethodCounts;
use crate::counters::{Counters, Schema};
use crate::error::{Error, ErrorCode};
use crate::fallible::{self, out_of_memory};
use crate::file::{self, OutFile};
use crate::format::io_error;
use crate::format::spec::VERSION_AT;
use crate::format::TRACE_VERSION;
use crate::log::LogWriter;
use crate::message::{message, Message};
use crate::shared::Shared;
use crate::sites::MethodSites;
use crate::trace::TraceWriter;
use crate::trace_buffer::TraceBuffer;

/// Who a finished method is, as passed to `jitarena_method_done`.
#[derive(Debug, Clone, Copy, Default)]
pub struct MethodRef<'a> {
    /// Full name, if known.
    pub name: Option<&'a str>,
    /// The replay tool's index, -1 if unknown.
    pub context: i64,
    /// Tier or optimization level, if known.
    pub tier: Option<&'a str>,
    /// Whether the compile failed: the log notes it instead of a record, and the aggregate and
    /// the trace leave the method out.
    pub failed: bool,
}

/// A file being written, with its (expanded) path for messages.
struct OpenFile<W> {
    path: PathBuf,
    /// The path as given, `%p` unexpanded.
    pattern: String,
    writer: W,
    /// [`forks`] when it was opened: a sink opened before a fork belongs to the parent.
    forks: u64,
}

impl<W> OpenFile<W> {
    /// Whether this process is a fork of the one that opened the file.
    fn inherited(&self) -> bool {
        self.forks != forks()
    }
}

/// An output that may be opened explicitly or, at first use, from an environment variable.
struct Output<W> {
    open: Option<OpenFile<W>>,
    env_consulted: bool,
    /// Why the file that records should go to could not be opened (the one the environment
    /// variable names, or a per-process log reopened in a forked child): every record is
    /// refused with it, so that a log that cannot be written keeps saying so.
    open_failed: Option<Error>,
}

impl<W> Output<W> {
    const fn new() -> Output<W> {
        Output {
            open: None,
            env_consulted: false,
            open_failed: None,
        }
    }
}

static LOG: Mutex<Output<LogWriter<OutFile>>> = Mutex::new(Output::new());
static TRACE: Mutex<Output<TraceWriter<OutFile>>> = Mutex::new(Output::new());
static RECORDING: AtomicBool = AtomicBool::new(false);
/// Whether `jitarena_method_done` may write a log record: a log is open, or `JITARENA_LOG`
/// has not been consulted yet, or it named a file that could not be opened. Lets the C entry
/// point skip decoding the method's strings.
static LOG_MAY_WRITE: AtomicBool = AtomicBool::new(true);
/// Whether `JITARENA_TRACE` was consulted.
static TRACE_ENV_DONE: AtomicBool = AtomicBool::new(false);
/// Whether `method_done` folds methods into the aggregate ([`aggregate_enable`]).
static AGGREGATE_ON: AtomicBool = AtomicBool::new(false);

/// The sum of every finished method's counters, per schema.
struct Aggregate {
    schema: Shared<Schema>,
    methods: u64,
    counters: Counters,
}

static AGGREGATE: Mutex<Vec<Aggregate>> = Mutex::new(Vec::new());

/// Locks a mutex of this module, ignoring poisoning as the `parking_lot` locks these replaced
/// did: a panic under one of them (caught at the C boundary) can leave at most one method's
/// sums partly added, never a log record half-defined (a writer takes its dictionary entries
/// only after their frames are written), and failing every later call would be worse.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The locks of the process-wide state of this module, held across a `fork` so that the
/// child gets them unlocked and their state whole.
// Only the fork handlers (Unix) take these.
#[cfg_attr(not(unix), allow(dead_code))]
pub(crate) struct Held {
    _aggregate: MutexGuard<'static, Vec<Aggregate>>,
    _log: MutexGuard<'static, Output<LogWriter<OutFile>>>,
    _trace: MutexGuard<'static, Output<TraceWriter<OutFile>>>,
}

/// Takes every lock of this module, in one order.
#[cfg_attr(not(unix), allow(dead_code))] // the fork handlers' (Unix)
pub(crate) fn lock_all() -> Held {
    Held {
        _aggregate: lock(&AGGREGATE),
        _log: lock(&LOG),
        _trace: lock(&TRACE),
    }
}

/// Forks between the process that loaded the library and this one (counted in the child).
static FORKS: AtomicU64 = AtomicU64::new(0);

/// Forks between the process that loaded the library and this one: a file opened when the
/// count was different belongs to an ancestor.
pub(crate) fn forks() -> u64 {
    FORKS.load(Ordering::Acquire)
}

/// In a forked child (from the fork handler, so only atomic operations): counts the fork, and
/// arenas created from now on do not record, since the trace belongs to the parent.
#[cfg_attr(not(unix), allow(dead_code))] // the fork handlers' (Unix)
pub(crate) fn forked_into_child() {
    FORKS.fetch_add(1, Ordering::AcqRel);
    RECORDING.store(false, Ordering::Release);
}

/// `%p` in a path becomes the process id, and `%m` the name of the module (shared library,
/// DLL or executable) that holds this copy of the library, as `file::push_module_name` gives
/// it: two JITs loaded side by side, each with its copy, then name two files from one pattern.
/// Fails when memory runs out, or for `%m` when the module cannot be found.
pub fn expand_path(path: &str) -> Result<PathBuf, Error> {
    // By pieces rather than `str::replace`, whose substring searcher would add 4 KB of code to
    // every JIT that links the library (see BENCHMARKS.md, "Footprint").
    let mut out = Message::new();
    let mut rest = path;
    while let Some(at) = find_marker(rest) {
        out.push(rest.get(..at).unwrap_or(""));
        if rest.as_bytes().get(at + 1) == Some(&b'm') {
            if !file::push_module_name(&mut out) {
                let why = "%m: the module that holds this copy of jitarena cannot be found";
                return Err(Error::new(ErrorCode::Config, message!(path, ": ", why)));
            }
        } else {
            out.push(std::process::id());
        }
        rest = rest.get(at + 2..).unwrap_or("");
    }
    out.push(rest);
    match out.into_whole() {
        Some(path) => Ok(PathBuf::from(path)),
        None => Err(out_of_memory("no memory for the file's name")),
    }
}

/// Where the first `%p` or `%m` of `path` starts.
fn find_marker(path: &str) -> Option<usize> {
    path.as_bytes()
        .windows(2)
        .position(|pair| pair == b"%p" || pair == b"%m")
}

/// Where the first `%p` of `path` starts.
fn find_pid_marker(path: &str) -> Option<usize> {
    path.as_bytes().windows(2).position(|pair| pair == b"%p")
}

fn create(path: &Path) -> Result<OutFile, Error> {
    OutFile::create(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::WouldBlock => Error::new(
            ErrorCode::Io,
            message!(
                path,
                ": another writer has this file open (another copy of jitarena in this process, \
                 as when a replay tool loads two JITs, or another process); two writers would \
                 overwrite each other's records. Give each its own name: %m (the module that \
                 holds this copy of jitarena), %p (the process id), or, for two JITs of one \
                 file name, each JIT's own jitarena_log_open from its own JIT config"
            ),
        ),
        _ => io_error(path, "create", &e),
    })
}

/// Cuts `file` to `len` bytes and moves its position there: removes a record cut short.
fn truncate_file(file: &mut OutFile, len: u64) -> std::io::Result<()> {
    file.truncate(len)
}

fn open_into<W>(
    out: &mut Output<W>,
    pattern: &str,
    what: &str,
    make: impl FnOnce(OutFile) -> std::io::Result<W>,
) -> Result<(), Error> {
    out.env_consulted = true;
    out.open_failed = None;
    if let Some(sink) = out.open.as_ref().filter(|sink| !sink.inherited()) {
        return Err(Error::new(
            ErrorCode::State,
            message!(
                "a ",
                what,
                " is already open (",
                sink.path.as_path(),
                "); close it first"
            ),
        ));
    }
    let opened = (|| -> Result<OpenFile<W>, Error> {
        let path = expand_path(pattern)?;
        let no_memory = || out_of_memory("no memory for a name");
        let pattern = fallible::string(pattern).ok_or_else(no_memory)?;
        let file = create(&path)?;
        let writer = make(file).map_err(|e| io_error(&path, "write", &e))?;
        Ok(OpenFile {
            path,
            pattern,
            writer,
            forks: forks(),
        })
    })();
    // A parent's file is let go of (this process only closes its descriptor) once the new
    // one is open, or on a failure other than a shortage of memory: when memory is what ran
    // out, the output stays as it was, and opening can be tried again.
    match opened {
        Ok(sink) => out.open = Some(sink),
        Err(e) if e.code == ErrorCode::OutOfMemory => return Err(e),
        Err(e) => {
            out.open = None;
            return Err(e);
        }
    }
    Ok(())
}

fn close_from<W>(
    out: &mut Output<W>,
    what: &str,
    finish: impl FnOnce(W) -> std::io::Result<()>,
) -> Result<(), Error> {
    out.env_consulted = true;
    out.open_failed = None;
    let sink = out
        .open
        .take()
        .ok_or_else(|| Error::new(ErrorCode::State, message!("no ", what, " is open")))?;
    if sink.inherited() {
        return Ok(()); // the parent's file: nothing of this process is in it
    }
    finish(sink.writer).map_err(|e| io_error(&sink.path, "close", &e))
}

/// The error for a record refused because this process is a fork of the one that opened
/// the file.
fn forked_error<W>(sink: &OpenFile<W>, what: &str) -> Error {
    Error::new(
        ErrorCode::State,
        message!(
            sink.path.as_path(),
            ": this process (",
            std::process::id(),
            ") is a fork of the one that opened this ",
            what,
            "; a forked child does not write to its parent's ",
            what,
            " (open its own in the child)"
        ),
    )
}

/// Writes one record with `write`; on failure, removes what reached the file of it so that
/// the file stays readable, and says whether later records can still be written.
fn append<W>(
    sink: &mut OpenFile<W>,
    what: &str,
    torn: impl FnOnce(&W) -> Option<(u64, u64)>,
    write: impl FnOnce(&mut W) -> std::io::Result<()>,
    why: impl FnOnce(&W) -> Option<&'static str>,
    remove_torn: impl FnOnce(&mut W) -> std::io::Result<()>,
) -> Result<(), Error> {
    if sink.inherited() {
        return Err(forked_error(sink, what));
    }
    // A writer that waits on a record cut short refuses the record: said here, from the
    // numbers, rather than from the writer's error, whose text would take an allocation that
    // cannot fail gracefully.
    let refused = torn(&sink.writer);
    let failed = match refused {
        Some(_) => None,
        None => match write(&mut sink.writer) {
            Ok(()) => return Ok(()),
            Err(e) => Some(e),
        },
    };
    let why = failed.as_ref().and_then(|_| why(&sink.writer));
    let removed = remove_torn(&mut sink.writer);
    Err(append_error(
        sink.path.as_path(),
        what,
        Appended {
            failed,
            refused,
            why,
            removed,
        },
    ))
}

/// What became of a record [`append`] could not write.
struct Appended {
    /// The write's error, if it was tried.
    failed: Option<std::io::Error>,
    /// A record cut short earlier, which made the writer refuse this one: its bytes and the
    /// end of the last whole record.
    refused: Option<(u64, u64)>,
    /// Why the writer refused the record, when it says.
    why: Option<&'static str>,
    /// Whether what reached the file of it was removed.
    removed: std::io::Result<()>,
}

/// [`append`]'s error, out of line: one copy for every kind of file.
#[cold]
#[inline(never)]
fn append_error(path: &std::path::Path, what: &str, appended: Appended) -> Error {
    let Appended {
        failed,
        refused,
        why,
        removed,
    } = appended;
    let code = match &failed {
        Some(e) if e.kind() == std::io::ErrorKind::OutOfMemory => ErrorCode::OutOfMemory,
        _ => ErrorCode::Io,
    };
    // One message, whose allocation cannot abort: memory may be what ran out.
    let mut m = Message::new();
    m.push(path)
        .push(": cannot append a record to this ")
        .push(what)
        .push(": ");
    match (&failed, refused) {
        (Some(e), _) => match why {
            Some(why) => m.push(crate::log::REFUSED).push(why),
            None => m.push(e),
        },
        (None, Some((torn, good))) => m
            .push("an earlier record was cut short (")
            .push(torn)
            .push(" of its bytes follow the last whole record, which ends at byte ")
            .push(good)
            .push(") and could not be removed, so no record is written after it"),
        (None, None) => m.push("refused"),
    };
    match removed {
        Ok(()) => m.push(" (the record is not in the file; the records before it are intact)"),
        Err(cut) => m
            .push("; part of the record reached the file and could not be removed (")
            .push(&cut)
            .push("), so every later record is refused; the records before it are intact"),
    };
    Error::new(code, m.into_string())
}

/// Opens the stats log at `path` (`%p`: the process id), truncating it.
pub fn log_open(path: &str) -> Result<(), Error> {
    let mut out = lock(&LOG);
    let result = open_into(&mut out, path, "stats log", LogWriter::new);
    LOG_MAY_WRITE.store(out.open.is_some(), Ordering::Release);
    result
}

/// Flushes and closes the stats log.
pub fn log_close() -> Result<(), Error> {
    let mut out = lock(&LOG);
    let result = close_from(&mut out, "stats log", |w| w.finish().map(drop));
    LOG_MAY_WRITE.store(false, Ordering::Release);
    result
}

/// Whether ending a method with this arena may write its name anywhere (a log is open or may
/// open from the environment, or the arena records a trace).
/// Whether a method's end feeds nothing: no aggregate, no log that may write, no trace (a
/// throughput run).
#[inline]
pub(crate) fn feeds_nothing(arena: &RawArena) -> bool {
    !AGGREGATE_ON.load(Ordering::Relaxed) && !wants_method_info(arena)
}

pub(crate) fn wants_method_info(arena: &RawArena) -> bool {
    LOG_MAY_WRITE.load(Ordering::Acquire) || arena.trace.is_some()
}

/// Starts recording the allocations of arenas created from now on into a binary trace.
pub fn trace_open(path: &str) -> Result<(), Error> {
    TRACE_ENV_DONE.store(true, Ordering::Release);
    open_into(&mut lock(&TRACE), path, "trace", trace_writer)?;
    RECORDING.store(true, Ordering::Release);
    Ok(())
}

/// A trace's writer for `file`: one that may write methods in parts.
fn trace_writer(file: OutFile) -> std::io::Result<TraceWriter<OutFile>> {
    let late = file.is_regular();
    TraceWriter::for_parts(file, late)
}

/// Stops recording and closes the trace.
pub fn trace_close() -> Result<(), Error> {
    RECORDING.store(false, Ordering::Release);
    TRACE_ENV_DONE.store(true, Ordering::Release);
    close_from(&mut lock(&TRACE), "trace", |w| w.finish().map(drop))
}

/// Whether arenas created now record a trace (consults `JITARENA_TRACE` the first time).
/// Fails only when memory for opening the trace that `JITARENA_TRACE` names runs out; the
/// next call tries again. Another failure to open it is said on the standard error, once.
pub(crate) fn trace_recording() -> Result<bool, Error> {
    if !TRACE_ENV_DONE.load(Ordering::Acquire) {
        let mut out = lock(&TRACE);
        if !out.env_consulted {
            out.env_consulted = true;
            let opened = match file::env_var(c"JITARENA_TRACE") {
                Ok(Some(path)) => open_into(&mut out, &path, "trace", trace_writer).map(Some),
                Ok(None) => Ok(None),
                Err(()) => Err(out_of_memory("no memory for the value of JITARENA_TRACE")),
            };
            match opened {
                Ok(Some(())) => RECORDING.store(true, Ordering::Release),
                Ok(None) => {}
                // Memory may be back for the next arena: it consults the variable again.
                Err(e) if e.code == ErrorCode::OutOfMemory => {
                    out.env_consulted = false;
                    return Err(e);
                }
                Err(e) => {
                    let text = message!("jitarena: JITARENA_TRACE: ", e.message.as_ref());
                    file::warn(text.as_str());
                }
            }
        }
        TRACE_ENV_DONE.store(true, Ordering::Release);
    }
    Ok(RECORDING.load(Ordering::Acquire))
}

/// Ends a method: folds its counters into the aggregate, appends its record to the stats log
/// and its events to the trace, where those are open.
pub(crate) fn method_done(arena: &mut RawArena, method: MethodRef<'_>) -> Result<(), Error> {
    let aggregate = AGGREGATE_ON.load(Ordering::Relaxed);
    if !aggregate && !wants_method_info(arena) {
        // A throughput run: nothing reads this method's counters.
        return Ok(());
    }
    // The arena's own buffers, taken out while the arena is read into them.
    let mut counts = std::mem::take(&mut arena.method_counts);
    let done = method_done_with(arena, method, aggregate, &mut counts);
    arena.method_counts = counts;
    done
}

fn method_done_with(
    arena: &mut RawArena,
    method: MethodRef<'_>,
    aggregate: bool,
    counts: &mut MethodCounts,
) -> Result<(), Error> {
    if method.failed {
        // A failed compile: noted in the log, its counters and events are no method's.
        if let Some(events) = arena.trace.as_mut() {
            events.clear();
        }
        arena.trace_short = false;
        return append_log(&arena.schema, arena.build.as_deref(), method, None);
    }
    arena.fill_counts(counts)?;
    // Each goes on when another fails: the aggregate counts the method even when its record
    // cannot be written, and the other way round. The log's failure is the one returned
    // first: it says whether the record is in the file.
    let folded = match aggregate {
        true => fold(arena, counts),
        false => Ok(()),
    };
    let logged = append_log(&arena.schema, arena.build.as_deref(), method, Some(counts));
    let traced = match arena.trace.as_mut() {
        Some(events) => append_trace(
            &arena.schema,
            method,
            events,
            &mut arena.trace_sites,
            arena.trace_short,
        ),
        None => Ok(()),
    };
    arena.trace_short = false;
    logged.and(traced).and(folded)
}

/// Adds a method to the aggregate of its schema; fails, adding nothing, only when memory for
/// a new schema's aggregate runs out.
fn fold(arena: &RawArena, counts: &MethodCounts) -> Result<(), Error> {
    let schema = &arena.schema;
    let mut all = lock(&AGGREGATE);
    let i = match all
        .iter()
        .position(|a| Shared::ptr_eq(&a.schema, schema) || *a.schema == **schema)
    {
        Some(i) => i,
        None => {
            let no_memory = || out_of_memory("no memory for the aggregate of a new schema");
            let fresh = Aggregate {
                schema: Shared::clone(schema),
                methods: 0,
                counters: Counters::try_zeroed(schema).ok_or_else(no_memory)?,
            };
            fallible::push(&mut all, fresh).map_err(|_| no_memory())?;
            all.len() - 1
        }
    };
    let Some(a) = all.get_mut(i) else {
        return Ok(()); // `i` was found or pushed just above
    };
    a.methods += 1;
    let c = &mut a.counters;
    arena.add_kinds_to(&mut c.kind_bytes, &mut c.kind_count);
    for &(slot, bytes) in &counts.phases {
        if let Some(sum) = c.phase_bytes.get_mut(slot as usize) {
            *sum += bytes;
        }
    }
    c.used_bytes += counts.used_bytes;
    c.reserved_bytes += counts.reserved_bytes;
    c.page_count += counts.page_count;
    c.largest_alloc = c.largest_alloc.max(counts.largest_alloc);
    c.limit_hit |= counts.limit_hit;
    Ok(())
}

/// Appends a method's record to the stats log, or (`counts` `None`) the note of its failed
/// compile.
fn append_log(
    schema: &Shared<Schema>,
    build: Option<&str>,
    m: MethodRef<'_>,
    counts: Option<&MethodCounts>,
) -> Result<(), Error> {
    if !LOG_MAY_WRITE.load(Ordering::Acquire) {
        return Ok(());
    }
    let mut out = lock(&LOG);
    if out.open.is_none() && !out.env_consulted {
        out.env_consulted = true;
        let path = file::env_var(c"JITARENA_LOG").map_err(|()| {
            out.env_consulted = false; // memory may be back for the next record
            out_of_memory("no memory for the value of JITARENA_LOG")
        })?;
        match path {
            Some(path) => match open_into(&mut out, &path, "stats log", LogWriter::new) {
                Ok(()) => {}
                // Memory may be back for the next record: it opens the log again.
                Err(e) if e.code == ErrorCode::OutOfMemory => {
                    out.env_consulted = false;
                    return Err(e);
                }
                Err(e) => {
                    // Said once here too, for a JIT that does not read the calls' results.
                    let text = message!("jitarena: JITARENA_LOG: ", e.message.as_ref());
                    file::warn(text.as_str());
                    out.open_failed = Some(e);
                }
            },
            None => LOG_MAY_WRITE.store(false, Ordering::Release),
        }
    }
    if let Some(sink) = out.open.as_ref().filter(|s| s.inherited()) {
        // A log named per process (`%p`) gets a file of this forked child's own. When memory
        // runs out, the parent's sink stays, and the next record tries again.
        if find_pid_marker(&sink.pattern).is_some() {
            let no_memory = || out_of_memory("no memory for the name of this process's log");
            let pattern = fallible::string(&sink.pattern).ok_or_else(no_memory)?;
            match open_into(&mut out, &pattern, "stats log", LogWriter::new) {
                Ok(()) => {}
                Err(e) if e.code == ErrorCode::OutOfMemory => return Err(e),
                Err(e) => out.open_failed = Some(e),
            }
        }
    }
    if let Some(e) = &out.open_failed {
        let message = message!(e.message.as_ref(), " (no record is logged)");
        return Err(Error::new(e.code, message));
    }
    let Some(sink) = out.open.as_mut() else {
        return Ok(());
    };
    append(
        sink,
        "stats log",
        LogWriter::torn,
        |w| {
            if let Some(build) = build {
                w.note_build(build)?;
            }
            match counts {
                Some(counts) => w.write_counts(schema, m.name, m.context, m.tier, counts),
                None => w.note_failed(m.name, m.context, m.tier),
            }
        },
        LogWriter::refusal,
        |w| w.remove_torn(truncate_file),
    )
}

/// Appends a method's events to the trace: in its one frame, or, when parts of it were
/// written, in its closing frame (none when a part could not be written, or events were
/// lost: its parts are then left unclosed, which readers drop).
fn append_trace(
    schema: &Shared<Schema>,
    m: MethodRef<'_>,
    events: &mut TraceBuffer,
    sites: &mut MethodSites,
    short: bool,
) -> Result<(), Error> {
    let mut out = lock(&TRACE);
    let result = match out.open.as_mut() {
        // Only when the method would be written: no trace open, or a parent's, says so.
        Some(sink) if short && !sink.inherited() => {
            let why = "no memory to record every event of this method: its trace is not written";
            Err(out_of_memory(why))
        }
        Some(sink) if !sink.inherited() && (events.broken.is_some() || events.lost) => {
            Err(lost_method(sink, events))
        }
        Some(sink) => append(
            sink,
            "trace",
            TraceWriter::torn,
            |w| match events.parts {
                0 => {
                    w.write_events_sited(schema, m.name, m.context, m.tier, events.events(), sites)
                }
                _ => w.write_close(schema, (m.name, m.context, m.tier), events, sites),
            },
            |_| None,
            |w| w.remove_torn(truncate_file),
        ),
        None => Ok(()),
    };
    events.clear();
    sites.clear();
    result
}

/// Why a method whose parts could not all be written is not in the trace.
fn lost_method(sink: &OpenFile<TraceWriter<OutFile>>, events: &mut TraceBuffer) -> Error {
    match events.broken.take() {
        Some(e) => {
            let text = message!(
                e.message.as_ref(),
                "; this method was being written in parts: its closing frame is not written, \
                 and readers drop its parts"
            );
            Error::new(e.code, text)
        }
        None => Error::new(
            ErrorCode::Io,
            message!(
                sink.path.as_path(),
                ": events of this method were recorded while no trace was open, so its trace \
                 is not written"
            ),
        ),
    }
}

/// While a method is recorded: writes the events its arena holds, once they fill the
/// buffer, as a part of the method (`docs/formats.md`, "Methods in parts"). A part that
/// cannot be written (or that nothing would read: no trace open, events missing) is dropped,
/// and the method writes nothing more; its end says why.
#[cold]
#[inline(never)]
pub(crate) fn trace_part(arena: &mut RawArena) {
    let Some(events) = arena.trace.as_mut().filter(|e| e.full()) else {
        return;
    };
    let sites = &mut arena.trace_sites;
    if arena.trace_short || events.broken.is_some() || events.lost {
        events.drop_held();
        sites.part_written();
        return;
    }
    let mut out = lock(&TRACE);
    let Some(sink) = out.open.as_mut().filter(|sink| !sink.inherited()) else {
        events.drop_held();
        sites.part_written();
        return;
    };
    if events.stream == 0 {
        events.stream = STREAMS.fetch_add(1, Ordering::Relaxed);
    }
    let written = append(
        sink,
        "trace",
        TraceWriter::torn,
        |w| w.write_part(events, sites, |f| f.write_at(VERSION_AT, &[TRACE_VERSION])),
        |_| None,
        |w| w.remove_torn(truncate_file),
    );
    match written {
        Ok(()) => events.part_written(sites.addrs().len()),
        Err(e) => {
            events.drop_held();
            events.broken = Some(e);
        }
    }
    sites.part_written();
}

/// The next stream id of a method written in parts: unique in the process.
static STREAMS: AtomicU64 = AtomicU64::new(1);

/// The process-wide aggregate: per schema, the number of methods and their summed counters.
pub fn aggregate() -> Vec<(Shared<Schema>, u64, Counters)> {
    lock(&AGGREGATE)
        .iter()
        .map(|a| (Shared::clone(&a.schema), a.methods, a.counters.clone()))
        .collect()
}

/// The wrapping sum of `f` over the aggregate's schemas (their schema, methods and counters),
/// read under its lock: copies nothing.
pub(crate) fn aggregate_sum(f: &dyn Fn(&Schema, u64, &Counters) -> u64) -> u64 {
    lock(&AGGREGATE).iter().fold(0, |sum, a| {
        sum.wrapping_add(f(&a.schema, a.methods, &a.counters))
    })
}

/// Turns the process-wide aggregate on or off for the methods ended from now on; returns
/// whether it was on. Off by default, so that a run that reads no aggregate pays nothing for
/// it; the sums gathered so far are kept either way.
pub fn aggregate_enable(on: bool) -> bool {
    AGGREGATE_ON.swap(on, Ordering::AcqRel)
}

/// Clears the process-wide aggregate.
pub fn aggregate_reset() {
    lock(&AGGREGATE).clear();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expand_path_puts_the_process_id_for_every_marker() {
        let pid = std::process::id().to_string();
        for path in [
            "",
            "log.jas",
            "%p",
            "log-%p.jas",
            "%p/%p-%p",
            "a%%pb",
            "%%p%",
            "100%",
            "%P-%q-%",
            "é%pé",
        ] {
            assert_eq!(
                expand_path(path).unwrap(),
                PathBuf::from(path.replace("%p", &pid)),
                "{path}"
            );
            assert_eq!(
                find_pid_marker(path).is_some(),
                path.contains("%p"),
                "{path}"
            );
        }
    }

    #[test]
    fn expand_path_puts_this_module_name_for_m() {
        // In a test, the module that holds the library is the test program.
        let exe = std::env::current_exe().unwrap();
        let stem = exe.file_name().unwrap().to_str().unwrap().to_string();
        let stem = stem.strip_suffix(".exe").unwrap_or(&stem);
        let pid = std::process::id();
        assert_eq!(
            expand_path("logs/%m-%p.jas").unwrap(),
            PathBuf::from(format!("logs/{stem}-{pid}.jas"))
        );
        assert_eq!(
            expand_path("%m%m").unwrap(),
            PathBuf::from(format!("{stem}{stem}"))
        );
    }
}
