//! The second pass of `jitarena merge` on two threads: this one reads the inputs, the other
//! writes the output, and they share the checks of the counters that are copied (half of a
//! merge's work). Batches of records go from the first to the second, in order.

use std::collections::HashMap;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};

use super::{changed_while_read, each_log, Merged, OutputSchema, SeenContexts, Trailer};
use super::{MERGE_BUFFER, PASS_2};
use crate::output::{OutputFile, OutputWriter, WRITEBACK_EVERY};
use crate::progress::Progress;
use crate::union::SchemaUnion;
use jitarena::counters::Schema;
use jitarena::error::{Error, ErrorCode};
use jitarena::format::io_error;
use jitarena::log::{LogReader, LogWriter, MethodCounts, MethodRecord, RecordBatch};
use jitarena::Shared;

/// Records in a batch, at most.
pub(super) const BATCH_RECORDS: usize = 1024;

/// Bytes of counters and names in a batch (of a batch of decoded records, of their names and
/// lists): once past this, the batch goes (a record of a long name goes alone), so that the
/// batches in flight hold little memory.
const BATCH_BYTES: usize = 1 << 20;

/// Batches waiting for the writing thread, at most.
const BATCHES_QUEUED: usize = 4;

/// What the reading thread passes to the writing one.
enum Job {
    /// Records whose counters are copied.
    Copies(RecordBatch),
    /// Records decoded and laid out against the output's schema, to be encoded.
    Records(Vec<Decoded>),
    /// The inputs' warnings, after their last record: notes of logs cut short.
    CutNotes(Vec<String>),
    /// The inputs' build ids and failed compiles, after their last record.
    Trailer(Trailer),
}

/// A record decoded, its counters laid out against the output's schema.
struct Decoded {
    name: Option<String>,
    context: i64,
    tier: Option<String>,
    counts: MethodCounts,
}

/// Why the reading thread stopped before the end.
enum Halt {
    /// An input could not be read.
    Failed(Error),
    /// A record to be copied failed its check.
    CheckFailed,
    /// The writing thread is gone (it failed, or met a record that failed its check).
    WriterGone,
    /// A record's schema is not its log's first record's, as a guessed first pass took it to
    /// be ([`Guess`]).
    GuessWrong,
}

/// A first pass guessed from the first record of each log ([`super::guess_first_pass`]),
/// checked record by record in the second: it is the first pass's union only if every record
/// of a log has the schema of the log's first record.
pub(super) struct Guess<'a> {
    /// Each log's first record's schema; `None` for a log that had no record.
    firsts: &'a [Option<Shared<Schema>>],
    /// Logs begun so far (the current one is `firsts[file - 1]`).
    file: usize,
    /// The last schema (by address) found equal to the current log's first.
    last: Option<Shared<Schema>>,
    /// Every schema of the current log found equal to its first, by address (the `Arc` held,
    /// so that its address is not reused): a log may define the same names more than once.
    seen: HashMap<usize, Shared<Schema>>,
    /// Schemas compared name by name.
    compared: u64,
}

impl<'a> Guess<'a> {
    /// A guess of these first schemas, one per log, in order.
    pub(super) fn new(firsts: &'a [Option<Shared<Schema>>]) -> Guess<'a> {
        Guess {
            firsts,
            file: 0,
            last: None,
            seen: HashMap::new(),
            compared: 0,
        }
    }

    /// The next log begins.
    fn next_file(&mut self) {
        self.file += 1;
        self.last = None;
        self.seen.clear();
    }

    /// Whether a record of the current log with `schema` keeps the guess right: its schema is
    /// the log's first record's (compared by name once per schema of the log).
    fn holds(&mut self, schema: &Shared<Schema>) -> bool {
        if self
            .last
            .as_ref()
            .is_some_and(|l| Shared::ptr_eq(l, schema))
        {
            return true;
        }
        let address = Shared::as_ptr(schema) as usize;
        if !self.seen.contains_key(&address) {
            self.compared += 1;
            let first = self.file.checked_sub(1).and_then(|i| self.firsts.get(i));
            if !matches!(first, Some(Some(first)) if **first == **schema) {
                return false;
            }
            self.seen.insert(address, Shared::clone(schema));
        }
        self.last = Some(Shared::clone(schema));
        true
    }
}

impl From<Error> for Halt {
    fn from(e: Error) -> Halt {
        Halt::Failed(e)
    }
}

/// Writes every record of `paths` to a new `out`, as the one-thread pass does, on two
/// threads. `None`: a record to be copied failed its check, the second thread could not
/// start, or a record proved `guess` wrong; nothing is left at `out`, and the caller writes the
/// records on one thread (or, after a guess, makes the first pass).
pub(super) fn records(
    paths: &[PathBuf],
    out: &Path,
    progress: &Progress,
    union: &mut SchemaUnion,
    schema: &Shared<Schema>,
    batch_records: usize,
    guess: Option<Guess<'_>>,
) -> Result<Option<Merged>, Error> {
    let mut file = OutputFile::create(out)?;
    file.preallocate(super::input_bytes(paths));
    file.start_writeback();
    let (send, jobs) = mpsc::sync_channel(BATCHES_QUEUED);
    let (give_back, spares) = mpsc::channel();
    let output = file.writer(WRITEBACK_EVERY);
    let (read, written) = std::thread::scope(|scope| {
        let writer = std::thread::Builder::new()
            .name("merge writer".into())
            .spawn_scoped(scope, move || {
                write_jobs(output, out, schema, jobs, give_back)
            });
        let Ok(writer) = writer else {
            return (Err(Halt::WriterGone), Ok(false));
        };
        let mut feed = Feed {
            send,
            spares,
            batches: 0,
        };
        let read = read_jobs(
            paths,
            progress,
            union,
            schema,
            &mut feed,
            batch_records.max(1),
            guess,
        );
        drop(feed); // the writer ends once it has taken every job
        let written = writer.join().unwrap_or_else(|_| {
            Err(Error::new(
                ErrorCode::Internal,
                "the merge's writing thread failed",
            ))
        });
        (read, written)
    });
    // A failed check first: decoding that record says what is wrong with it, as it would have
    // on one thread, before any error met later in the inputs.
    let merged = match (read, written) {
        (Err(Halt::CheckFailed | Halt::GuessWrong), _) | (_, Ok(false)) => return Ok(None),
        (Err(Halt::Failed(e)), _) => return Err(e),
        (_, Err(e)) => return Err(e),
        (Err(Halt::WriterGone), Ok(true)) => {
            return Err(Error::new(
                ErrorCode::Internal,
                "the merge's writing thread stopped early",
            ))
        }
        (Ok((mut merged, seen)), Ok(true)) => {
            // Said, not written into the log as a note: a note reads as a log cut short.
            merged.warnings.extend(seen.warning());
            merged
        }
    };
    file.commit()?;
    progress.finish();
    Ok(Some(merged))
}

/// The reading thread's end of the queue of jobs.
struct Feed {
    send: SyncSender<Job>,
    /// Batches written, given back to be filled again.
    spares: Receiver<RecordBatch>,
    /// Batches of copies sent so far.
    batches: u64,
}

impl Feed {
    /// Sends the records of `batch`, if any, leaving it empty; checks them first for every other
    /// batch (the writing thread checks the others).
    fn copies(&mut self, batch: &mut RecordBatch) -> Result<(), Halt> {
        if batch.is_empty() {
            return Ok(());
        }
        if self.batches % 2 == 0 && !batch.check() {
            return Err(Halt::CheckFailed);
        }
        let spare = self.spares.try_recv().unwrap_or_default();
        let full = std::mem::replace(batch, spare);
        self.send
            .send(Job::Copies(full))
            .map_err(|_| Halt::WriterGone)?;
        self.batches += 1;
        Ok(())
    }

    /// Sends the records of `records`, if any, leaving it empty.
    fn decoded(&mut self, records: &mut Vec<Decoded>) -> Result<(), Halt> {
        if records.is_empty() {
            return Ok(());
        }
        self.send
            .send(Job::Records(std::mem::take(records)))
            .map_err(|_| Halt::WriterGone)
    }
}

/// Reads every record of `paths` into jobs for the writing thread, checking `guess` if any.
fn read_jobs(
    paths: &[PathBuf],
    progress: &Progress,
    union: &mut SchemaUnion,
    schema: &Schema,
    feed: &mut Feed,
    batch_records: usize,
    mut guess: Option<Guess<'_>>,
) -> Result<(Merged, SeenContexts), Halt> {
    let mut batch = RecordBatch::new();
    let mut decoded = Vec::new();
    let mut decoded_bytes = 0;
    let mut record = MethodRecord::default();
    let (mut n, mut copied) = (0, 0);
    let mut output = OutputSchema::new(schema);
    let mut seen = SeenContexts::default();
    let mut trailer = Trailer::default();
    let open = LogReader::open;
    let warnings = each_log(paths, progress, PASS_2, open, |path, reader, read| {
        output.next_file();
        if let Some(guess) = guess.as_mut() {
            guess.next_file();
        }
        while reader.next_raw()? {
            let copy = match reader.current_schema()? {
                Some(s) if guess.as_mut().is_some_and(|g| !g.holds(s)) => {
                    return Err(Halt::GuessWrong)
                }
                Some(s) => output.is_output(s),
                None => false,
            };
            if copy {
                feed.decoded(&mut decoded)?;
                decoded_bytes = 0;
            }
            if copy && reader.take_current_to_copy(&mut batch) {
                seen.add(reader.current_context().unwrap_or(-1));
                copied += 1;
                if batch.len() >= batch_records || batch.bytes() >= BATCH_BYTES {
                    feed.copies(&mut batch)?;
                }
            } else {
                feed.copies(&mut batch)?;
                reader.decode_current(&mut record)?;
                if guess.as_mut().is_some_and(|g| !g.holds(&record.schema)) {
                    return Err(Halt::GuessWrong);
                }
                let mut counts = MethodCounts::default();
                if !union.remap_sealed(&record.schema, &record.counts, &mut counts) {
                    return Err(Halt::Failed(changed_while_read(path)));
                }
                let info = &record.info;
                seen.add(info.context);
                // What the record holds: a schema of many kinds makes large lists.
                decoded_bytes += info.name.as_ref().map_or(0, String::len)
                    + std::mem::size_of_val(counts.kinds.as_slice())
                    + std::mem::size_of_val(counts.phases.as_slice())
                    + std::mem::size_of_val(counts.phase_kind_bytes.as_slice());
                decoded.push(Decoded {
                    name: info.name.clone(),
                    context: info.context,
                    tier: info.tier.clone(),
                    counts,
                });
                if decoded.len() >= batch_records || decoded_bytes >= BATCH_BYTES {
                    feed.decoded(&mut decoded)?;
                    decoded_bytes = 0;
                }
            }
            n += 1;
            read.one();
        }
        trailer.take(reader);
        Ok(())
    })?;
    feed.copies(&mut batch)?;
    feed.decoded(&mut decoded)?;
    if !warnings.is_empty() {
        let notes = Job::CutNotes(warnings.clone());
        feed.send.send(notes).map_err(|_| Halt::WriterGone)?;
    }
    if !trailer.is_empty() {
        let trailer = Job::Trailer(trailer);
        feed.send.send(trailer).map_err(|_| Halt::WriterGone)?;
    }
    let merged = Merged {
        records: n,
        copied,
        warnings,
        schemas_compared: output.compared,
        written_again: false,
        first_pass_guessed: false,
    };
    Ok((merged, seen))
}

/// The writing thread: writes every job to `output` (the file `out`), checking the batches of
/// copies not checked yet. False when one fails its check (what it wrote is then of no use).
fn write_jobs(
    output: OutputWriter<'_>,
    out: &Path,
    schema: &Shared<Schema>,
    jobs: Receiver<Job>,
    give_back: Sender<RecordBatch>,
) -> Result<bool, Error> {
    let io = |e: std::io::Error| io_error(out, "write", &e);
    let mut writer = LogWriter::new(BufWriter::with_capacity(MERGE_BUFFER, output)).map_err(io)?;
    for job in jobs {
        match job {
            Job::Copies(mut batch) => {
                if !batch.is_checked() && !batch.check() {
                    return Ok(false);
                }
                writer.write_batch(schema, &batch).map_err(io)?;
                batch.clear();
                // The reading thread may be done: then the batch is not needed.
                let _ = give_back.send(batch);
            }
            Job::Records(records) => {
                for r in &records {
                    let (name, tier) = (r.name.as_deref(), r.tier.as_deref());
                    writer
                        .write(schema, name, r.context, tier, &r.counts)
                        .map_err(io)?;
                }
            }
            Job::CutNotes(notes) => {
                for note in &notes {
                    writer.write_cut_note(note).map_err(io)?;
                }
            }
            Job::Trailer(trailer) => trailer.write(&mut writer).map_err(io)?,
        }
    }
    writer
        .finish()
        .and_then(|w| w.into_inner().map_err(|e| e.into_error()))
        .map_err(io)?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::Guess;
    use jitarena::counters::Schema;
    use jitarena::Shared;

    fn schema(kinds: &[&str]) -> Shared<Schema> {
        let names = kinds.iter().map(|k| k.to_string()).collect();
        Shared::new(Schema::new(names, vec!["P".to_string()]).unwrap())
    }

    /// Records switching between two definitions of the first record's names bear the guess
    /// out with one comparison by name each, however often they switch; other names do not,
    /// nor does a log that had no record.
    #[test]
    fn a_guess_compares_each_schema_of_a_log_by_name_once() {
        let (a, a_again, b) = (
            schema(&["A", "B"]),
            schema(&["A", "B"]),
            schema(&["B", "A"]),
        );
        let firsts = [Some(Shared::clone(&a)), None];
        let mut guess = Guess::new(&firsts);
        guess.next_file();
        for _ in 0..1000 {
            assert!(guess.holds(&a) && guess.holds(&a_again));
        }
        assert_eq!(guess.compared, 2);
        assert!(!guess.holds(&b));
        guess.next_file();
        assert!(!guess.holds(&a));
    }
}
