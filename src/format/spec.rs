//! The file format's one specification: the header of every jitarena file, the frame types of
//! stats logs and traces, and the bits of a version-2 record's head. `docs/formats.md`
//! describes the bytes; the readers and writers of `log` and `trace` take every number here.

/// The first 8 bytes of every jitarena file.
pub const MAGIC: &[u8; 8] = b"JITARENA";
/// Length of the file header: magic, content kind, version, two reserved bytes.
pub const HEADER_LEN: usize = 12;
/// The format version of the stats logs this build writes (it reads versions 1 and 2): version 2
/// has the compact method record (`docs/formats.md`).
pub const LOG_VERSION: u8 = 2;
/// The newest trace format version this build reads (it reads versions 1 to 3): version 2 gives
/// each allocation its site (a per-method site table over module frames; `docs/formats.md`,
/// "Sites"); version 3 may hold methods written in parts (part frames and a closing frame), which
/// version-2 readers would skip. A trace says version 3 only once it holds a part.
pub const TRACE_VERSION: u8 = 3;
/// The version of a trace that holds only whole methods (one frame each): what tools write,
/// and a JIT's trace until its first part (`docs/formats.md`, "Methods in parts").
pub const TRACE_VERSION_WHOLE: u8 = 2;
/// Where the version byte lies in the file header.
pub(crate) const VERSION_AT: u64 = 9;
/// Largest frame payload accepted (a sanity bound: a trace frame holds one method's events).
pub const MAX_FRAME: u64 = 1 << 30;

/// What a file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Content {
    /// A stats log: one record of counters per method.
    Log,
    /// A binary allocation trace: one record of events per method.
    Trace,
}

impl Content {
    pub(crate) fn byte(self) -> u8 {
        match self {
            Content::Log => b'L',
            Content::Trace => b'T',
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Content::Log => "stats log",
            Content::Trace => "trace",
        }
    }

    /// The newest format version this build reads for `self`.
    pub fn version(self) -> u8 {
        match self {
            Content::Log => LOG_VERSION,
            Content::Trace => TRACE_VERSION,
        }
    }

    /// The format version this build writes for `self` (a trace of whole methods; one holding
    /// parts says [`TRACE_VERSION`]).
    pub fn written_version(self) -> u8 {
        match self {
            Content::Log => LOG_VERSION,
            Content::Trace => TRACE_VERSION_WHOLE,
        }
    }
}

/// A version-1 header for a file of `content`: version 1 frames are read by every reader
/// (hand-made files in tests use it). Writers use [`header_for`].
pub fn header(content: Content) -> [u8; HEADER_LEN] {
    header_for(content, 1)
}

/// The header bytes for a file of `content` in format `version`.
pub fn header_for(content: Content, version: u8) -> [u8; HEADER_LEN] {
    let mut h = [0u8; HEADER_LEN];
    h[..8].copy_from_slice(MAGIC);
    h[8] = content.byte();
    h[VERSION_AT as usize] = version;
    h
}

/// Whether `head`, shorter than a header, is how a header of `content` in a readable version
/// begins (an empty file too): the start of a file whose writer was stopped before its header
/// was whole.
pub(crate) fn is_header_start(head: &[u8], content: Content) -> bool {
    let magic = head.len().min(MAGIC.len());
    head.get(..magic) == MAGIC.get(..magic)
        && head.get(8).is_none_or(|&c| c == content.byte())
        && head
            .get(VERSION_AT as usize)
            .is_none_or(|&v| (1..=content.version()).contains(&v))
        && head.iter().skip(10).all(|&b| b == 0)
}

// ---- Frame types. A frame's type is read against its file's content: logs and traces each
// number their own, so that a log's 4 (a note of a log cut short) is not a trace's 4.

/// Logs and traces: a schema (its id, kind names, phase names).
pub(crate) const FRAME_SCHEMA: u8 = 1;
/// Logs and traces: a tier name and its id.
pub(crate) const FRAME_TIER: u8 = 2;
/// Logs: one method's counters.
pub(crate) const FRAME_METHOD: u8 = 3;
/// Logs: a note that the log holds the records of another that was cut short (written by
/// `jitarena merge`), its text that log's warning. A reader warns of it as of a log cut
/// short, so that a gate over the merged log sees what a gate over the shards would have.
pub(crate) const FRAME_CUT_NOTE: u8 = 4;
/// Logs: the build id of the JIT whose records follow (`jitarena_config.build_id`), written
/// before the first record of a build the file has not named since the last such frame; a
/// merged log names the builds of its inputs. Readers before it skip it, as any frame type
/// they do not know.
pub(crate) const FRAME_BUILD: u8 = 5;
/// Logs: a compile that failed (`jitarena_method.failed`): its context (zigzag varint), name and
/// tier name (strings; empty when unknown), in place of a record of counters. Readers before it
/// skip it, as any frame type they do not know: to them the context is missing, as it was
/// before the JIT could say its compile failed.
pub(crate) const FRAME_FAILED: u8 = 6;
/// Traces: one method's allocation events.
pub(crate) const FRAME_EVENTS: u8 = 4;
/// Traces, version 2: a module that sites lie in (its id, from 1 in order, and its file),
/// written before the first method naming a site in it.
pub(crate) const FRAME_MODULE: u8 = 5;
/// Traces, version 3: a part of a method whose events outgrew the writer's buffer (its
/// stream id, its number from 0, then a piece: the site-table entries new since the part
/// before, a phase switch put in before an event written already, the events). Readers keep
/// it until the method's [`FRAME_CLOSE`], and drop it when none comes.
pub(crate) const FRAME_PART: u8 = 6;
/// Traces, version 3: the end of a method written in parts: the method's info (as
/// [`FRAME_EVENTS`]), its stream id, how many parts came before, and the last piece.
pub(crate) const FRAME_CLOSE: u8 = 7;

// ---- The head of a version-2 method record: bits, then the tier id above them.

/// A request failed on the memory limit.
pub(crate) const LIMIT_HIT: u64 = 1;
/// Kinds by phase follow the phases.
pub(crate) const BY_PHASE: u64 = 2;
/// The last present phase's bytes are left out (the phases add up to the kinds).
pub(crate) const LAST_PHASE_DERIVED: u64 = 4;
/// Reserved bytes are written in 4 KiB units.
pub(crate) const RESERVED_4K: u64 = 8;
/// A schema id other than 0 follows.
pub(crate) const SCHEMA_FOLLOWS: u64 = 16;
/// The tier id is `head >> TIER_SHIFT`.
pub(crate) const TIER_SHIFT: u32 = 5;

// ---- What a malformed frame or record is called.

/// Decoding a payload failed: it is shorter than its fields or holds an impossible value.
#[derive(Debug, Clone, Copy)]
pub struct Malformed(pub &'static str);

/// Its byte counts do not fit in 64 bits.
pub(crate) const TOO_MANY_BYTES: Malformed =
    Malformed("its byte counts add up to more than 2^64 - 1");
/// Version 2: a kind bitmap with a bit past the last kind.
pub(crate) const KIND_PAST_BITMAP: Malformed =
    Malformed("a kind is outside its schema (its bitmap has a bit past the last kind)");
/// Version 2: a phase bitmap with a bit past the last phase.
pub(crate) const PHASE_PAST_BITMAP: Malformed =
    Malformed("a phase is outside its schema (its bitmap has a bit past the last phase)");
/// Version 1: a kind slot delta that overflows or runs past the last kind.
pub(crate) const KIND_PAST_DELTA: Malformed =
    Malformed("a kind is outside its schema (a slot delta overflows or runs past the last kind)");
/// Version 1: a phase slot delta that overflows or runs past the last phase.
pub(crate) const PHASE_PAST_DELTA: Malformed =
    Malformed("a phase is outside its schema (a slot delta overflows or runs past the last phase)");
