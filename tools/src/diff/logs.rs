//! Diffing stats logs, streaming: memory grows with the number of methods (about 130 bytes
//! each), not with the size of the files.
//!
//! 1. Base, decoded whole: each method's identity, bytes and tier group; totals and per-kind
//!    sums of all base methods.
//! 2. Diff, decoded whole: matched against the base; totals and sums of the matched ones.
//! 3. Base again, decoding only the methods no diff method matched (their figures are taken
//!    back out of the sums) and those the top lists name (for the kind that moved most).
//! 4. Diff again, decoding only the methods the top lists name.

use std::hash::{Hash, Hasher};
use std::path::PathBuf;
use std::sync::Arc;

use super::tally::{finish, method_delta, strip_ignored, FastMap, Tally, TopLists};
use super::{keep_largest, tier_group, DiffOptions, MemDiff};
use crate::report::stats::expand_inputs;
use jitarena::counters::Schema;
use jitarena::error::Error;
use jitarena::log::{LogReader, MethodCounts, MethodInfo, MethodRecord};

/// A method's identity: its context number when it has one, else a 128-bit hash of its name
/// and tier (bit 127 set, so that the two cannot meet; a collision is out of reach).
fn identity(info: &MethodInfo) -> u128 {
    if info.context >= 0 {
        return info.context as u128;
    }
    let mut a = std::collections::hash_map::DefaultHasher::new();
    let mut b = std::collections::hash_map::DefaultHasher::new();
    (0u8, &info.name, &info.tier).hash(&mut a);
    (1u8, &info.name, &info.tier).hash(&mut b);
    (1u128 << 127) | (u128::from(a.finish()) << 64) | u128::from(b.finish())
}

/// Base methods by identity: the first occurrence in a plain map, later occurrences of the same
/// identity (rare: the same method compiled twice) in a second one, by occurrence number.
#[derive(Default)]
struct Index {
    first: FastMap<u128, u32>,
    repeats: FastMap<(u128, u32), u32>,
    base_seen: FastMap<u128, u32>,
    diff_seen: FastMap<u128, u32>,
}

impl Index {
    fn insert(&mut self, id: u128, i: u32) {
        if let std::collections::hash_map::Entry::Vacant(v) = self.first.entry(id) {
            v.insert(i);
            return;
        }
        let n = self.base_seen.entry(id).or_insert(0);
        *n += 1;
        self.repeats.insert((id, *n), i);
    }

    /// The base method a diff method matches: the same identity, the same occurrence.
    fn find(&mut self, id: u128, matched: &[bool]) -> Option<u32> {
        let first = *self.first.get(&id)?;
        if !matched[first as usize] {
            return Some(first);
        }
        let n = self.diff_seen.entry(id).or_insert(0);
        *n += 1;
        self.repeats
            .get(&(id, *n))
            .copied()
            .filter(|&i| !matched[i as usize])
    }
}

/// Reads the records of a side's files in order; `f` gets the reader positioned on each record
/// (undecoded) and a record buffer to decode into when it wants to.
fn stream(
    files: &[PathBuf],
    warnings: &mut Vec<String>,
    mut f: impl FnMut(&LogReader, &mut MethodRecord) -> Result<(), Error>,
) -> Result<(), Error> {
    let mut record = MethodRecord {
        schema: Arc::new(Schema::default()),
        info: MethodInfo::default(),
        counts: MethodCounts::default(),
    };
    for path in files {
        let mut reader = LogReader::open(path)?;
        while reader.next_raw()? {
            f(&reader, &mut record)?;
        }
        warnings.extend(reader.warnings().iter().cloned());
    }
    Ok(())
}

/// Reads and decodes every record of a side's files on a second thread, handing them to `f`
/// in order on this one: decoding (checksums, numbers) and tallying overlap on two cores.
fn stream_decoded(
    files: &[PathBuf],
    warnings: &mut Vec<String>,
    cut: &mut Vec<String>,
    progress: &crate::progress::Progress,
    mut f: impl FnMut(&MethodRecord),
) -> Result<(), Error> {
    const BATCH: usize = 512;
    const POOL: usize = 6;
    type Batch = Vec<MethodRecord>;
    let (full_tx, full_rx) = std::sync::mpsc::sync_channel::<Result<(Batch, usize), Error>>(4);
    let (empty_tx, empty_rx) = std::sync::mpsc::channel::<Batch>();
    std::thread::scope(|scope| {
        let reader = scope.spawn(move || -> (Vec<String>, Vec<String>) {
            let mut warnings = Vec::new();
            let mut cut = Vec::new();
            let blank = || MethodRecord {
                schema: Arc::new(Schema::default()),
                info: MethodInfo::default(),
                counts: MethodCounts::default(),
            };
            let mut batch: Batch = (0..BATCH).map(|_| blank()).collect();
            let (mut n, mut made) = (0, 1);
            for path in files {
                let result = LogReader::open(path).and_then(|mut reader| {
                    while reader.next_raw()? {
                        reader.decode_current(&mut batch[n])?;
                        n += 1;
                        if n == BATCH {
                            // Reuse a batch the consumer is done with (their buffers have grown to
                            // fit), once there are enough of them in flight.
                            let next = match empty_rx.try_recv() {
                                Ok(b) => b,
                                Err(_) if made < POOL => {
                                    made += 1;
                                    (0..BATCH).map(|_| blank()).collect()
                                }
                                Err(_) => match empty_rx.recv() {
                                    Ok(b) => b,
                                    Err(_) => return Ok(()),
                                },
                            };
                            if full_tx
                                .send(Ok((std::mem::replace(&mut batch, next), n)))
                                .is_err()
                            {
                                return Ok(());
                            }
                            n = 0;
                        }
                    }
                    if !reader.warnings().is_empty() {
                        cut.push(path.display().to_string());
                    }
                    warnings.extend(reader.warnings().iter().cloned());
                    Ok(())
                });
                if let Err(e) = result {
                    let _ = full_tx.send(Err(e));
                    return (warnings, cut);
                }
            }
            let _ = full_tx.send(Ok((batch, n)));
            (warnings, cut)
        });
        let mut outcome = Ok(());
        for message in full_rx {
            match message {
                Ok((batch, n)) => {
                    batch[..n].iter().for_each(&mut f);
                    progress.add(n as u64);
                    let _ = empty_tx.send(batch);
                }
                Err(e) => {
                    outcome = Err(e);
                    break;
                }
            }
        }
        drop(empty_tx);
        match reader.join() {
            Ok((w, c)) => {
                warnings.extend(w);
                cut.extend(c);
            }
            Err(_) => {
                outcome = outcome.and(Err(Error::new(
                    jitarena::ErrorCode::Internal,
                    "the log reader thread failed",
                )))
            }
        }
        outcome
    })
}

/// Compares two sets of stats logs (files or directories of shards).
pub fn diff_logs(
    base: &[PathBuf],
    diff: &[PathBuf],
    options: &DiffOptions,
) -> Result<MemDiff, Error> {
    let (base_files, diff_files) = (expand_inputs(base)?, expand_inputs(diff)?);
    let mut t = Tally::default();
    t.coverage.base_files = base_files.len();
    t.coverage.diff_files = diff_files.len();
    let mut index = Index::default();
    let mut counts = MethodCounts::default();
    let mut warnings = Vec::new();
    let ignore = &options.ignore_kinds;

    let mut cut = Vec::new();
    let top_n = options.top;

    // 1. Base.
    let progress = &options.progress;
    progress.set_stage("base side");
    stream_decoded(&base_files, &mut warnings, &mut cut, progress, |r| {
        t.union.add(&r.schema);
        t.union.remap(&r.schema, &r.counts, &mut counts);
        let totals = t.without_ignored(&mut counts, ignore);
        let group = tier_group(r.info.tier.as_deref());
        index.insert(identity(&r.info), t.base_bytes.len() as u32);
        t.base_bytes.push(totals.bytes);
        t.context.push(r.info.context);
        t.group.push(group);
        t.overflow |= !t.groups_base[0].add(&totals);
        t.groups_base[group as usize].add(&totals);
        t.overflow |= !t.sums_base.add(&counts, &t.union, true);
    })?;
    t.check_overflow(&base_files)?;
    t.diff_bytes = vec![0; t.base_bytes.len()];
    t.matched = vec![false; t.base_bytes.len()];
    let mut diff_ordinal = vec![u32::MAX; t.base_bytes.len()];

    // 2. Diff.
    let mut ordinal = 0u32;
    progress.set_stage("diff side");
    stream_decoded(&diff_files, &mut warnings, &mut cut, progress, |r| {
        t.union.add(&r.schema);
        t.union.remap(&r.schema, &r.counts, &mut counts);
        let totals = t.without_ignored(&mut counts, ignore);
        match index.find(identity(&r.info), &t.matched) {
            Some(i) => {
                let i = i as usize;
                t.matched[i] = true;
                t.diff_bytes[i] = totals.bytes;
                diff_ordinal[i] = ordinal;
                t.overflow |= !t.groups_diff[0].add(&totals);
                t.groups_diff[t.group[i] as usize].add(&totals);
                t.overflow |= !t.sums_diff.add(&counts, &t.union, true);
            }
            None => {
                t.coverage.only_diff += 1;
                match t.coverage.only_diff_bytes.checked_add(totals.bytes) {
                    Some(sum) => t.coverage.only_diff_bytes = sum,
                    None => t.overflow = true,
                }
                keep_largest(
                    &mut t.coverage.missing_in_base,
                    top_n,
                    totals.bytes,
                    &r.info,
                );
            }
        }
        ordinal += 1;
    })?;
    t.check_overflow(&diff_files)?;
    t.coverage.truncated = cut;
    drop(index);

    let top = TopLists::of(&t, options);
    let wanted: FastMap<u32, usize> = top.all.iter().enumerate().map(|(k, &i)| (i, k)).collect();
    let wanted_diff: FastMap<u32, usize> = top
        .all
        .iter()
        .enumerate()
        .map(|(k, &i)| (diff_ordinal[i as usize], k))
        .collect();
    type Kinds = Vec<(u32, u64)>;
    let mut detail: Vec<(MethodInfo, Kinds, Kinds)> = vec![Default::default(); top.all.len()];
    let mut diff_detail: Vec<Kinds> = vec![Vec::new(); top.all.len()];
    t.sync_ignored(ignore);
    for name in ignore {
        if !(0..t.union.kind_count() as u32).any(|k| t.union.kind_name(k) == name) {
            warnings.push(format!(
                "--ignore-kind {}: no log names this kind (is it spelled as the JIT names it?)",
                crate::report::visible(name)
            ));
        }
    }

    // 3 and 4 at once, on two threads: they read different files.
    let (mut again_base, mut again_diff) = (Vec::new(), Vec::new());
    let Tally {
        union,
        ignored,
        matched,
        group,
        coverage,
        groups_base,
        sums_base,
        base_bytes,
        ..
    } = &mut t;
    let (union, ignored) = (&*union, &*ignored);
    progress.set_stage("both sides again, for the listed methods");
    let (pass3, pass4) = std::thread::scope(|scope| {
        let pass4 = scope.spawn(|| {
            let mut counts = MethodCounts::default();
            let mut n = 0u32;
            stream(&diff_files, &mut again_diff, |reader, r| {
                if let Some(&k) = wanted_diff.get(&n) {
                    reader.decode_current(r)?;
                    union.remap(&r.schema, &r.counts, &mut counts);
                    strip_ignored(ignored, &mut counts);
                    diff_detail[k] = counts.kinds.iter().map(|k| (k.0, k.1)).collect();
                }
                n += 1;
                Ok(())
            })
        });
        // 3. Base again: take the unmatched methods back out; keep the listed ones' detail.
        let mut i = 0usize;
        let pass3 = stream(&base_files, &mut again_base, |reader, r| {
            let listed = wanted.get(&(i as u32));
            if i < matched.len() && (!matched[i] || listed.is_some()) {
                reader.decode_current(r)?;
                union.remap(&r.schema, &r.counts, &mut counts);
                let totals = strip_ignored(ignored, &mut counts);
                if !matched[i] {
                    coverage.only_base += 1;
                    // A part of the base's total, which pass 1 checked: it cannot overflow.
                    coverage.only_base_bytes =
                        coverage.only_base_bytes.saturating_add(totals.bytes);
                    keep_largest(&mut coverage.missing_in_diff, top_n, totals.bytes, &r.info);
                    groups_base[0].sub(&totals);
                    groups_base[group[i] as usize].sub(&totals);
                    sums_base.add(&counts, union, false);
                }
                if let Some(&k) = listed {
                    detail[k].0 = r.info.clone();
                    detail[k].1 = counts.kinds.iter().map(|k| (k.0, k.1)).collect();
                }
            }
            i += 1;
            Ok(())
        })
        .and_then(|()| match i == base_bytes.len() {
            true => Ok(()),
            false => Err(Error::new(
                jitarena::ErrorCode::Io,
                "a base log changed while memdiff read it",
            )),
        });
        let pass4 = pass4.join().unwrap_or_else(|_| {
            Err(Error::new(
                jitarena::ErrorCode::Internal,
                "the diff reader thread failed",
            ))
        });
        (pass3, pass4)
    });
    pass3?;
    pass4?;
    for (d, kinds) in detail.iter_mut().zip(diff_detail) {
        d.2 = kinds;
    }
    let lists = top.describe(|i| {
        let (info, b, d) = &detail[wanted[&i]];
        method_delta(&t, i, info, b, d)
    });
    Ok(finish(t, options, lists, &top.all, warnings))
}
