//! Allocation traces: every request of every method, in order, with phase changes. Two forms:
//! the binary trace (the jitarena container, written by `JITARENA_TRACE` recording and by
//! `jitarena gen --trace`) and the plain text trace (`method`, `phase`, `alloc` lines, for
//! traces recorded by other tools). `open` reads either. Layouts: `docs/formats.md`.

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use crate::counters::MethodInfo;
use crate::counters::Schema;
use crate::error::{Error, ErrorCode};
use crate::format::dictionary::DictionaryReader;
use crate::format::writer::FrameWriter;
use crate::format::{self, put_varint, Content, FrameReader, Malformed, Payload, Source};
use crate::shared::Shared;
use crate::sys::{
    jitarena_event as Event, JITARENA_EVENT_ALLOC, JITARENA_EVENT_PHASE, JITARENA_MAX_KINDS,
    JITARENA_MAX_PHASES, JITARENA_NO_PHASE,
};

use crate::format::spec::FRAME_EVENTS;

/// One method of a trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceMethod {
    /// The kind and phase names the events refer to.
    pub schema: Shared<Schema>,
    /// Who.
    pub info: MethodInfo,
    /// Its allocations and phase changes, in order.
    pub events: Vec<Event>,
}

/// An allocation event.
pub fn alloc_event(kind: u32, size: u64) -> Event {
    Event {
        op: JITARENA_EVENT_ALLOC,
        arg: kind,
        size,
    }
}

/// A phase change event.
pub fn phase_event(phase: u32) -> Event {
    Event {
        op: JITARENA_EVENT_PHASE,
        arg: phase,
        size: 0,
    }
}

/// Writes a binary trace, one `write_all` per method. A failed write does not spoil the methods
/// before it (see [`crate::log::LogWriter`]).
pub struct TraceWriter<W: Write>(FrameWriter<W>);

impl<W: Write> TraceWriter<W> {
    /// As [`crate::log::LogWriter::torn`].
    pub fn torn(&self) -> Option<(u64, u64)> {
        self.0.torn()
    }

    /// Starts a trace: writes the file header.
    pub fn new(out: W) -> std::io::Result<TraceWriter<W>> {
        FrameWriter::new(out, Content::Trace).map(TraceWriter)
    }

    /// Appends one method's events.
    pub fn write(
        &mut self,
        schema: &Shared<Schema>,
        name: Option<&str>,
        context: i64,
        tier: Option<&str>,
        events: &[Event],
    ) -> std::io::Result<()> {
        self.0.refuse_torn()?;
        self.write_events(schema, name, context, tier, events)
    }

    /// [`TraceWriter::write`] for a JIT, whose failures allocate nothing: a method refused
    /// after one cut short that could not be removed fails with `ErrorKind::Other` (check
    /// [`TraceWriter::torn`] first).
    pub(crate) fn write_events(
        &mut self,
        schema: &Shared<Schema>,
        name: Option<&str>,
        context: i64,
        tier: Option<&str>,
        events: &[Event],
    ) -> std::io::Result<()> {
        self.0
            .write(FRAME_EVENTS, schema, (name, context, tier), |p| {
                put_varint(p, events.len() as u64);
                for e in events {
                    if e.op == JITARENA_EVENT_PHASE {
                        put_varint(p, (u64::from(e.arg) << 1) | 1);
                    } else {
                        put_varint(p, u64::from(e.arg) << 1);
                        put_varint(p, e.size);
                    }
                }
            })
    }

    /// After a failed write, removes the part of the method that reached the output, as
    /// [`crate::log::LogWriter::remove_torn`] does. Until it succeeds, writes are refused.
    pub fn remove_torn(
        &mut self,
        truncate: impl FnOnce(&mut W, u64) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        self.0.remove_torn(truncate)
    }

    /// Appends a method read from another trace.
    pub fn write_method(&mut self, m: &TraceMethod) -> std::io::Result<()> {
        self.write(
            &m.schema,
            m.info.name.as_deref(),
            m.info.context,
            m.info.tier.as_deref(),
            &m.events,
        )
    }

    /// Flushes and returns the output.
    pub fn finish(self) -> std::io::Result<W> {
        self.0.finish()
    }
}

/// Events decoded at a time by [`MethodEvents::next_chunk`] from a binary trace: 64 KiB of
/// events, whatever the method's length (`docs/formats.md`, "Reader memory").
pub const CHUNK_EVENTS: usize = 4096;

/// A trace being read, binary or text.
pub struct TraceReader {
    inner: Inner,
    /// The events of a binary trace's method decoded last, reused from chunk to chunk.
    chunk: Vec<Event>,
}

enum Inner {
    /// A binary trace, read frame by frame, with the schemas and tiers seen so far.
    Binary {
        frames: Box<FrameReader>,
        dict: DictionaryReader,
    },
    /// A text trace, parsed whole (its kind list is known only at its end), reversed for
    /// popping.
    Text {
        methods: Vec<TraceMethod>,
        path: PathBuf,
    },
}

/// Opens a trace, binary or text, by its first bytes.
pub fn open(path: &Path) -> Result<TraceReader, Error> {
    from_source(Source::open(path)?)
}

/// Reads an opened trace, binary or text, by its first bytes (which the source keeps, so that
/// a trace from a pipe reads whole).
pub fn from_source(source: Source) -> Result<TraceReader, Error> {
    let inner = match source.content() {
        Some(Content::Trace) => Inner::Binary {
            frames: Box::new(FrameReader::from_source(source, Content::Trace)?),
            dict: DictionaryReader::for_traces(),
        },
        Some(Content::Log) => return Err(Error::new(
            ErrorCode::Io,
            format!("{}: this is a stats log, not a trace (replay reads traces; stats, dump and memdiff read logs)", source.path().display()),
        )),
        None => {
            let path = source.path().to_path_buf();
            let mut methods = parse_text(&path, source.into_input())?;
            methods.reverse();
            Inner::Text { methods, path }
        }
    };
    Ok(TraceReader {
        inner,
        chunk: Vec::new(),
    })
}

/// One method of a trace whose events are handed out a chunk at a time
/// ([`TraceReader::next_events`]): a binary trace's are decoded from the method's frame as
/// they are asked for, at most [`CHUNK_EVENTS`] at once, so that a method of any length costs
/// its frame and one chunk. The whole frame is checked before the method is handed out: a
/// malformed method gives no event.
pub struct MethodEvents<'r> {
    schema: Shared<Schema>,
    info: MethodInfo,
    events: u64,
    allocations: u64,
    source: Events<'r>,
}

enum Events<'r> {
    /// The rest of a binary trace's frame, `left` events, decoded into `chunk`; `frames` for
    /// the message of an event that cannot be decoded.
    Binary {
        frames: &'r FrameReader,
        at: usize,
        left: u64,
        chunk: &'r mut Vec<Event>,
    },
    /// A text trace's method, parsed already: its events, handed out whole once.
    Text { events: Vec<Event>, given: bool },
}

impl MethodEvents<'_> {
    /// The kind and phase names the events refer to.
    pub fn schema(&self) -> &Shared<Schema> {
        &self.schema
    }

    /// Who.
    pub fn info(&self) -> &MethodInfo {
        &self.info
    }

    /// How many events the method holds.
    pub fn len(&self) -> u64 {
        self.events
    }

    /// Whether the method holds no event.
    pub fn is_empty(&self) -> bool {
        self.events == 0
    }

    /// How many of its events are allocations.
    pub fn allocations(&self) -> u64 {
        self.allocations
    }

    /// The next events in order, `None` after the last. Every chunk but the last of a binary
    /// trace's method holds [`CHUNK_EVENTS`] events; a text trace's method comes in one.
    pub fn next_chunk(&mut self) -> Result<Option<&[Event]>, Error> {
        match &mut self.source {
            Events::Text { events, given } => {
                let first = !std::mem::replace(given, true);
                Ok((first && !events.is_empty()).then_some(&events[..]))
            }
            Events::Binary {
                frames,
                at,
                left,
                chunk,
            } => {
                if *left == 0 {
                    return Ok(None);
                }
                let frame = frames.frame();
                let mut p = Payload::at(&frame.payload, *at);
                let n = (*left).min(CHUNK_EVENTS as u64) as usize;
                chunk.clear();
                for _ in 0..n {
                    chunk
                        .push(decode_event(&mut p).map_err(|e| frames.corrupt(frame.offset, e.0))?);
                }
                *at = p.position();
                *left -= n as u64;
                Ok(Some(&chunk[..]))
            }
        }
    }
}
impl TraceReader {
    /// The next method, its events collected, `None` at the end. A method's events cost 16
    /// bytes each here: [`TraceReader::next_events`] hands them out in chunks instead.
    pub fn next_method(&mut self) -> Result<Option<TraceMethod>, Error> {
        if let Inner::Text { methods, .. } = &mut self.inner {
            return Ok(methods.pop());
        }
        let Some(mut m) = self.next_events()? else {
            return Ok(None);
        };
        // The count is checked against the frame: each event is one byte at least.
        let mut events = Vec::with_capacity(m.events as usize);
        while let Some(chunk) = m.next_chunk()? {
            events.extend_from_slice(chunk);
        }
        Ok(Some(TraceMethod {
            schema: m.schema,
            info: m.info,
            events,
        }))
    }

    /// The next method, its events to be read a chunk at a time, `None` at the end. The
    /// method's frame is checked whole first (every event decodes, nothing follows the last).
    pub fn next_events(&mut self) -> Result<Option<MethodEvents<'_>>, Error> {
        let chunk = &mut self.chunk;
        match &mut self.inner {
            Inner::Text { methods, .. } => Ok(methods.pop().map(|m| MethodEvents {
                events: m.events.len() as u64,
                allocations: m
                    .events
                    .iter()
                    .filter(|e| e.op == JITARENA_EVENT_ALLOC)
                    .count() as u64,
                schema: m.schema,
                info: m.info,
                source: Events::Text {
                    events: m.events,
                    given: false,
                },
            })),
            Inner::Binary { frames, dict } => {
                while frames.advance()? {
                    let frame = frames.frame();
                    if dict.take(frame, frames)? || frame.kind != FRAME_EVENTS {
                        continue;
                    }
                    let checked = check_events(dict, &frame.payload)
                        .map_err(|e| frames.corrupt(frame.offset, e.0))?;
                    let frames: &FrameReader = frames;
                    return Ok(Some(MethodEvents {
                        schema: checked.schema,
                        info: checked.info,
                        events: checked.events,
                        allocations: checked.allocations,
                        source: Events::Binary {
                            frames,
                            at: checked.at,
                            left: checked.events,
                            chunk,
                        },
                    }));
                }
                Ok(None)
            }
        }
    }

    /// Warnings so far (a cut-short last method of a binary trace).
    pub fn warnings(&self) -> Vec<String> {
        match &self.inner {
            Inner::Binary { frames, .. } => frames.warnings.clone(),
            Inner::Text { .. } => Vec::new(),
        }
    }

    /// The file being read.
    pub fn path(&self) -> &Path {
        match &self.inner {
            Inner::Binary { frames, .. } => frames.path(),
            Inner::Text { path, .. } => path,
        }
    }
}

/// A method's frame, checked: who, how many events and allocations, and where the first
/// event starts in the payload.
struct Checked {
    schema: Shared<Schema>,
    info: MethodInfo,
    events: u64,
    allocations: u64,
    at: usize,
}

/// Checks a method's frame without keeping its events: each decodes, and nothing follows the
/// last.
fn check_events(dict: &DictionaryReader, payload: &[u8]) -> Result<Checked, Malformed> {
    let mut p = Payload::new(payload);
    let (schema, info) = dict.info(&mut p)?;
    // Each event takes at least one byte: the count cannot exceed what is left.
    let n = p.count(p.remaining() as u64)?;
    let at = p.position();
    let mut allocations = 0;
    for _ in 0..n {
        allocations += u64::from(decode_event(&mut p)?.op == JITARENA_EVENT_ALLOC);
    }
    if !p.is_done() {
        return Err(Malformed("it has bytes after its last event"));
    }
    Ok(Checked {
        schema,
        info,
        events: n as u64,
        allocations,
        at,
    })
}

/// One event of a method's frame.
#[inline]
fn decode_event(p: &mut Payload<'_>) -> Result<Event, Malformed> {
    let code = p.varint()?;
    let arg = u32::try_from(code >> 1)
        .map_err(|_| Malformed("an event's kind or phase is out of range"))?;
    Ok(if code & 1 == 1 {
        phase_event(arg)
    } else {
        alloc_event(arg, p.varint()?)
    })
}

/// Parses a plain text trace. Kinds and phases are numbered in the order first seen.
pub fn read_text(path: &Path) -> Result<Vec<TraceMethod>, Error> {
    parse_text(path, Source::open(path)?.into_input())
}

/// Parses a plain text trace from `reader`; `path` names it in errors.
fn parse_text(path: &Path, mut reader: impl BufRead) -> Result<Vec<TraceMethod>, Error> {
    let bad = |line: usize, what: String| {
        Error::new(ErrorCode::Io, format!("{}:{line}: {what}", path.display()))
    };
    let mut trace = TextTrace::default();
    let mut line = String::new();
    let mut number = 0;
    loop {
        line.clear();
        number += 1;
        match reader.read_line(&mut line) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
                return Err(bad(number, "not text (not UTF-8): not a trace".into()));
            }
            Err(e) => return Err(format::io_error(path, "read", &e)),
        }
        trace.line(line.trim()).map_err(|what| bad(number, what))?;
    }
    if trace.methods.is_empty() {
        return Err(Error::new(
            ErrorCode::Io,
            format!(
                "{}: no `method` line: an empty trace, or not a trace",
                path.display()
            ),
        ));
    }
    let schema = Schema::new(trace.kinds.names, trace.phases.names)
        .and_then(Schema::interned)
        .map_err(|e| bad(0, e.message.into_owned()))?;
    Ok(trace
        .methods
        .into_iter()
        .map(|(info, events)| TraceMethod {
            schema: Shared::clone(&schema),
            info,
            events,
        })
        .collect())
}

/// A plain text trace as read so far: the kinds and phases in the order first seen, and the
/// methods with their events.
#[derive(Default)]
struct TextTrace {
    kinds: Names,
    phases: Names,
    methods: Vec<(MethodInfo, Vec<Event>)>,
}

impl TextTrace {
    /// Takes one line (trimmed); blank lines and `#` comments are skipped. The error says
    /// what is wrong with the line.
    fn line(&mut self, text: &str) -> Result<(), String> {
        if text.is_empty() || text.starts_with('#') {
            return Ok(());
        }
        let mut words = text.split_whitespace();
        let verb = words.next().unwrap_or_default();
        let rest = text.get(verb.len()..).unwrap_or_default();
        match verb {
            "method" => self.method(words),
            "phase" | "alloc" => self.event(verb, rest),
            other => Err(format!("unknown line `{other}` (a trace has `method`, `phase` and `alloc` lines): not a trace?")),
        }
    }

    /// A `method <context> <tier> <name...>` line's `words` after the verb: starts a method.
    fn method<'a>(&mut self, mut words: impl Iterator<Item = &'a str>) -> Result<(), String> {
        let context = words
            .next()
            .and_then(|w| w.parse::<i64>().ok())
            .ok_or_else(|| {
                "expected `method <context> <tier> <name...>` with a whole-number context"
                    .to_string()
            })?;
        let tier = words
            .next()
            .ok_or_else(|| "`method` lacks its tier (use `-` if unknown)".to_string())?;
        let name = words.collect::<Vec<_>>().join(" ");
        let info = MethodInfo {
            name: (!name.is_empty()).then_some(name),
            context,
            tier: (tier != "-").then(|| tier.to_string()),
        };
        self.methods.push((info, Vec::new()));
        Ok(())
    }

    /// A `phase <name>` or `alloc <kind> <size>` line's text after `verb`: an event of the
    /// last method. A name is the rest of the line (`phase`) or all of it but its last word
    /// (`alloc`), spaces and all ("Morph - Inlining").
    fn event(&mut self, verb: &str, rest: &str) -> Result<(), String> {
        let Some((_, events)) = self.methods.last_mut() else {
            return Err(format!("`{verb}` before any `method` line"));
        };
        let rest = rest.trim();
        if rest.is_empty() {
            return Err(format!("`{verb}` lacks a name"));
        }
        if verb == "phase" {
            let id = if rest == "-" {
                JITARENA_NO_PHASE
            } else {
                self.phases.id(rest, JITARENA_MAX_PHASES)?
            };
            events.push(phase_event(id));
            return Ok(());
        }
        let (name, size) = rest
            .rsplit_once(|c: char| c.is_whitespace())
            .map(|(name, size)| (name.trim_end(), size.parse::<u64>().ok()))
            .unwrap_or((rest, None));
        let size = size
            .ok_or_else(|| "expected `alloc <kind> <size>` with a whole-number size".to_string())?;
        let id = self.kinds.id(name, JITARENA_MAX_KINDS)?;
        events.push(alloc_event(id, size));
        Ok(())
    }
}

#[derive(Default)]
struct Names {
    names: Vec<String>,
    ids: HashMap<String, u32>,
}

impl Names {
    fn id(&mut self, name: &str, max: u32) -> Result<u32, String> {
        if let Some(&id) = self.ids.get(name) {
            return Ok(id);
        }
        if self.names.len() as u32 >= max {
            return Err(format!("more than {max} distinct names"));
        }
        let id = self.names.len() as u32;
        self.names.push(name.to_string());
        self.ids.insert(name.to_string(), id);
        Ok(id)
    }
}

/// Writes a method as plain text trace lines. Kinds outside the schema are written as
/// `invalid-kind-<n>`; "no phase" as `phase -`.
pub fn write_text(out: &mut impl Write, m: &TraceMethod) -> std::io::Result<()> {
    write_text_method(out, &m.info)?;
    write_text_events(out, &m.schema, &m.events)
}

/// Writes the `method` line that starts a method of a plain text trace.
pub fn write_text_method(out: &mut impl Write, info: &MethodInfo) -> std::io::Result<()> {
    let tier = info.tier.as_deref().unwrap_or("-");
    writeln!(
        out,
        "method {} {tier} {}",
        info.context,
        info.name.as_deref().unwrap_or("")
    )
}

/// Writes events of a method (after its `method` line, as [`write_text`] does), their kinds
/// and phases named from `schema`: a chunk of [`MethodEvents::next_chunk`] at a time.
pub fn write_text_events(
    out: &mut impl Write,
    schema: &Schema,
    events: &[Event],
) -> std::io::Result<()> {
    for e in events {
        if e.op == JITARENA_EVENT_PHASE {
            match schema.phases.get(e.arg as usize) {
                Some(name) => writeln!(out, "phase {name}")?,
                None => writeln!(out, "phase -")?,
            }
        } else {
            match schema.kinds.get(e.arg as usize) {
                Some(name) => writeln!(out, "alloc {name} {}", e.size)?,
                None => writeln!(out, "alloc invalid-kind-{} {}", e.arg, e.size)?,
            }
        }
    }
    Ok(())
}
