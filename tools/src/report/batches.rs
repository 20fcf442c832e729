//! Reading a log on two cores: a reader thread reads the frames (checksums, and the record
//! heads, which depend on the record before) and decodes three batches of records in five; it
//! hands the others over undecoded ([`RawRecord`]), and the caller's thread decodes those
//! and tallies every record, in file order, so that results are the same as when read on one
//! thread.

use std::sync::mpsc::{channel, sync_channel};
use std::sync::Arc;

use jitarena::counters::Schema;
use jitarena::detached::RawRecord;
use jitarena::error::Error;
use jitarena::log::{LogReader, MethodCounts, MethodInfo, MethodRecord};

/// Records per batch: enough that handing a batch over costs little per record, few enough
/// that the batches in flight stay small (a record of the generated workload takes about 1 KB).
const BATCH: usize = 256;

/// Batches decoded ahead of the caller, at most.
const AHEAD: usize = 4;

/// A batch: its records (the first `len` hold this batch's), decoded or not (then in `raws`),
/// and the reader's error after them, if any.
struct Batch {
    records: Vec<MethodRecord>,
    raws: Vec<RawRecord>,
    len: usize,
    decoded: bool,
    error: Option<Error>,
}

/// Calls `each` with every record of `reader`, in file order, while the next records are read
/// and decoded on another thread. Stops at the first error, `each`'s or the reader's (a
/// reader's error comes after every record before it); returns the reader's warnings.
/// Batches (and the buffers of their records) are reused: memory follows the batches in
/// flight, not the file.
pub fn for_each_record(
    mut reader: LogReader,
    mut each: impl FnMut(&MethodRecord) -> Result<(), Error>,
) -> Result<Vec<String>, Error> {
    let (full_tx, full_rx) = sync_channel::<Batch>(AHEAD);
    let (empty_tx, empty_rx) = channel::<(Vec<MethodRecord>, Vec<RawRecord>)>();
    std::thread::scope(|scope| {
        let producer = scope.spawn(move || {
            for n in 0usize.. {
                let (mut records, mut raws) = empty_rx.try_recv().unwrap_or_default();
                // Two batches in five are decoded by the caller, whose tally takes about as
                // long as the reader's frames: so the two threads are about as busy (version
                // 2 only: version-1 records are decoded by their reader).
                let mut decoded = n % 5 < 3 || reader.version() < 2;
                let (mut len, mut error) = (0, None);
                while len < BATCH {
                    if records.len() == len {
                        records.push(blank());
                    }
                    if !decoded && raws.len() == len {
                        raws.push(RawRecord::new());
                    }
                    let next = if decoded {
                        reader.next_into(&mut records[len])
                    } else {
                        reader
                            .next_raw()
                            .and_then(|more| Ok(more && reader.detach_current(&mut raws[len])?))
                    };
                    match next {
                        Ok(true) => len += 1,
                        Ok(false) => break,
                        Err(e) => {
                            error = Some(e);
                            break;
                        }
                    }
                }
                decoded |= len == 0;
                let last = len < BATCH;
                let batch = Batch {
                    records,
                    raws,
                    len,
                    decoded,
                    error,
                };
                // A send fails only when the caller stopped (on an error of its own).
                if full_tx.send(batch).is_err() || last {
                    break;
                }
            }
            reader.warnings().to_vec()
        });
        let mut result = Ok(());
        for mut batch in full_rx.iter() {
            result = tally(&mut batch, &mut each);
            if result.is_err() {
                break;
            }
            // The reader may have finished already: then the batch is not needed.
            let _ = empty_tx.send((batch.records, batch.raws));
        }
        drop(full_rx); // a reader still sending stops
        let warnings = producer
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        result.map(|()| warnings)
    })
}

/// Decodes what the reader left undecoded in `batch` and calls `each` with its records; then
/// the reader's error, if any.
fn tally(
    batch: &mut Batch,
    each: &mut impl FnMut(&MethodRecord) -> Result<(), Error>,
) -> Result<(), Error> {
    let records = &mut batch.records[..batch.len];
    if batch.decoded {
        records.iter().try_for_each(&mut *each)?;
    } else {
        for (record, raw) in records.iter_mut().zip(&mut batch.raws) {
            raw.decode(record)?;
            each(record)?;
        }
    }
    batch.error.take().map_or(Ok(()), Err)
}

fn blank() -> MethodRecord {
    MethodRecord {
        schema: Arc::new(Schema::default()),
        info: MethodInfo::default(),
        counts: MethodCounts::default(),
    }
}
