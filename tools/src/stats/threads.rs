//! `jitarena stats` on two threads: this one reads the logs (frames, checksums, the records'
//! heads) and passes batches of records to the other, which decodes and adds them up; this one
//! adds a batch itself whenever the other has enough waiting. Each keeps its own totals, added
//! together at the end.

use std::path::PathBuf;
use std::sync::mpsc::{self, Receiver, Sender, SyncSender, TrySendError};

use super::{Accumulator, Last, Stats};
use jitarena::counters::Schema;
use jitarena::error::{Error, ErrorCode};
use jitarena::log::{LogReader, MethodRecord, RecordBatch};
use jitarena::Shared;

/// Records in a batch, at most.
pub(super) const BATCH_RECORDS: usize = 1024;

/// Bytes of counters and names in a batch: once past this, the batch goes (a record of a long
/// name goes alone), so that the batches in flight hold little memory.
const BATCH_BYTES: usize = 1 << 20;

/// Batches waiting for the adding thread, at most.
const BATCHES_QUEUED: usize = 4;

/// A batch of consecutive records, the first of them the `first`th of the logs.
struct Job {
    batch: RecordBatch,
    first: u64,
}

/// The statistics of `files` on two threads. `None` when the second thread cannot start; an
/// error for any error (the caller reads the logs again on one thread).
pub(super) fn collect(files: &[PathBuf], batch_records: usize) -> Result<Option<Stats>, Error> {
    let (send, jobs) = mpsc::sync_channel(BATCHES_QUEUED);
    let (give_back, spares) = mpsc::channel();
    let (read, added) = std::thread::scope(|scope| {
        let adder = std::thread::Builder::new()
            .name("stats adder".into())
            .spawn_scoped(scope, move || add_jobs(jobs, give_back));
        let Ok(adder) = adder else {
            return (None, None);
        };
        let mut feed = Feed {
            send,
            spares,
            kept: Last::default(),
        };
        let read = read_all(files, &mut feed, batch_records.max(1));
        drop(feed); // the adder ends once it has taken every batch
        let added = adder.join().unwrap_or_else(|_| {
            Err(Error::new(
                ErrorCode::Internal,
                "the stats adding thread failed",
            ))
        });
        (Some(read), Some(added))
    });
    let (Some(read), Some(added)) = (read, added) else {
        return Ok(None);
    };
    let mut acc = read?;
    acc.take_in(added?)?;
    acc.finish(files.len()).map(Some)
}

/// The reading thread's end of the queue of batches.
struct Feed {
    send: SyncSender<Job>,
    /// Batches added up, given back to be filled again.
    spares: Receiver<RecordBatch>,
    /// What the batches this thread adds itself resolved their schemas and tiers to.
    kept: Last,
}

impl Feed {
    /// Passes on the records of `batch`, if any, leaving it empty: to the adding thread, or,
    /// when [`BATCHES_QUEUED`] batches already wait for it, adds them to `acc` (the thread that
    /// has less to do does more).
    fn pass(
        &mut self,
        batch: &mut RecordBatch,
        first: u64,
        acc: &mut Accumulator,
    ) -> Result<(), Error> {
        if batch.is_empty() {
            return Ok(());
        }
        let out = std::mem::take(batch);
        match self.send.try_send(Job { batch: out, first }) {
            Ok(()) => {
                *batch = self.spares.try_recv().unwrap_or_default();
                Ok(())
            }
            Err(TrySendError::Full(job)) => {
                *batch = job.batch;
                acc.add_batch(batch, first, &mut self.kept)?;
                batch.clear();
                Ok(())
            }
            Err(TrySendError::Disconnected(_)) => Err(Error::new(
                ErrorCode::Internal,
                "the stats adding thread stopped early",
            )),
        }
    }
}

/// Reads every record of `files`, passing them on in batches; the records that cannot go in
/// one (those of version-1 logs) are added here, in their turn.
fn read_all(
    files: &[PathBuf],
    feed: &mut Feed,
    batch_records: usize,
) -> Result<Accumulator, Error> {
    let mut acc = Accumulator::default();
    let mut batch = RecordBatch::new();
    let mut first = 0;
    let mut r = MethodRecord::default();
    for path in files {
        let mut reader = LogReader::open(path)?;
        let mut last = Last::default();
        // The schema last added to the union: the union takes schemas in the order the
        // records name them, as one thread's does, whoever adds the records.
        let mut added: Option<Shared<Schema>> = None;
        let result = (|| {
            while reader.next_raw()? {
                let at = acc.next;
                acc.next += 1;
                if let Some(schema) = reader.current_schema()? {
                    if !added.as_ref().is_some_and(|s| Shared::ptr_eq(s, schema)) {
                        acc.union.add(schema);
                        added = Some(Shared::clone(schema));
                    }
                }
                if batch.is_empty() {
                    first = at;
                }
                if reader.take_current(&mut batch) {
                    if batch.len() >= batch_records || batch.bytes() >= BATCH_BYTES {
                        feed.pass(&mut batch, first, &mut acc)?;
                    }
                } else {
                    feed.pass(&mut batch, first, &mut acc)?;
                    acc.add_current(&reader, &mut r, &mut last, path, at)?;
                }
            }
            Ok(())
        })();
        acc.flush_tier(&mut last, path)?;
        result?;
        acc.stats.warnings.extend(reader.warnings().iter().cloned());
        acc.stats.failed_compiles += reader.failed_compiles().len() as u64;
    }
    feed.pass(&mut batch, first, &mut acc)?;
    let mut kept = std::mem::take(&mut feed.kept);
    acc.flush_tier(&mut kept, std::path::Path::new(""))?;
    Ok(acc)
}

/// The adding thread: adds up every batch it is given.
fn add_jobs(jobs: Receiver<Job>, give_back: Sender<RecordBatch>) -> Result<Accumulator, Error> {
    let mut acc = Accumulator::default();
    let mut last = Last::default();
    for Job { mut batch, first } in jobs {
        acc.add_batch(&batch, first, &mut last)?;
        batch.clear();
        // The reading thread may be done: then the batch is not needed.
        let _ = give_back.send(batch);
    }
    acc.flush_tier(&mut last, std::path::Path::new(""))?;
    Ok(acc)
}
