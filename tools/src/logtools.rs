//! `jitarena merge` and `jitarena dump`: many shards into one log, and logs or traces into rows
//! for spreadsheets and scripts.

use jitarena::{Schema, Shared};
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::json;

use crate::output::{check_not_input, OutputFile, WRITEBACK_EVERY};
use crate::progress::Progress;
use crate::text::thousands;
use jitarena::error::{Error, ErrorCode};
use jitarena::format::{self, io_error, Content};
use jitarena::log::{FailedCompile, LogReader, LogWriter, MethodCounts, MethodRecord};

use crate::union::SchemaUnion;

mod pipelined;

/// Reads every record of every log, calling `f` on each with its file; returns the readers'
/// warnings.
pub fn for_each_record(
    paths: &[PathBuf],
    f: impl FnMut(&Path, &MethodRecord) -> Result<(), Error>,
) -> Result<Vec<String>, Error> {
    each_record(paths, &Progress::hidden(), "", f)
}

/// [`for_each_record`], counting records on `progress` with the stage `pass` and the file.
fn each_record(
    paths: &[PathBuf],
    progress: &Progress,
    pass: &str,
    mut f: impl FnMut(&Path, &MethodRecord) -> Result<(), Error>,
) -> Result<Vec<String>, Error> {
    let mut record = MethodRecord::default();
    let open = LogReader::open;
    each_log(paths, progress, pass, open, |path, reader, read| {
        while reader.next_into(&mut record)? {
            f(path, &record)?;
            read.one();
        }
        Ok(())
    })
}

/// Records read from one file, counted on a [`Progress`] in batches: a record takes about a
/// microsecond, a count a clock reading.
struct Counted<'a> {
    progress: &'a Progress,
    uncounted: u64,
}

impl Counted<'_> {
    /// One more record read.
    #[inline]
    fn one(&mut self) {
        self.uncounted += 1;
        if self.uncounted == 1024 {
            self.progress.add(self.uncounted);
            self.uncounted = 0;
        }
    }
}

/// Opens each log of `paths` in turn with `open` (whose error names the file), the stage on
/// `progress` `{pass}file i/n`, and calls `f` with its path, its reader and its count of
/// records, which `f` ticks ([`Counted::one`]) once a record read. Returns the readers'
/// warnings. The first error ends the loop: the failing file's records not yet counted are
/// left uncounted, as are its warnings.
fn each_log<E: From<Error>>(
    paths: &[PathBuf],
    progress: &Progress,
    pass: &str,
    open: fn(&Path) -> Result<LogReader, Error>,
    mut f: impl FnMut(&Path, &mut LogReader, &mut Counted) -> Result<(), E>,
) -> Result<Vec<String>, E> {
    let mut warnings = Vec::new();
    for (i, path) in paths.iter().enumerate() {
        progress.set_stage(format!("{pass}file {}/{}", i + 1, paths.len()));
        let mut reader = open(path)?;
        let mut read = Counted {
            progress,
            uncounted: 0,
        };
        f(path, &mut reader, &mut read)?;
        progress.add(read.uncounted);
        warnings.extend(reader.warnings().iter().cloned());
    }
    Ok(warnings)
}

/// The error of a log whose second reading met kinds or phases that its first did not: it
/// changed in between (a JIT still appending to it, or a pipe that a writer refilled).
fn changed_while_read(path: &Path) -> Error {
    Error::new(
        ErrorCode::Io,
        format!(
            "{}: changed while being read: a record names kinds or phases that the first pass over the file did not see (is a JIT still writing it?); run again once the file is complete",
            path.display()
        ),
    )
}

/// The bytes of the files at `paths` together: about what a merge of them writes.
fn input_bytes(paths: &[PathBuf]) -> u64 {
    paths
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .fold(0, |sum, m| sum.saturating_add(m.len()))
}

/// Refuses any of `paths` that is not a regular file, before `tool` reads any (it reads each
/// twice).
fn regular_files(paths: &[PathBuf], tool: &str) -> Result<(), Error> {
    for path in paths {
        crate::diff::regular_file(path, tool)?;
    }
    Ok(())
}

/// The union of the schemas of these logs (a first pass over them).
pub fn union_of(paths: &[PathBuf]) -> Result<SchemaUnion, Error> {
    union_shown(paths, &Progress::hidden(), Pass1::Decode)
}

/// How the first pass of a merge reads records.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pass1 {
    /// Every record decoded (and so checked) whole.
    Decode,
    /// Only the heads of version-2 records (their schema ids); their counters are checked by
    /// the second pass, which reads every record anyway.
    Heads,
}

/// The stage of a merge's first pass, before the file's number.
const PASS_1: &str = "schemas (pass 1/2), ";
/// The stage of a merge's second pass, before the file's number.
const PASS_2: &str = "records (pass 2/2), ";

/// The schemas of the records of these logs, in order, each time it changes.
fn schemas_of(
    paths: &[PathBuf],
    progress: &Progress,
    pass1: Pass1,
    mut f: impl FnMut(&Shared<Schema>),
) -> Result<(), Error> {
    if pass1 == Pass1::Decode {
        return each_record(paths, progress, PASS_1, |_, r| {
            f(&r.schema);
            Ok(())
        })
        .map(drop);
    }
    let mut record = MethodRecord::default();
    // The second pass checks every record's checksum; this one only reads heads. Any error
    // here makes the merge read again with `Pass1::Decode`, whose error is the one shown.
    let open = LogReader::open_again;
    each_log(paths, progress, PASS_1, open, |_, reader, read| {
        while reader.next_raw()? {
            match reader.current_schema()? {
                Some(schema) => f(schema),
                None => {
                    reader.decode_current(&mut record)?;
                    f(&record.schema);
                }
            }
            read.one();
        }
        Ok(())
    })
    .map(drop)
}

/// The union of the schemas of these logs: the first half of the files on another thread, the
/// second half on this one, then the second half's schemas added after the first half's (the
/// union is the same as one thread's, which takes names in the order first seen).
fn union_shown(paths: &[PathBuf], progress: &Progress, pass1: Pass1) -> Result<SchemaUnion, Error> {
    let one = |paths: &[PathBuf]| {
        let mut union = SchemaUnion::default();
        let mut last: Option<Shared<Schema>> = None;
        schemas_of(paths, progress, pass1, |schema| {
            if !last.as_ref().is_some_and(|s| Shared::ptr_eq(s, schema)) {
                union.add(schema);
                last = Some(Shared::clone(schema));
            }
        })
        .map(|_| union)
    };
    let (first, second) = paths.split_at(paths.len() / 2);
    let (first, second) = std::thread::scope(|scope| {
        let first = scope.spawn(|| one(first));
        let second = one(second);
        let first = first.join().unwrap_or_else(|_| {
            Err(Error::new(
                ErrorCode::Internal,
                "the schema reader thread failed",
            ))
        });
        (first, second)
    });
    let mut union = first?;
    for schema in second?.schemas() {
        union.add(schema);
    }
    Ok(union)
}

/// The first pass of a merge guessed from the first record of each log, when every log is a
/// regular file (a pipe cannot be read again): the union of those records' schemas, and each
/// log's first record's schema (`None` for a log without records). It is the first pass's
/// union whenever every record of a log has the schema of the log's first record, as the
/// shards of one JIT build do; the second pass checks that of every record ([`pipelined::Guess`])
/// and gives up at the first that does not. `None` where any log cannot be read so far.
fn guess_first_pass(paths: &[PathBuf]) -> Option<(SchemaUnion, Vec<Option<Shared<Schema>>>)> {
    let mut union = SchemaUnion::default();
    let mut firsts = Vec::with_capacity(paths.len());
    let mut record = MethodRecord::default();
    for path in paths {
        if !std::fs::metadata(path).ok()?.is_file() {
            return None;
        }
        let mut reader = LogReader::open_again(path).ok()?;
        let first = match reader.next_raw().ok()? {
            false => None,
            true => Some(match reader.current_schema().ok()? {
                Some(schema) => Shared::clone(schema),
                None => {
                    reader.decode_current(&mut record).ok()?;
                    Shared::clone(&record.schema)
                }
            }),
        };
        if let Some(schema) = &first {
            union.add(schema);
        }
        firsts.push(first);
    }
    Some((union, firsts))
}

/// Merges logs into one at `out`, with one schema: the union of theirs by name. Returns the
/// number of records and the readers' warnings. `out` may not be one of the logs (callers that
/// list directories also check it against them: [`check_not_input`]); it is written under a
/// temporary name and renamed into place when complete, so a failed merge leaves any earlier
/// file as it was. Progress is counted on `progress` (the passes made: the records only when
/// the first pass is guessed, see [`merge_in_batches`]; the schemas, then the records, when it
/// is made, after the records of a guess given up).
///
/// A version-2 record whose schema is already the union (the same names in the same order) is
/// copied: its head is written again for the output, its counters are checked and copied as
/// they are ([`LogWriter::write_copy`]). Other records are decoded, re-laid against the union
/// and encoded; the file is the same as [`merge_decoding`] writes.
pub fn merge(
    paths: &[PathBuf],
    out: &Path,
    progress: &Progress,
) -> Result<(u64, Vec<String>), Error> {
    merge_counted(paths, out, progress).map(|m| (m.records, m.warnings))
}

/// What a merge did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Merged {
    /// Records written.
    pub records: u64,
    /// Records whose counters were copied as they were (the others were decoded and encoded).
    pub copied: u64,
    /// The readers' warnings.
    pub warnings: Vec<String>,
    /// Times an input's schema was compared name by name with the output's: at most once per
    /// schema of each file, however often its records switch between schemas.
    pub schemas_compared: u64,
    /// Whether the records were written again on one thread, after a record to be copied
    /// failed its check on the two-thread pass (see [`merge_in_batches`]).
    pub written_again: bool,
    /// Whether the union of the schemas was taken from the first record of each log, without
    /// a first pass over every record (see [`merge_in_batches`]).
    pub first_pass_guessed: bool,
}

/// [`merge`], saying how many records were copied.
pub fn merge_counted(paths: &[PathBuf], out: &Path, progress: &Progress) -> Result<Merged, Error> {
    merge_in_batches(paths, out, progress, pipelined::BATCH_RECORDS)
}

/// [`merge_counted`] with `batch_records` records at most in each batch that the thread
/// reading the inputs passes to the thread writing the output (tests use small ones).
///
/// The union of the schemas is first guessed from the first record of each log, and the
/// records are written against it while the guess is checked record by record (every record
/// of a log must have the schema of its first, as the shards of one JIT build do); only when
/// a record proves it wrong, or anything fails, is the output dropped and written again after
/// a first pass over every record, so that the file, or the error, is that pass's.
///
/// The reading thread takes the records to copy unchecked, and checks every other batch; the
/// writing thread checks the others, so the two cores share the checks. Should any record fail
/// its check (its log is corrupt there, or another writer laid it out otherwise), the output
/// so far is dropped and the records are written again on one thread, which decodes that
/// record: the same file, or the same error, as [`merge_decoding`] gives.
pub fn merge_in_batches(
    paths: &[PathBuf],
    out: &Path,
    progress: &Progress,
    batch_records: usize,
) -> Result<Merged, Error> {
    check_not_input(out, paths)?;
    regular_files(paths, "merge")?;
    if let Some((mut union, firsts)) = guess_first_pass(paths) {
        let guess = pipelined::Guess::new(&firsts);
        if let Ok(schema) = union.log_schema() {
            let schema = Shared::new(schema);
            let guessed = pipelined::records(
                paths,
                out,
                progress,
                &mut union,
                &schema,
                batch_records,
                Some(guess),
            );
            // Anything but a merge whose every record bore the guess out (an error, a record
            // that failed its check) is left to the first pass and the second made again, so
            // that the file, or the error, is theirs.
            if let Ok(Some(merged)) = guessed {
                return Ok(Merged {
                    first_pass_guessed: true,
                    ..merged
                });
            }
        }
    }
    let mut union = match union_shown(paths, progress, Pass1::Heads) {
        // The error that decoding every record meets first (a record's counters may be
        // corrupt before the head that failed), as the second pass would report it.
        Err(_) => union_shown(paths, progress, Pass1::Decode)?,
        Ok(union) => union,
    };
    let schema = Shared::new(union.log_schema()?);
    match pipelined::records(
        paths,
        out,
        progress,
        &mut union,
        &schema,
        batch_records,
        None,
    )? {
        Some(merged) => Ok(merged),
        None => {
            let mut merged = records_one_thread(paths, out, progress, &mut union, &schema, true)?;
            merged.written_again = true;
            Ok(merged)
        }
    }
}

/// [`merge`] that decodes and encodes every record (and decodes each twice: the first pass
/// too), as `merge` did before it copied records: the reference its copies are checked
/// against.
pub fn merge_decoding(paths: &[PathBuf], out: &Path, progress: &Progress) -> Result<Merged, Error> {
    check_not_input(out, paths)?;
    regular_files(paths, "merge")?;
    let mut union = union_shown(paths, progress, Pass1::Decode)?;
    let schema = Shared::new(union.log_schema()?);
    records_one_thread(paths, out, progress, &mut union, &schema, false)
}

/// The output buffer of a merge: large writes, bounded memory.
const MERGE_BUFFER: usize = 1 << 18;

/// Which of an input's schemas are the output's (their records copy): each of a file's
/// schemas is compared by name once, however often its records switch between them.
struct OutputSchema<'a> {
    output: &'a jitarena::counters::Schema,
    /// The file's last schema seen (by address), and whether it is the output's.
    last: Option<(Shared<Schema>, bool)>,
    /// The same for every schema of the file met so far (held, so addresses stay unique).
    seen: HashMap<usize, (Shared<Schema>, bool)>,
    /// Schemas compared name by name.
    compared: u64,
}

impl<'a> OutputSchema<'a> {
    fn new(output: &'a jitarena::counters::Schema) -> OutputSchema<'a> {
        OutputSchema {
            output,
            last: None,
            seen: HashMap::new(),
            compared: 0,
        }
    }

    /// Forgets the last file's schemas.
    fn next_file(&mut self) {
        self.last = None;
        self.seen.clear();
    }

    /// Whether `schema`, of the current file, is the output's.
    fn is_output(&mut self, schema: &Shared<Schema>) -> bool {
        if !self
            .last
            .as_ref()
            .is_some_and(|l| Shared::ptr_eq(&l.0, schema))
        {
            let (output, compared) = (self.output, &mut self.compared);
            let known = self
                .seen
                .entry(Shared::as_ptr(schema) as usize)
                .or_insert_with(|| {
                    *compared += 1;
                    (Shared::clone(schema), **schema == *output)
                });
            self.last = Some(known.clone());
        }
        self.last.as_ref().is_some_and(|l| l.1)
    }
}

/// The second pass of a merge on one thread: every record written against `schema`, the
/// union's, copied where `copy` and its counters pass their check, decoded and encoded
/// otherwise.
fn records_one_thread(
    paths: &[PathBuf],
    out: &Path,
    progress: &Progress,
    union: &mut SchemaUnion,
    schema: &Shared<Schema>,
    copy: bool,
) -> Result<Merged, Error> {
    let mut file = OutputFile::create(out)?;
    file.preallocate(input_bytes(paths));
    file.start_writeback();
    let io = |e: std::io::Error| io_error(out, "write", &e);
    let buffered = std::io::BufWriter::with_capacity(MERGE_BUFFER, file.writer(WRITEBACK_EVERY));
    let mut writer = LogWriter::new(buffered).map_err(io)?;
    let mut counts = MethodCounts::default();
    let mut record = MethodRecord::default();
    let (mut n, mut copied) = (0, 0);
    let mut output = OutputSchema::new(schema);
    let mut seen = SeenContexts::default();
    let mut trailer = Trailer::default();
    let open = LogReader::open;
    let mut warnings = each_log(paths, progress, PASS_2, open, |path, reader, read| {
        output.next_file();
        while reader.next_raw()? {
            let copied = match reader.current_schema()? {
                Some(s) if copy && output.is_output(s) => match reader.current_copyable() {
                    Some(r) => {
                        writer.write_copy(schema, &r).map_err(io)?;
                        copied += 1;
                        true
                    }
                    None => false,
                },
                _ => false,
            };
            if copied {
                seen.add(reader.current_context().unwrap_or(-1));
            } else {
                reader.decode_current(&mut record)?;
                if !union.remap_sealed(&record.schema, &record.counts, &mut counts) {
                    return Err(changed_while_read(path));
                }
                let i = &record.info;
                seen.add(i.context);
                let (name, tier) = (i.name.as_deref(), i.tier.as_deref());
                writer
                    .write(schema, name, i.context, tier, &counts)
                    .map_err(io)?;
            }
            n += 1;
            read.one();
        }
        trailer.take(reader);
        Ok(())
    })?;
    for note in &warnings {
        writer.write_cut_note(note).map_err(io)?;
    }
    trailer.write(&mut writer).map_err(io)?;
    writer
        .finish()
        .and_then(|w| w.into_inner().map_err(|e| e.into_error()))
        .map_err(io)?;
    file.commit()?;
    progress.finish();
    // Said, not written into the log as a note: a note reads as a log cut short.
    warnings.extend(seen.warning());
    Ok(Merged {
        records: n,
        copied,
        warnings,
        schemas_compared: output.compared,
        written_again: false,
        first_pass_guessed: false,
    })
}

/// The context numbers of the records a merge writes, to say when one is seen twice (a shard
/// given twice, a context recorded twice): memdiff reports such records as duplicates.
#[derive(Default)]
pub(crate) struct SeenContexts {
    /// A bit per context number below [`SeenContexts::DENSE`].
    bits: Vec<u64>,
    /// Larger numbers.
    sparse: std::collections::HashSet<i64>,
    /// Records whose context was seen before.
    repeats: u64,
    /// The first contexts seen twice.
    examples: Vec<i64>,
}

impl SeenContexts {
    /// Context numbers kept in the bit set (8 MiB of it at most).
    const DENSE: i64 = 1 << 26;

    /// Notes the record of context `c` (a negative number: unknown, never a repeat).
    pub(crate) fn add(&mut self, c: i64) {
        let again = match c {
            c if c < 0 => false,
            c if c < Self::DENSE => {
                let (word, bit) = ((c / 64) as usize, 1u64 << (c % 64));
                if self.bits.len() <= word {
                    self.bits.resize(word + 1, 0);
                }
                let was = self.bits[word] & bit != 0;
                self.bits[word] |= bit;
                was
            }
            c => !self.sparse.insert(c),
        };
        if again {
            self.repeats += 1;
            if self.examples.len() < 5 && !self.examples.contains(&c) {
                self.examples.push(c);
            }
        }
    }

    /// The warning of a merged log that holds a context twice, if it does.
    pub(crate) fn warning(&self) -> Option<String> {
        (self.repeats > 0).then(|| {
            let examples: Vec<String> = self.examples.iter().map(i64::to_string).collect();
            format!(
                "the merged log holds {} record{} of a context already merged (contexts {}{}): shards given twice, or a context recorded twice; memdiff reports them as duplicates",
                thousands(self.repeats),
                if self.repeats == 1 { "" } else { "s" },
                examples.join(", "),
                if self.repeats as usize > examples.len() { ", ..." } else { "" }
            )
        })
    }
}

/// What a merge's inputs hold besides records, which the merged log keeps after its records:
/// the build ids, each once, in the order first named, and every failed compile noted, in
/// order (a failed compile dropped would read as a method missing, or not at all).
#[derive(Default)]
pub(crate) struct Trailer {
    builds: Vec<String>,
    failed: Vec<FailedCompile>,
}

impl Trailer {
    /// Takes the build ids and failed compiles `reader` met (it has read its log through).
    pub(crate) fn take(&mut self, reader: &LogReader) {
        for b in reader.builds() {
            if !self.builds.contains(b) {
                self.builds.push(b.clone());
            }
        }
        self.failed.extend_from_slice(reader.failed_compiles());
    }

    /// Whether there is nothing to write.
    pub(crate) fn is_empty(&self) -> bool {
        self.builds.is_empty() && self.failed.is_empty()
    }

    /// Writes the failed compiles' notes and the build frames.
    pub(crate) fn write<W: Write>(&self, writer: &mut LogWriter<W>) -> std::io::Result<()> {
        for f in &self.failed {
            writer.note_failed(f.name.as_deref(), f.context, f.tier.as_deref())?;
        }
        for build in &self.builds {
            writer.note_build(build)?;
        }
        Ok(())
    }
}

/// Output formats of `dump`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DumpFormat {
    /// One CSV row per method, one column per kind's bytes and per phase's bytes.
    Csv,
    /// One JSON object per line per method.
    Jsonl,
    /// Traces only: the plain text trace format.
    Text,
}

/// Writes logs (or, in text format, traces) as rows to `out`, named `out_name` in messages.
/// Returns the readers' warnings.
pub fn dump(
    paths: &[PathBuf],
    fmt: DumpFormat,
    out: &mut impl Write,
    out_name: &Path,
) -> Result<Vec<String>, Error> {
    if fmt == DumpFormat::Text {
        return dump_traces_text(paths, out, out_name);
    }
    regular_files(paths, "dump")?;
    let mut union = union_of(paths)?;
    let schema = union.log_schema()?;
    if fmt == DumpFormat::Csv {
        return dump_csv(paths, &mut union, &schema, out, out_name);
    }
    dump_jsonl(paths, &mut union, &schema, out, out_name)
}

/// `dump --format text`: every method of every trace as plain text trace lines (a stats log,
/// which has no events, is refused). Returns the readers' warnings.
fn dump_traces_text(
    paths: &[PathBuf],
    out: &mut impl Write,
    out_name: &Path,
) -> Result<Vec<String>, Error> {
    let w = |e: std::io::Error| io_error(out_name, "write", &e);
    let mut warnings = Vec::new();
    for path in paths {
        // Opened once: a trace from a pipe cannot be opened a second time.
        let source = format::Source::open(path)?;
        if source.content() == Some(Content::Log) {
            return Err(Error::new(ErrorCode::Io, format!("{}: a stats log has no events; `--format text` dumps traces (use csv or jsonl)", path.display())));
        }
        let mut reader = jitarena::trace::from_source(source)?;
        // A chunk of events at a time: a method of any length costs its frame, not 16 bytes
        // per event.
        while let Some(mut m) = reader.next_events()? {
            jitarena::trace::write_text_method(out, m.info()).map_err(w)?;
            let schema = jitarena::Shared::clone(m.schema());
            while let Some(chunk) = m.next_chunk()? {
                jitarena::trace::write_text_events(out, &schema, chunk).map_err(w)?;
            }
        }
        warnings.extend(reader.warnings());
    }
    Ok(warnings)
}

/// `dump --format csv`: a header, then one row per method with its counts remapped to
/// `schema` (the logs' union). Returns the readers' warnings.
fn dump_csv(
    paths: &[PathBuf],
    union: &mut SchemaUnion,
    schema: &Schema,
    out: &mut impl Write,
    out_name: &Path,
) -> Result<Vec<String>, Error> {
    let w = |e: std::io::Error| io_error(out_name, "write", &e);
    let csv_err = |e: ::csv::Error| {
        let text = e.to_string();
        match e.into_kind() {
            ::csv::ErrorKind::Io(e) => w(e),
            _ => Error::new(ErrorCode::Io, format!("{}: {text}", out_name.display())),
        }
    };
    // The `csv` crate quotes a cell only when it has to (a comma, quote or line break).
    let mut csv = ::csv::WriterBuilder::new()
        .flexible(false)
        .from_writer(&mut *out);
    csv.write_record(csv_header(schema)).map_err(csv_err)?;
    let mut counts = MethodCounts::default();
    let warnings = for_each_record(paths, |path, r| {
        if !union.remap_sealed(&r.schema, &r.counts, &mut counts) {
            return Err(changed_while_read(path));
        }
        csv.write_record(csv_row(schema, r, &counts))
            .map_err(csv_err)
    })?;
    csv.flush().map_err(w)?;
    Ok(warnings)
}

/// The CSV header: the method's columns, then a `bytes:` column per kind (and the invalid
/// kind's) and a `phase:` column per phase of `schema`.
fn csv_header(schema: &Schema) -> Vec<String> {
    let mut header: Vec<String> = [
        "context",
        "tier",
        "name",
        "bytes",
        "allocations",
        "used_bytes",
        "reserved_bytes",
        "pages",
        "largest_alloc",
        "limit_hit",
    ]
    .map(String::from)
    .to_vec();
    header.extend(schema.kinds.iter().map(|k| format!("bytes:{k}")));
    header.push(format!("bytes:{}", jitarena::counters::INVALID_KIND_NAME));
    header.extend(schema.phases.iter().map(|p| format!("phase:{p}")));
    header
}

/// The CSV row of record `r` whose counts `c` are remapped to `schema`: its figures, then its
/// bytes per kind and per phase in the header's order.
fn csv_row(schema: &Schema, r: &MethodRecord, c: &MethodCounts) -> Vec<String> {
    let mut kinds = vec![0u64; schema.kinds.len() + 1];
    c.kinds.iter().for_each(|&(s, b, _)| kinds[s as usize] += b);
    let mut phases = vec![0u64; schema.phases.len()];
    for &(slot, bytes) in &c.phases {
        if let Some(cell) = phases.get_mut(slot as usize) {
            *cell += bytes;
        }
    }
    let mut row = vec![
        r.info.context.to_string(),
        r.info.tier.clone().unwrap_or_default(),
        r.info.name.clone().unwrap_or_default(),
        c.total_bytes().to_string(),
        c.total_count().to_string(),
        c.used_bytes.to_string(),
        c.reserved_bytes.to_string(),
        c.page_count.to_string(),
        c.largest_alloc.to_string(),
        u8::from(c.limit_hit).to_string(),
    ];
    row.extend(kinds.iter().chain(&phases).map(u64::to_string));
    row
}

/// `dump --format jsonl`: one JSON object per line per method, its counts remapped to
/// `schema` (the logs' union), then one per failed compile each log notes (`"failed": true`,
/// its context, tier and name: no counts). Returns the readers' warnings.
fn dump_jsonl(
    paths: &[PathBuf],
    union: &mut SchemaUnion,
    schema: &Schema,
    out: &mut impl Write,
    out_name: &Path,
) -> Result<Vec<String>, Error> {
    let w = |e: std::io::Error| io_error(out_name, "write", &e);
    let mut counts = MethodCounts::default();
    let mut record = MethodRecord::default();
    let hidden = Progress::hidden();
    each_log(paths, &hidden, "", LogReader::open, |path, reader, read| {
        while reader.next_into(&mut record)? {
            if !union.remap_sealed(&record.schema, &record.counts, &mut counts) {
                return Err(changed_while_read(path));
            }
            let line = jsonl_row(schema, &record, &counts);
            writeln!(out, "{line}").map_err(w)?;
            read.one();
        }
        for f in reader.failed_compiles() {
            let line = json!({
                "context": f.context,
                "tier": f.tier.as_deref().unwrap_or(""),
                "name": f.name.as_deref().unwrap_or(""),
                "failed": true,
            });
            writeln!(out, "{line}").map_err(w)?;
        }
        Ok(())
    })
}

/// The JSON line of record `r` whose counts `c` are remapped to `schema`: its figures, kinds,
/// phases, and kinds by phase when it recorded them.
fn jsonl_row(schema: &Schema, r: &MethodRecord, c: &MethodCounts) -> String {
    let (name, tier) = (
        r.info.name.as_deref().unwrap_or(""),
        r.info.tier.as_deref().unwrap_or(""),
    );
    let mut phases = serde_json::Map::new();
    for &(s, b) in &c.phases {
        let name = schema.phase_name(s as usize);
        let b0 = phases.get(name).and_then(serde_json::Value::as_u64);
        phases.insert(name.to_string(), json!(b0.unwrap_or(0).saturating_add(b)));
    }
    let mut row = json!({
        "context": r.info.context,
        "tier": tier,
        "name": name,
        "bytes": c.total_bytes(),
        "allocations": c.total_count(),
        "used_bytes": c.used_bytes,
        "reserved_bytes": c.reserved_bytes,
        "pages": c.page_count,
        "largest_alloc": c.largest_alloc,
        "limit_hit": c.limit_hit,
        "kinds": kinds_json(schema, c),
        "phases": phases,
    });
    if let (false, Some(row)) = (c.phase_kind_bytes.is_empty(), row.as_object_mut()) {
        row.insert("kinds_by_phase".into(), kinds_by_phase(schema, c));
    }
    serde_json::to_string(&row).unwrap_or_default()
}

/// `{kind: {bytes, count}}` of a record's kinds (remapped to `schema`, the union's), the
/// invalid kind's slot under its name.
fn kinds_json(schema: &Schema, c: &MethodCounts) -> serde_json::Map<String, serde_json::Value> {
    let invalid = schema.kinds.len() as u32;
    let mut kinds = serde_json::Map::new();
    for &(s, b, n) in &c.kinds {
        let k = if s == invalid {
            jitarena::counters::INVALID_KIND_NAME
        } else {
            schema.kinds[s as usize].as_str()
        };
        // A kind named like the invalid-kind slot shares its entry: sums, not a
        // duplicate key.
        let (b0, n0) = kinds.get(k).map_or((0, 0), |v| {
            (
                v["bytes"].as_u64().unwrap_or(0),
                v["count"].as_u64().unwrap_or(0),
            )
        });
        kinds.insert(
            k.to_string(),
            json!({"bytes": b0.saturating_add(b), "count": n0.saturating_add(n)}),
        );
    }
    kinds
}

/// `{phase: {kind: bytes}}` of a record's kinds by phase (remapped to `schema`, the union's).
fn kinds_by_phase(schema: &jitarena::Schema, c: &MethodCounts) -> serde_json::Value {
    let mut by_phase = serde_json::Map::new();
    for &(phase, kind, bytes) in &c.phase_kind_bytes {
        let kinds = by_phase
            .entry(schema.phase_name(phase as usize).to_string())
            .or_insert_with(|| json!({}));
        let kind = schema.kind_name(kind as usize);
        if let Some(kinds) = kinds.as_object_mut() {
            let b0 = kinds.get(kind).and_then(serde_json::Value::as_u64);
            kinds.insert(
                kind.to_string(),
                json!(b0.unwrap_or(0).saturating_add(bytes)),
            );
        }
    }
    serde_json::Value::Object(by_phase)
}
