//! Reading a log on a thread of its own: the reader (frames, checksums, record decoding)
//! runs on one core and hands records over in batches to the caller's thread, which tallies
//! them in file order, so that results are the same as when read on one thread.

use std::sync::mpsc::{channel, sync_channel};
use std::sync::Arc;

use jitarena::counters::Schema;
use jitarena::error::Error;
use jitarena::log::{LogReader, MethodCounts, MethodInfo, MethodRecord};

/// Records per batch: enough that handing a batch over costs little per record, few enough
/// that the batches in flight stay small (a record of the generated workload takes about 1 KB).
const BATCH: usize = 256;

/// Batches decoded ahead of the caller, at most.
const AHEAD: usize = 4;

/// A decoded batch: its records (the first `len` hold this batch's), and the reader's error
/// after them, if any.
struct Batch {
    records: Vec<MethodRecord>,
    len: usize,
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
    let (empty_tx, empty_rx) = channel::<Vec<MethodRecord>>();
    std::thread::scope(|scope| {
        let producer = scope.spawn(move || {
            loop {
                let mut records = empty_rx.try_recv().unwrap_or_default();
                let (mut len, mut error) = (0, None);
                while len < BATCH {
                    if records.len() == len {
                        records.push(blank());
                    }
                    match reader.next_into(&mut records[len]) {
                        Ok(true) => len += 1,
                        Ok(false) => break,
                        Err(e) => {
                            error = Some(e);
                            break;
                        }
                    }
                }
                let last = len < BATCH;
                // A send fails only when the caller stopped (on an error of its own).
                if full_tx
                    .send(Batch {
                        records,
                        len,
                        error,
                    })
                    .is_err()
                    || last
                {
                    break;
                }
            }
            reader.warnings().to_vec()
        });
        let mut result = Ok(());
        for batch in full_rx.iter() {
            result = batch.records[..batch.len].iter().try_for_each(&mut each);
            if let (Ok(()), Some(e)) = (&result, batch.error) {
                result = Err(e);
            }
            if result.is_err() {
                break;
            }
            // The reader may have finished already: then the batch is not needed.
            let _ = empty_tx.send(batch.records);
        }
        drop(full_rx); // a reader still sending stops
        let warnings = producer
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        result.map(|()| warnings)
    })
}

fn blank() -> MethodRecord {
    MethodRecord {
        schema: Arc::new(Schema::default()),
        info: MethodInfo::default(),
        counts: MethodCounts::default(),
    }
}
