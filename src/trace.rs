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
use crate::format::{
    self, put_frame, put_varint, Content, FrameReader, Malformed, Payload, Put, Source, TryBuf,
};
use crate::shared::Shared;
use crate::sites::{MethodSites, Module, Modules};
use crate::sys::{
    jitarena_event as Event, JITARENA_EVENT_ALLOC, JITARENA_EVENT_PHASE, JITARENA_MAX_KINDS,
    JITARENA_MAX_PHASES, JITARENA_NO_PHASE,
};

use crate::format::spec::{
    FRAME_CLOSE, FRAME_EVENTS, FRAME_MODULE, FRAME_PART, TRACE_VERSION, TRACE_VERSION_WHOLE,
};
use crate::trace_buffer::TraceBuffer;

/// An allocation's site in a version-2 trace: a module of the trace (its id, from 1; 0 when
/// unknown) and the site's offset from the module's load address (the virtual address of
/// the call's return address in the module's file).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Site {
    /// The module's id in the trace (0: unknown).
    pub module: u32,
    /// The offset of the return address from the module's load address (0 when unknown).
    pub offset: u64,
}

/// What [`MethodEvents::next_chunk_sited`] gives an event without a site: a phase change,
/// or an allocation of a trace that records none.
pub const NO_SITE: u32 = u32::MAX;

/// A chunk of events and the site index of each ([`MethodEvents::next_chunk_sited`]).
pub type SitedChunk<'a> = (&'a [Event], &'a [u32]);

/// Longest module path a reader keeps (longer ones are corrupt).
const MODULE_PATH_MAX: usize = 4096;

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
pub struct TraceWriter<W: Write> {
    frames: FrameWriter<W>,
    /// The modules sites lie in: the process's, as a JIT's trace finds them, or those
    /// declared by [`TraceWriter::module`].
    modules: Modules,
    /// A module frame's payload, put together before the frame.
    scratch: TryBuf,
    /// Whether the header says version 3, which a trace holding a part must.
    says_parts: bool,
}

impl<W: Write> TraceWriter<W> {
    /// As [`crate::log::LogWriter::torn`].
    pub fn torn(&self) -> Option<(u64, u64)> {
        self.frames.torn()
    }

    /// Starts a trace: writes the file header.
    pub fn new(out: W) -> std::io::Result<TraceWriter<W>> {
        TraceWriter::with_version(out, TRACE_VERSION_WHOLE)
    }

    /// Starts a JIT's trace, which may hold methods in parts: a file whose header can be
    /// written again in place (`late`) says version 2 until its first part, any other
    /// (a pipe) version 3 from the start.
    pub(crate) fn for_parts(out: W, late: bool) -> std::io::Result<TraceWriter<W>> {
        let version = match late {
            true => TRACE_VERSION_WHOLE,
            false => TRACE_VERSION,
        };
        TraceWriter::with_version(out, version)
    }

    fn with_version(out: W, version: u8) -> std::io::Result<TraceWriter<W>> {
        Ok(TraceWriter {
            frames: FrameWriter::with_version(out, Content::Trace, version)?,
            modules: Modules::default(),
            scratch: TryBuf::default(),
            says_parts: version >= 3,
        })
    }

    /// Declares a module for [`TraceWriter::write_sited`]'s sites (a trace made by a tool):
    /// its id, from 1. Its frame is written before the first method naming it.
    pub fn module(&mut self, path: &str) -> std::io::Result<u32> {
        let mut bytes = Vec::new();
        bytes
            .try_reserve_exact(path.len())
            .map_err(crate::fallible::no_memory)?;
        bytes.extend_from_slice(path.as_bytes());
        self.modules
            .list
            .try_reserve(1)
            .map_err(crate::fallible::no_memory)?;
        self.modules.list.push(Module::declared(bytes));
        Ok(self.modules.list.len() as u32)
    }

    /// Appends one method's events with the site of each allocation: `sites` is the method's
    /// site table (modules from [`TraceWriter::module`]), `site_of` the index in it of each
    /// allocation event in order. Refuses (`InvalidInput`, nothing written) a `site_of` of
    /// another length than the allocations, an index outside `sites`, or an undeclared
    /// module.
    #[allow(clippy::too_many_arguments)]
    pub fn write_sited(
        &mut self,
        schema: &Shared<Schema>,
        name: Option<&str>,
        context: i64,
        tier: Option<&str>,
        events: &[Event],
        sites: &[Site],
        site_of: &[u32],
    ) -> std::io::Result<()> {
        self.frames.refuse_torn()?;
        let allocations = events
            .iter()
            .filter(|e| e.op != JITARENA_EVENT_PHASE)
            .count();
        let invalid =
            |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidInput, what.to_string());
        if allocations != site_of.len() {
            return Err(invalid("a site per allocation event is needed"));
        }
        if site_of.iter().any(|&i| i as usize >= sites.len()) {
            return Err(invalid("a site index is outside the method's site table"));
        }
        if sites
            .iter()
            .any(|s| s.module as usize > self.modules.list.len())
        {
            return Err(invalid("a site names a module that was not declared"));
        }
        self.write_any(
            schema,
            (name, context, tier),
            events,
            Sites::Given(sites, site_of),
        )
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
        self.frames.refuse_torn()?;
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
        self.write_any(schema, (name, context, tier), events, Sites::None)
    }

    /// [`TraceWriter::write_events`] with each allocation's site, as an arena recorded them
    /// (`sites`: one per allocation event, in order): each site's address becomes a module
    /// of the process and an offset in it, the modules' frames written before the first
    /// method naming them. Sites that do not match the events (none recorded) are left out.
    pub(crate) fn write_events_sited(
        &mut self,
        schema: &Shared<Schema>,
        name: Option<&str>,
        context: i64,
        tier: Option<&str>,
        events: &[Event],
        sites: &MethodSites,
    ) -> std::io::Result<()> {
        let allocations = events
            .iter()
            .filter(|e| e.op != JITARENA_EVENT_PHASE)
            .count();
        let sites = match sites.of_alloc().len() != allocations || sites.addrs().is_empty() {
            true => Sites::None,
            false => Sites::Recorded(sites),
        };
        self.write_any(schema, (name, context, tier), events, sites)
    }

    /// Every method's frame is written here (one copy of the code in a JIT): its site table,
    /// the frames of the modules it names first, its events.
    fn write_any(
        &mut self,
        schema: &Shared<Schema>,
        method: (Option<&str>, i64, Option<&str>),
        events: &[Event],
        sites: Sites<'_>,
    ) -> std::io::Result<()> {
        let (modules, scratch) = (&mut self.modules, &mut self.scratch);
        modules.method_start();
        let result = self
            .frames
            .write_with_frames(FRAME_EVENTS, schema, method, |frames, p| {
                let (addrs, given, site_of): (&[usize], &[Site], _) = match sites {
                    Sites::None => (&[], &[], None),
                    Sites::Recorded(s) => (s.addrs(), &[], Some(s.of_alloc())),
                    Sites::Given(table, of) => (&[], table, Some(of)),
                };
                put_value(p, (addrs.len() + given.len()) as u64);
                put_located(modules, scratch, frames, p, addrs)?;
                for site in given {
                    put_site(modules, scratch, frames, p, site.module, site.offset)?;
                }
                put_events(p, events, site_of);
                Ok(())
            });
        settle_modules(modules, result.is_ok());
        result
    }

    /// Writes the events `buffer` holds as a part of its method (stream `buffer.stream`,
    /// number `buffer.parts`), with the site-table entries new since the part before and the
    /// frames of the modules they name first. Before the trace's first part, `patch` makes
    /// the header say version 3 (`docs/formats.md`, "Methods in parts").
    pub(crate) fn write_part(
        &mut self,
        buffer: &TraceBuffer,
        sites: &MethodSites,
        patch: impl FnOnce(&mut W) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        if !self.says_parts {
            if self.frames.torn().is_some() {
                return Err(std::io::Error::from(std::io::ErrorKind::Other));
            }
            patch(self.frames.output())?;
            self.says_parts = true;
        }
        let (modules, scratch) = (&mut self.modules, &mut self.scratch);
        modules.method_start();
        let result = self.frames.write_unnamed(FRAME_PART, |frames, p| {
            put_value(p, buffer.stream);
            put_value(p, buffer.parts);
            put_piece(modules, scratch, frames, p, buffer, sites)
        });
        settle_modules(modules, result.is_ok());
        result
    }

    /// Ends a method written in parts: its closing frame, naming it as a method's frame
    /// does, with its stream id, its number of parts and the events `buffer` still holds.
    pub(crate) fn write_close(
        &mut self,
        schema: &Shared<Schema>,
        method: (Option<&str>, i64, Option<&str>),
        buffer: &TraceBuffer,
        sites: &MethodSites,
    ) -> std::io::Result<()> {
        let (modules, scratch) = (&mut self.modules, &mut self.scratch);
        modules.method_start();
        let result = self
            .frames
            .write_with_frames(FRAME_CLOSE, schema, method, |frames, p| {
                put_value(p, buffer.stream);
                put_value(p, buffer.parts);
                put_piece(modules, scratch, frames, p, buffer, sites)
            });
        settle_modules(modules, result.is_ok());
        result
    }

    /// After a failed write, removes the part of the method that reached the output, as
    /// [`crate::log::LogWriter::remove_torn`] does. Until it succeeds, writes are refused.
    pub fn remove_torn(
        &mut self,
        truncate: impl FnOnce(&mut W, u64) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        self.frames.remove_torn(truncate)
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
        self.frames.finish()
    }
}

/// Where a method's sites come from.
#[derive(Clone, Copy)]
enum Sites<'a> {
    /// None: its allocations carry no site.
    None,
    /// The arena's: addresses in this process, and per allocation an index.
    Recorded(&'a MethodSites),
    /// A tool's: the table, and per allocation an index.
    Given(&'a [Site], &'a [u32]),
}

/// One entry of a method's site table, after the frame of its module if the trace lacks it.
fn put_site(
    modules: &mut Modules,
    scratch: &mut TryBuf,
    frames: &mut TryBuf,
    p: &mut TryBuf,
    module: u32,
    offset: u64,
) -> std::io::Result<()> {
    module_frame(modules, scratch, frames, module)?;
    put_value(p, u64::from(module));
    put_value(p, offset);
    Ok(())
}

/// Site-table entries of addresses in this process: each as a module of the trace and an
/// offset in it, after the module's frame if the trace lacks it.
fn put_located(
    modules: &mut Modules,
    scratch: &mut TryBuf,
    frames: &mut TryBuf,
    p: &mut TryBuf,
    addrs: &[usize],
) -> std::io::Result<()> {
    for &addr in addrs {
        let (module, offset) = modules
            .locate(addr)
            .map_err(|()| std::io::Error::from(std::io::ErrorKind::OutOfMemory))?;
        put_site(modules, scratch, frames, p, module, offset)?;
    }
    Ok(())
}

/// A piece of a method in parts, after its frame's head: its allocations carry sites (1),
/// the site-table entries new since the part before (each after its module's frame if the
/// trace lacks it), the fix-up it carries (0 or 1: a position and a phase), its events. An
/// allocation without its site (one could not be recorded) fails as memory does.
fn put_piece(
    modules: &mut Modules,
    scratch: &mut TryBuf,
    frames: &mut TryBuf,
    p: &mut TryBuf,
    buffer: &TraceBuffer,
    sites: &MethodSites,
) -> std::io::Result<()> {
    let events = buffer.events();
    let allocations = events
        .iter()
        .filter(|e| e.op != JITARENA_EVENT_PHASE)
        .count();
    if allocations != sites.of_alloc().len() {
        return Err(std::io::Error::from(std::io::ErrorKind::OutOfMemory));
    }
    put_value(p, 1);
    let new = sites
        .addrs()
        .get(buffer.sites_written..)
        .unwrap_or_default();
    put_value(p, new.len() as u64);
    put_located(modules, scratch, frames, p, new)?;
    match buffer.fixup {
        Some((at, phase)) => {
            put_value(p, 1);
            put_value(p, at);
            put_value(p, u64::from(phase));
        }
        None => put_value(p, 0),
    }
    put_events(p, events, Some(sites.of_alloc()));
    Ok(())
}

/// Encodes a method's events: their count, then each (with `site_of`: an allocation's site
/// index after its size).
fn put_events(p: &mut TryBuf, events: &[Event], site_of: Option<&[u32]>) {
    put_value(p, events.len() as u64);
    let mut sites = site_of.unwrap_or_default().iter();
    for e in events {
        let alloc = e.op != JITARENA_EVENT_PHASE;
        put_one(p, (u64::from(e.arg) << 1) | u64::from(!alloc));
        if alloc {
            put_one(p, e.size);
            if site_of.is_some() {
                put_one(p, u64::from(sites.next().copied().unwrap_or(0)));
            }
        }
    }
}

/// One varint: a byte inline (most kinds, sizes and site indices), longer ones out of line,
/// so that the three of an event share one copy of the encoder.
#[inline(always)]
fn put_one(p: &mut TryBuf, value: u64) {
    if value < 0x80 {
        p.put(&[value as u8]);
    } else {
        put_value(p, value);
    }
}

/// A varint out of line: [`put_one`]'s values of two bytes or more, and every other value the
/// trace writes, share one copy of the encoder (a trace is written at the end of a method and
/// when its buffer fills, never on the allocation path).
#[inline(never)]
fn put_value(p: &mut TryBuf, value: u64) {
    put_varint(p, value);
}

/// Puts the frame of module `id` (from 1) into `frames` unless the trace has it or this
/// method's frames hold it already (it is then pending until [`settle_modules`]).
fn module_frame(
    modules: &mut Modules,
    scratch: &mut TryBuf,
    frames: &mut TryBuf,
    id: u32,
) -> std::io::Result<()> {
    let Some(m) = (id as usize)
        .checked_sub(1)
        .and_then(|i| modules.list.get_mut(i))
    else {
        return Ok(());
    };
    if m.written || m.pending {
        return Ok(());
    }
    m.pending = true;
    scratch.clear();
    put_value(scratch, u64::from(id));
    put_value(scratch, m.path.len() as u64);
    scratch.put(&m.path);
    scratch.check()?;
    put_frame(frames, FRAME_MODULE, scratch.as_slice());
    Ok(())
}

/// After a method's write: the module frames it carried are in the trace when it was
/// written, else they come again with the next method naming them.
fn settle_modules(modules: &mut Modules, written: bool) {
    for m in &mut modules.list {
        if std::mem::replace(&mut m.pending, false) {
            m.written = written;
        }
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
    /// The site index of each event of `chunk` ([`NO_SITE`] for none).
    chunk_sites: Vec<u32>,
    /// The site table of the method handed out last.
    sites: Vec<Site>,
    /// The method in parts handed out last: its events' bytes and fix-ups.
    closed: Parts,
    /// Methods in parts dropped so far because they never closed.
    dropped: u64,
}

/// The parts of a method read so far (a binary trace's stream), kept encoded until its
/// closing frame: its event bytes, checked, after one another.
#[derive(Default)]
struct Parts {
    /// Where its first part starts in the file.
    first: u64,
    /// The parts read.
    parts: u64,
    /// Whether its allocations carry sites.
    sited: bool,
    /// Its site table so far.
    sites: Vec<Site>,
    /// The phase switches put in before events: their positions among the method's events,
    /// and their phases.
    fixups: Vec<(u64, u32)>,
    /// Its events so far (fix-ups left out), and how many are allocations.
    events: u64,
    allocations: u64,
    /// The events' bytes.
    bytes: Vec<u8>,
}

enum Inner {
    /// A binary trace, read frame by frame, with the schemas, tiers and modules seen so far,
    /// and the methods in parts not closed yet, by stream id.
    Binary {
        frames: Box<FrameReader>,
        dict: DictionaryReader,
        modules: Vec<Option<String>>,
        streams: HashMap<u64, Parts>,
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
            modules: Vec::new(),
            streams: HashMap::new(),
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
        chunk_sites: Vec::new(),
        sites: Vec::new(),
        closed: Parts::default(),
        dropped: 0,
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
    sites: &'r [Site],
    source: Events<'r>,
}

enum Events<'r> {
    /// The rest of a binary trace's method, `left` encoded events from byte `at` of `bytes`
    /// (its frame's payload, or its parts' event bytes) and the `fixups` not yet put in
    /// (`index`: the position of the next event), decoded into `chunk` (and each one's site
    /// into `chunk_sites`, `sited` when allocations carry one); `frames` and `offset` (the
    /// method's frame) for the message of an event that cannot be decoded.
    Binary {
        frames: &'r FrameReader,
        offset: u64,
        bytes: &'r [u8],
        fixups: &'r [(u64, u32)],
        index: u64,
        at: usize,
        left: u64,
        sited: bool,
        chunk: &'r mut Vec<Event>,
        chunk_sites: &'r mut Vec<u32>,
    },
    /// A text trace's method, parsed already: its events, handed out whole once.
    Text {
        events: Vec<Event>,
        no_sites: Vec<u32>,
        given: bool,
    },
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

    /// The method's site table (empty when its allocations carry no site: a version-1
    /// trace, a text trace, a trace written without sites).
    pub fn sites(&self) -> &[Site] {
        self.sites
    }

    /// The next events in order, `None` after the last. Every chunk but the last of a binary
    /// trace's method holds [`CHUNK_EVENTS`] events; a text trace's method comes in one.
    pub fn next_chunk(&mut self) -> Result<Option<&[Event]>, Error> {
        Ok(self.next_chunk_sited()?.map(|(events, _)| events))
    }

    /// [`MethodEvents::next_chunk`] with each event's site: its index in
    /// [`MethodEvents::sites`], or [`NO_SITE`] (a phase change, an allocation without one).
    pub fn next_chunk_sited(&mut self) -> Result<Option<SitedChunk<'_>>, Error> {
        match &mut self.source {
            Events::Text {
                events,
                no_sites,
                given,
            } => {
                let first = !std::mem::replace(given, true);
                Ok((first && !events.is_empty()).then_some((&events[..], &no_sites[..])))
            }
            Events::Binary {
                frames,
                offset,
                bytes,
                fixups,
                index,
                at,
                left,
                sited,
                chunk,
                chunk_sites,
            } => {
                let all = *left + fixups.len() as u64;
                if all == 0 {
                    return Ok(None);
                }
                let mut p = Payload::at(bytes, *at);
                let n = all.min(CHUNK_EVENTS as u64) as usize;
                chunk.clear();
                chunk_sites.clear();
                for _ in 0..n {
                    let (event, site) = match fixups.split_first() {
                        Some((&(pos, phase), rest)) if pos == *index => {
                            *fixups = rest;
                            (phase_event(phase), NO_SITE)
                        }
                        _ => {
                            *left = left.saturating_sub(1);
                            decode_event(&mut p, *sited)
                                .map_err(|e| frames.corrupt(*offset, e.0))?
                        }
                    };
                    *index += 1;
                    chunk.push(event);
                    chunk_sites.push(site);
                }
                *at = p.position();
                Ok(Some((&chunk[..], &chunk_sites[..])))
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
        let chunk_sites = &mut self.chunk_sites;
        let sites = &mut self.sites;
        let closed = &mut self.closed;
        let dropped = &mut self.dropped;
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
                sites: &[],
                source: Events::Text {
                    no_sites: vec![NO_SITE; m.events.len()],
                    events: m.events,
                    given: false,
                },
            })),
            Inner::Binary {
                frames,
                dict,
                modules,
                streams,
            } => {
                let version = frames.version();
                while frames.advance()? {
                    let frame = frames.frame();
                    let corrupt = |e: Malformed| frames.corrupt(frame.offset, e.0);
                    if dict.take(frame, frames)? {
                        continue;
                    }
                    if frame.kind == FRAME_MODULE && version >= 2 {
                        read_module(&frame.payload, modules).map_err(corrupt)?;
                        continue;
                    }
                    // A part or a closing frame is read under a version-2 header too: a JIT's
                    // trace says version 2 until its first part, and a copy taken before the
                    // header was written again (or a header that could not be) still holds
                    // them; no version-2 writer writes these frame types otherwise.
                    if frame.kind == FRAME_PART && version >= 2 {
                        read_part(&frame.payload, frame.offset, modules, streams)
                            .map_err(corrupt)?;
                        continue;
                    }
                    let (checked, in_parts) = match frame.kind {
                        FRAME_CLOSE if version >= 2 => {
                            let (checked, parts) =
                                read_close(dict, &frame.payload, modules, streams)
                                    .map_err(corrupt)?;
                            *closed = parts;
                            *sites = std::mem::take(&mut closed.sites);
                            (checked, true)
                        }
                        FRAME_EVENTS => {
                            let checked =
                                check_events(dict, &frame.payload, version, modules, sites)
                                    .map_err(corrupt)?;
                            (checked, false)
                        }
                        _ => continue,
                    };
                    let frames: &FrameReader = frames;
                    let (bytes, fixups): (&[u8], &[(u64, u32)]) = match in_parts {
                        true => (&closed.bytes, &closed.fixups),
                        false => (&frames.frame().payload, &[]),
                    };
                    return Ok(Some(MethodEvents {
                        schema: checked.schema,
                        info: checked.info,
                        events: checked.events + fixups.len() as u64,
                        allocations: checked.allocations,
                        sites: &sites[..],
                        source: Events::Binary {
                            frames,
                            offset: frames.frame().offset,
                            bytes,
                            fixups,
                            index: 0,
                            at: checked.at,
                            left: checked.events,
                            sited: checked.sited,
                            chunk,
                            chunk_sites,
                        },
                    }));
                }
                drop_unclosed(frames, streams, dropped);
                Ok(None)
            }
        }
    }

    /// The file of module `id` (from 1) as the trace names it (the loader's name), `None`
    /// for 0 (unknown) or a module not read yet.
    pub fn module(&self, id: u32) -> Option<&str> {
        match &self.inner {
            Inner::Binary { modules, .. } => (id as usize)
                .checked_sub(1)
                .and_then(|i| modules.get(i))
                .and_then(Option::as_deref),
            Inner::Text { .. } => None,
        }
    }

    /// The file's format version (1 for a text trace).
    pub fn version(&self) -> u8 {
        match &self.inner {
            Inner::Binary { frames, .. } => frames.version(),
            Inner::Text { .. } => 1,
        }
    }

    /// Methods in parts that were dropped because their closing frame never came (the process
    /// died or stopped writing while recording them, a part could not be written, the file
    /// is cut short): counted at the end of the trace, which [`TraceReader::warnings`] then
    /// says.
    pub fn dropped_methods(&self) -> u64 {
        self.dropped
    }

    /// Warnings so far (a cut-short last method of a binary trace, methods in parts that
    /// never closed).
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

/// Most modules a trace may name (their ids run from 1 to this).
const MODULES_MAX: u64 = 1 << 16;

/// A module frame: its id (from 1, not named before) and file, kept in `modules` (by id).
fn read_module(payload: &[u8], modules: &mut Vec<Option<String>>) -> Result<(), Malformed> {
    let mut p = Payload::new(payload);
    let id = p.varint()?;
    if id == 0 || id > MODULES_MAX {
        return Err(Malformed("a module's id is 0 or too large"));
    }
    let len = p.count(MODULE_PATH_MAX as u64)?;
    let path = String::from_utf8_lossy(p.bytes(len)?).into_owned();
    if !p.is_done() {
        return Err(Malformed("a module frame has bytes after its file"));
    }
    let at = id as usize - 1;
    if modules.len() <= at {
        modules.resize(at + 1, None);
    }
    match &mut modules[at] {
        Some(_) => Err(Malformed("a module's id is named twice")),
        slot => {
            *slot = Some(path);
            Ok(())
        }
    }
}

/// A method's frame, checked: who, how many events and allocations, whether allocations
/// carry sites, and where the first event starts in the payload.
struct Checked {
    schema: Shared<Schema>,
    info: MethodInfo,
    events: u64,
    allocations: u64,
    sited: bool,
    at: usize,
}

/// Checks a method's frame without keeping its events: each decodes, each site index lies in
/// the method's site table (read into `sites`), each site's module is known (`modules` read
/// so far), and nothing follows the last event.
fn check_events(
    dict: &DictionaryReader,
    payload: &[u8],
    version: u8,
    modules: &[Option<String>],
    sites: &mut Vec<Site>,
) -> Result<Checked, Malformed> {
    let mut p = Payload::new(payload);
    let (schema, info) = dict.info(&mut p)?;
    sites.clear();
    if version >= 2 {
        // Each site takes two bytes at least.
        let n = p.count(p.remaining() as u64 / 2)?;
        sites.reserve(n);
        for _ in 0..n {
            let module = u32::try_from(p.varint()?)
                .ok()
                .filter(|&m| m == 0 || modules.get(m as usize - 1).is_some_and(Option::is_some))
                .ok_or(Malformed("a site names a module with no frame before it"))?;
            let offset = p.varint()?;
            sites.push(Site { module, offset });
        }
    }
    let sited = !sites.is_empty();
    // Each event takes at least one byte: the count cannot exceed what is left.
    let n = p.count(p.remaining() as u64)?;
    let at = p.position();
    let mut allocations = 0;
    for _ in 0..n {
        let (event, site) = decode_event(&mut p, sited)?;
        if event.op == JITARENA_EVENT_ALLOC {
            allocations += 1;
            if sited && site as usize >= sites.len() {
                return Err(Malformed(
                    "an allocation's site is outside its method's site table",
                ));
            }
        }
    }
    if !p.is_done() {
        return Err(Malformed("it has bytes after its last event"));
    }
    Ok(Checked {
        schema,
        info,
        events: n as u64,
        allocations,
        sited,
        at,
    })
}

/// Methods in parts a reader keeps open at once: a JIT writes one per arena compiling a
/// long method, so far more than its threads is a corrupt trace, and the streams' state stays
/// bounded whatever the input.
const MAX_OPEN_STREAMS: usize = 4096;

/// A part of a method in parts: its stream id, its number (the next of its stream's), its
/// piece, kept in `streams` until the method's closing frame.
fn read_part(
    payload: &[u8],
    offset: u64,
    modules: &[Option<String>],
    streams: &mut HashMap<u64, Parts>,
) -> Result<(), Malformed> {
    let mut p = Payload::new(payload);
    let stream = p.varint()?;
    let part = p.varint()?;
    if streams.len() >= MAX_OPEN_STREAMS && !streams.contains_key(&stream) {
        return Err(Malformed(
            "it opens more methods in parts at once than a JIT's threads could (4,096)",
        ));
    }
    let parts = streams.entry(stream).or_default();
    if part != parts.parts {
        return Err(Malformed(
            "a method's part comes out of order (one before it is missing or repeated)",
        ));
    }
    if part == 0 {
        parts.first = offset;
    }
    read_piece(&mut p, parts, modules)?;
    parts.parts += 1;
    Ok(())
}

/// A method's closing frame: the method's info, its stream id, its number of parts (all read
/// before it), its last piece. Gives the method, checked whole, and its parts.
fn read_close(
    dict: &DictionaryReader,
    payload: &[u8],
    modules: &[Option<String>],
    streams: &mut HashMap<u64, Parts>,
) -> Result<(Checked, Parts), Malformed> {
    let mut p = Payload::new(payload);
    let (schema, info) = dict.info(&mut p)?;
    let stream = p.varint()?;
    let count = p.varint()?;
    let mut parts = streams.remove(&stream).unwrap_or_default();
    if parts.parts != count {
        return Err(Malformed(
            "its method's parts are not all in the trace before its closing frame",
        ));
    }
    read_piece(&mut p, &mut parts, modules)?;
    let checked = Checked {
        schema,
        info,
        events: parts.events,
        allocations: parts.allocations,
        sited: parts.sited,
        at: 0,
    };
    Ok((checked, parts))
}

/// A piece of a method in parts (`docs/formats.md`, "Methods in parts"): whether its
/// allocations carry sites (as every piece before), the site-table entries it adds (their
/// modules named before), its fix-ups (each before an event of an earlier piece, in order),
/// its events, each checked (a site within the table so far), whose bytes join `parts`.
fn read_piece(
    p: &mut Payload<'_>,
    parts: &mut Parts,
    modules: &[Option<String>],
) -> Result<(), Malformed> {
    let sited = match p.varint()? {
        0 => false,
        1 => true,
        _ => {
            return Err(Malformed(
                "a method's piece says neither 0 nor 1 for its sites",
            ))
        }
    };
    if parts.parts > 0 && sited != parts.sited {
        return Err(Malformed(
            "a method's parts disagree on whether its allocations carry sites",
        ));
    }
    parts.sited = sited;
    let n = p.count(p.remaining() as u64 / 2)?;
    for _ in 0..n {
        let module = u32::try_from(p.varint()?)
            .ok()
            .filter(|&m| m == 0 || modules.get(m as usize - 1).is_some_and(Option::is_some))
            .ok_or(Malformed("a site names a module with no frame before it"))?;
        let offset = p.varint()?;
        parts.sites.push(Site { module, offset });
    }
    // At most one fix-up a piece (the one mark a part can follow), so that they cost no more
    // than the events they sit among.
    let n = p.count(1)?;
    for _ in 0..n {
        let at = p.varint()?;
        let phase = u32::try_from(p.varint()?)
            .map_err(|_| Malformed("a fix-up's phase is out of range"))?;
        let written = parts.events + parts.fixups.len() as u64;
        if at >= written || parts.fixups.last().is_some_and(|&(last, _)| at <= last) {
            return Err(Malformed(
                "a fix-up is not before the events written already, or out of order",
            ));
        }
        parts.fixups.push((at, phase));
    }
    let n = p.count(p.remaining() as u64)?;
    let start = p.position();
    for _ in 0..n {
        let (event, site) = decode_event(p, sited)?;
        if event.op == JITARENA_EVENT_ALLOC {
            parts.allocations += 1;
            if sited && site as usize >= parts.sites.len() {
                return Err(Malformed(
                    "an allocation's site is outside its method's site table",
                ));
            }
        }
    }
    if !p.is_done() {
        return Err(Malformed("it has bytes after its last event"));
    }
    parts.events += n as u64;
    let bytes = p.all().get(start..).unwrap_or_default();
    parts.bytes.extend_from_slice(bytes);
    Ok(())
}

/// At the end of a trace: the methods in parts that never closed are dropped, counted in
/// `dropped`, and a warning says so.
fn drop_unclosed(frames: &mut FrameReader, streams: &mut HashMap<u64, Parts>, dropped: &mut u64) {
    if streams.is_empty() {
        return;
    }
    let mut firsts: Vec<u64> = streams.values().map(|s| s.first).collect();
    firsts.sort_unstable();
    let events: u64 = streams.values().map(|s| s.events).sum();
    let shown: Vec<String> = firsts.iter().take(5).map(u64::to_string).collect();
    let more = match firsts.len() > 5 {
        true => ", ...",
        false => "",
    };
    frames.warnings.push(format!(
        "{}: {} method(s) written in parts never closed (first parts at byte {}{more}): a compile that failed, or an arena reset or destroyed before the method's end (the trace leaves such a method out), the process dying or a trace write failing while recording it, or the file cut short; their {events} events are dropped and every whole method is read",
        frames.path().display(),
        firsts.len(),
        shown.join(", "),
    ));
    *dropped += firsts.len() as u64;
    streams.clear();
}

/// One event of a method's frame, and its site index ([`NO_SITE`] unless `sited` and an
/// allocation).
#[inline]
fn decode_event(p: &mut Payload<'_>, sited: bool) -> Result<(Event, u32), Malformed> {
    let code = p.varint()?;
    let arg = u32::try_from(code >> 1)
        .map_err(|_| Malformed("an event's kind or phase is out of range"))?;
    Ok(if code & 1 == 1 {
        (phase_event(arg), NO_SITE)
    } else {
        let event = alloc_event(arg, p.varint()?);
        let site = match sited {
            true => u32::try_from(p.varint()?)
                .ok()
                .filter(|&s| s != NO_SITE)
                .ok_or(Malformed(
                    "an allocation's site is outside its method's site table",
                ))?,
            false => NO_SITE,
        };
        (event, site)
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
