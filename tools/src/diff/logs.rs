//! Diffing stats logs, streaming: memory grows with the number of methods (about 60 bytes
//! each), not with the size of the files.
//!
//! 1. Both sides at once, one thread each, decoded whole (see [`Side`]): each method's
//!    identity, bytes and tier group; totals and per-kind sums of all of the side's methods.
//! 2. The match: diff methods against base methods by identity, in the diff's order.
//! 3. Base again, decoding only the methods no diff method matched (their figures are taken
//!    back out of the sums) and those the top lists name (for the kind that moved most).
//! 4. Diff again, at the same time: the same for its unmatched methods, and the figures of
//!    matched methods whose tier group differs from their base method's are moved to the
//!    base method's group (the groups are the base's).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};

use super::failed::Failed;
use super::side::{relay, FileMarks, Keys, Side, MARK_EVERY};
use super::tally::{finish, method_delta, rank, strip_ignored, FastMap, Tally};
use super::{identity, repeats};
use super::{tier_group, DiffOptions, Largest, MemDiff};
use crate::inputs::expand_inputs;
use crate::progress::Progress;
use crate::text::thousands;
use jitarena::error::Error;
use jitarena::format::io_error;
use jitarena::log::{LogReader, MethodCounts, MethodInfo, MethodRecord};

/// Base methods by identity: the first occurrence in a table by context number (when the
/// context numbers are dense enough) or a map, later occurrences of the same identity (rare:
/// the same method compiled twice) in a second map, by occurrence number.
#[derive(Default)]
struct Index {
    dense: Vec<u32>,
    first: FastMap<u128, u32>,
    repeats: FastMap<(u128, u32), u32>,
    base_seen: FastMap<u128, u32>,
    diff_seen: FastMap<u128, u32>,
}

/// An empty cell of [`Index::dense`].
const NONE: u32 = u32::MAX;

impl Index {
    /// The index of a side's methods.
    fn of(keys: &Keys) -> Index {
        let mut index = Index::default();
        let n = keys.len();
        // A table of 4 bytes per context number, as long as that is at most 16 per method.
        if let Some(max) = keys.max_context().filter(|&m| m < 4 * n as u64 + 4096) {
            index.dense = vec![NONE; max as usize + 1];
        }
        for i in 0..n {
            index.insert(keys.id(i), i as u32);
        }
        index
    }

    fn insert(&mut self, id: u128, i: u32) {
        match self
            .dense
            .get_mut(id as usize)
            .filter(|_| id < NONE as u128)
        {
            Some(cell) if *cell == NONE => {
                *cell = i;
                return;
            }
            Some(_) => {}
            None => {
                if let std::collections::hash_map::Entry::Vacant(v) = self.first.entry(id) {
                    v.insert(i);
                    return;
                }
            }
        }
        let n = self.base_seen.entry(id).or_insert(0);
        *n += 1;
        self.repeats.insert((id, *n), i);
    }

    /// The base method a diff method matches: the same identity, the same occurrence.
    fn find(&mut self, id: u128, matched: &[bool]) -> Option<u32> {
        let first = match self.dense.get(id as usize).filter(|_| id < NONE as u128) {
            Some(&NONE) => return None,
            Some(&i) => i,
            None => *self.first.get(&id)?,
        };
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

/// Hands `f` each record of a side whose index `needed` lists (in increasing order), with a
/// reader positioned on it (undecoded) and a record buffer to decode it into. Step 1 read every
/// record, so only those decoded are checked again. With few records needed, the reading
/// resumes at the mark before each (passing over fewer than [`MARK_EVERY`] records to reach
/// it, but where names are long: see [`FileMarks`]); with many, it reads the files through.
fn visit_needed(
    files: &[FileMarks],
    needed: &[u32],
    side: &str,
    f: impl FnMut(usize, &LogReader, &mut MethodRecord) -> Result<(), Error>,
) -> Result<(), Error> {
    let total: usize = files.iter().map(|file| file.count).sum();
    if needed.len().saturating_mul(MARK_EVERY) >= total {
        visit_through(files, needed, side, f)
    } else {
        visit_by_marks(files, needed, side, f)
    }
}

/// An empty record buffer.
fn new_record() -> MethodRecord {
    MethodRecord::default()
}

/// [`visit_needed`], reading every file through.
fn visit_through(
    files: &[FileMarks],
    needed: &[u32],
    side: &str,
    mut f: impl FnMut(usize, &LogReader, &mut MethodRecord) -> Result<(), Error>,
) -> Result<(), Error> {
    let mut record = new_record();
    let mut wants = needed.iter().map(|&i| i as usize).peekable();
    for file in files {
        let mut reader = LogReader::open_again(&file.path)?;
        let mut index = file.first;
        while reader.next_raw()? {
            if wants.next_if_eq(&index).is_some() {
                f(index, &reader, &mut record)?;
            }
            index += 1;
        }
        if index != file.first + file.count {
            return Err(changed(side));
        }
    }
    Ok(())
}

/// [`visit_needed`], resuming at the mark before each record needed.
fn visit_by_marks(
    files: &[FileMarks],
    needed: &[u32],
    side: &str,
    mut f: impl FnMut(usize, &LogReader, &mut MethodRecord) -> Result<(), Error>,
) -> Result<(), Error> {
    let mut record = new_record();
    // The file being read, its reader, and the index of the record its next step reads.
    let mut at: Option<(usize, LogReader, usize)> = None;
    for want in needed.iter().map(|&i| i as usize) {
        let which = files.partition_point(|file| file.first + file.count <= want);
        let file = files.get(which).ok_or_else(|| changed(side))?;
        let (from, mark) = file
            .marks
            .partition_point(|(i, _)| *i <= want)
            .checked_sub(1)
            .and_then(|m| file.marks.get(m))
            .ok_or_else(|| changed(side))?;
        let onward =
            matches!(&at, Some((w, _, next)) if *w == which && (*from..=want).contains(next));
        if !onward {
            at = Some((
                which,
                LogReader::resume(&file.path, mark, &file.dictionary)?,
                *from,
            ));
        }
        let Some((_, reader, next)) = at.as_mut() else {
            return Err(internal("second reading"));
        };
        while *next <= want {
            if !reader.next_raw()? {
                return Err(changed(side));
            }
            *next += 1;
        }
        f(want, reader, &mut record)?;
    }
    Ok(())
}

/// The state of a diff method after the match.
const SAME_GROUP: u8 = 0;
/// A diff method no base method matched.
const UNMATCHED: u8 = 1;
/// A matched diff method whose tier group is not its base method's: `MOVED + base group`.
const MOVED: u8 = 2;
/// A diff method no base method matched that repeats a context of the diff seen before it: a
/// duplicate, not a method the base misses.
const REPEAT: u8 = u8::MAX;

fn internal(what: &str) -> Error {
    Error::new(jitarena::ErrorCode::Internal, format!("the {what} failed"))
}

fn changed(side: &str) -> Error {
    Error::new(
        jitarena::ErrorCode::Io,
        format!("a {side} log changed while memdiff read it"),
    )
}

/// Reads both sides at once, each on a thread of its own. The first side to fail stops the
/// other, and its error is returned at once: the other side's thread is not waited for, so
/// that an input that never ends (a pipe whose writer stays open) cannot hold the error back;
/// that thread stops at its next check (see [`Side::read`]) or with the process.
fn read_both(
    base_files: &[PathBuf],
    diff_files: &[PathBuf],
    ignore: &[String],
    progress: &Progress,
) -> Result<(Side, Side), Error> {
    let stop = Arc::new(AtomicBool::new(false));
    let (send, receive) = mpsc::channel();
    for (which, files) in [(0usize, base_files), (1, diff_files)] {
        let (files, names, bar, flag, send) = (
            files.to_vec(),
            ignore.to_vec(),
            progress.clone(),
            Arc::clone(&stop),
            send.clone(),
        );
        std::thread::Builder::new()
            .name(["memdiff base side", "memdiff diff side"][which].into())
            .spawn(move || {
                let side = Side::read(&files, &names, &bar, &flag);
                if side.is_err() {
                    flag.store(true, Ordering::Relaxed);
                }
                // The receiver is gone only when the other side failed first.
                let _ = send.send((which, side));
            })
            .map_err(|e| {
                stop.store(true, Ordering::Relaxed);
                internal(&format!("start of a reader thread ({e})"))
            })?;
    }
    drop(send);
    let mut sides = [None, None];
    // One message from each thread: a side stopped by the other's failure (`None`) comes
    // before or after that failure, which is returned.
    for _ in 0..2 {
        let (which, side) = receive
            .recv()
            .map_err(|_| internal("reader thread of a side"))?;
        sides[which] = side.inspect_err(|_| stop.store(true, Ordering::Relaxed))?;
    }
    match sides {
        [Some(base), Some(diff)] => Ok((base, diff)),
        // A side stops only when the other failed, and that error was returned above.
        _ => Err(internal("reading of both sides")),
    }
}

/// What tells whether a file changed: its length and modification time.
type Stamp = (u64, Option<std::time::SystemTime>);

/// Refuses an input that cannot be read twice (a pipe, a device): the first pass would take
/// its records and the third would find it empty, or wait forever for a writer. Returns the
/// file's [`Stamp`].
fn check_rereadable(path: &Path) -> Result<Stamp, Error> {
    let meta = regular_file(path, "memdiff")?;
    Ok((meta.len(), meta.modified().ok()))
}

/// The metadata of `path`, a regular file; an error naming it otherwise (a pipe or a device,
/// which `tool`, reading each log twice, would find empty or wait on forever the second time).
pub(crate) fn regular_file(path: &Path, tool: &str) -> Result<std::fs::Metadata, Error> {
    let meta = std::fs::metadata(path).map_err(|e| io_error(path, "open", &e))?;
    if meta.is_file() {
        return Ok(meta);
    }
    Err(Error::new(
        jitarena::ErrorCode::Io,
        format!(
            "{}: not a regular file (a pipe?); {tool} reads each log twice, so write it to a file first",
            path.display()
        ),
    ))
}

/// Checks that each of `files` still has the [`Stamp`] of `stamps` taken before reading it.
fn unchanged<'a>(files: impl Iterator<Item = &'a PathBuf>, stamps: &[Stamp]) -> Result<(), Error> {
    for (path, stamp) in files.zip(stamps) {
        if check_rereadable(path)? != *stamp {
            return Err(Error::new(
                jitarena::ErrorCode::Io,
                format!(
                    "{}: changed while memdiff read it (its length or modification time is not what it was at the start)",
                    path.display()
                ),
            ));
        }
    }
    Ok(())
}

/// Compares two sets of stats logs (files or directories of shards).
pub fn diff_logs(
    base: &[PathBuf],
    diff: &[PathBuf],
    options: &DiffOptions,
) -> Result<MemDiff, Error> {
    let (base_files, diff_files) = (expand_inputs(base)?, expand_inputs(diff)?);
    let stamps = base_files
        .iter()
        .chain(&diff_files)
        .map(|path| check_rereadable(path))
        .collect::<Result<Vec<Stamp>, Error>>()?;
    let progress = &options.progress;

    // 1. Both sides, one thread each.
    progress.set_stage("both sides");
    let (mut base_side, mut diff_side) =
        read_both(&base_files, &diff_files, &options.ignore_kinds, progress)?;
    let marks = [
        std::mem::take(&mut base_side.files),
        std::mem::take(&mut diff_side.files),
    ];
    let mut t = Tally {
        overflow: base_side.overflow,
        ..Tally::default()
    };
    t.check_overflow(&base_files)?;
    t.overflow = diff_side.overflow;
    t.check_overflow(&diff_files)?;
    t.coverage.base_files = base_files.len();
    t.coverage.diff_files = diff_files.len();
    let (mut warnings, builds) = identities(&base_side, &diff_side, &marks);
    take_sums(&mut t, &mut base_side, &mut diff_side);
    let repeats = [
        repeats::repeats(&base_side.keys),
        repeats::repeats(&diff_side.keys),
    ];
    note_repeats(
        &mut t,
        &base_side,
        &diff_side,
        &repeats,
        &marks,
        options.top,
    );

    let failed = Failed::of(&base_side, &diff_side);
    failed.count_unpaired(&base_side, &diff_side, &mut t.coverage);

    // 2. The match.
    let matching = match_methods(&mut t, base_side, diff_side, &repeats[1], &failed);
    warnings.extend(renamed_warning(matching.renamed, matching.matched));
    let (top, matched_methods) = rank(&t, options);
    t.sync_ignored(&options.ignore_kinds);
    let unknown_ignored = unknown_kinds(&t, &options.ignore_kinds);

    // 3 and 4: both sides again, for the methods listed and those left unmatched.
    progress.set_stage("both sides again, for the listed and unmatched methods");
    let detail = read_again(
        &mut t,
        &marks,
        &matching,
        &repeats[0],
        &failed,
        &top.all,
        options.top,
    )?;
    // The second reading checks only the records it decodes (the first checked them all), so
    // each file must still be the one the first reading saw.
    unchanged(base_files.iter().chain(&diff_files), &stamps)?;
    let wanted: FastMap<u32, usize> = top.all.iter().enumerate().map(|(k, &i)| (i, k)).collect();
    let lists = top.describe(&matched_methods.methods, |i| {
        let (info, b, d) = &detail[wanted[&i]];
        method_delta(&t, i, info, b, d)
    });
    let mut out = finish(t, options, matched_methods, lists, &top.all, warnings);
    out.unknown_ignored = unknown_ignored;
    (out.builds_base, out.builds_diff) = builds;
    Ok(out)
}

/// The readers' warnings and what the logs say of the JITs that wrote them: each side's
/// builds, and the warnings of mixed builds or kind lists.
fn identities(
    base: &Side,
    diff: &Side,
    marks: &[Vec<FileMarks>; 2],
) -> (Vec<String>, (Vec<String>, Vec<String>)) {
    let mut warnings = base.warnings.clone();
    warnings.extend(diff.warnings.iter().cloned());
    let builds = (
        identity::builds_of(&base.builds),
        identity::builds_of(&diff.builds),
    );
    warnings.extend(identity::side_warnings("base", &base.builds, &marks[0]));
    warnings.extend(identity::side_warnings("diff", &diff.builds, &marks[1]));
    warnings.extend(identity::same_build_warning(&builds.0, &builds.1));
    (warnings, builds)
}

/// Takes the sides' sums into the tally: the files cut short, the limit hits, the united
/// names (the base's first, then the diff's new ones, in the order first seen), the per-kind
/// and per-phase sums and the groups' totals of every method (the unmatched ones are taken
/// back out by the second reading).
fn take_sums(t: &mut Tally, base: &mut Side, diff: &mut Side) {
    t.coverage.truncated = std::mem::take(&mut base.cut);
    t.coverage.truncated.append(&mut diff.cut);
    let hits = |side: &[bool]| side.iter().filter(|&&hit| hit).count() as u64;
    t.coverage.limit_hits_base = hits(&base.limit_hit);
    t.coverage.limit_hits_diff = hits(&diff.limit_hit);
    t.union = std::mem::take(&mut base.union);
    for schema in diff.union.schemas() {
        t.union.add(schema);
    }
    t.sums_base = std::mem::take(&mut base.sums);
    t.sums_diff = relay(&diff.sums, &diff.union, &t.union);
    t.groups_base = base.groups;
    t.groups_diff = diff.groups;
}

/// Counts the contexts seen twice on a side (`repeats`, per side), whose repeats are
/// duplicates, never missing methods, with the first few and their files.
fn note_repeats(
    t: &mut Tally,
    base: &Side,
    diff: &Side,
    repeats: &[Vec<u32>; 2],
    marks: &[Vec<FileMarks>; 2],
    top_n: usize,
) {
    let c = &mut t.coverage;
    c.duplicates_base = repeats[0].len() as u64;
    c.duplicates_diff = repeats[1].len() as u64;
    c.duplicate_examples = repeats::examples("base", &base.keys, &repeats[0], &marks[0], top_n);
    c.duplicate_examples.extend(repeats::examples(
        "diff",
        &diff.keys,
        &repeats[1],
        &marks[1],
        top_n,
    ));
}

/// What the match says of each diff method, for the second reading.
struct Matching {
    /// Per diff method: [`SAME_GROUP`], [`UNMATCHED`], [`REPEAT`] or [`MOVED`] + the base
    /// method's group.
    diff_state: Vec<u8>,
    /// Per base method: the index of the diff method it matched (`u32::MAX`: none).
    diff_ordinal: Vec<u32>,
    /// Methods matched.
    matched: u64,
    /// Matched methods named on both sides, whose names differ, and the first one's context.
    renamed: (u64, Option<i64>),
}

/// Matches the diff's methods with the base's by identity (the k-th occurrence of an identity
/// with the k-th), in the diff's order, filling the tally's per-method figures; the sides'
/// per-method lists are let go of once matched. A diff method that matches nothing and
/// repeats a context of the diff (`repeats_diff`) is a duplicate, not one the base misses, and
/// one whose context the base failed to compile (`failed`) is a failing compile, counted by the
/// second reading.
fn match_methods(
    t: &mut Tally,
    base: Side,
    diff: Side,
    repeats_diff: &[u32],
    failed: &Failed,
) -> Matching {
    let n = base.keys.len();
    // Both sides replayed the same methods in the same order (the common case: one collection
    // replayed by two JITs): method j matches method j, the same identity and occurrence.
    let same_order = base.keys == diff.keys;
    let mut index = match same_order {
        true => Index::default(),
        false => Index::of(&base.keys),
    };
    t.matched = vec![false; n];
    t.diff_bytes = vec![0; n];
    let mut diff_ordinal = vec![u32::MAX; n];
    let mut diff_state = vec![UNMATCHED; diff.keys.len()];
    let (mut matched, mut renamed) = (0, (0, None));
    for (j, state) in diff_state.iter_mut().enumerate() {
        let found = match same_order {
            true => Some(j as u32),
            false => index.find(diff.keys.id(j), &t.matched),
        };
        match found {
            Some(i) => {
                let i = i as usize;
                matched += 1;
                let names = (base.names[i], diff.names[j]);
                if names.0 != names.1 && names.0 != 0 && names.1 != 0 {
                    renamed.0 += 1;
                    renamed.1 = renamed.1.or(base.keys.context(i).map(|c| c as i64));
                }
                t.matched[i] = true;
                t.diff_bytes[i] = diff.bytes[j];
                diff_ordinal[i] = j as u32;
                if diff.limit_hit[j] && !base.limit_hit[i] {
                    t.coverage.limit_hits_new += 1;
                }
                let group = base.group[i];
                *state = match diff.group[j] == group {
                    true => SAME_GROUP,
                    false => MOVED + group,
                };
            }
            None if repeats_diff.binary_search(&(j as u32)).is_ok() => *state = REPEAT,
            None if failed.in_base(diff.keys.context(j).map(|c| c as i64)) => {}
            None => {
                t.coverage.only_diff += 1;
                // A part of the diff's total, which step 1 checked: it cannot overflow.
                t.coverage.only_diff_bytes =
                    t.coverage.only_diff_bytes.saturating_add(diff.bytes[j]);
            }
        }
    }
    t.context = base.keys.into_contexts();
    t.base_bytes = base.bytes;
    t.group = base.group;
    Matching {
        diff_state,
        diff_ordinal,
        matched,
        renamed,
    }
}

/// A warning when matched methods have other names on the two sides: logs of two collections,
/// or shards that number their contexts alike, matched by context number alone.
fn renamed_warning(renamed: (u64, Option<i64>), matched: u64) -> Option<String> {
    let (count, first) = renamed;
    (count > 0).then(|| {
        format!(
            "{} of {} matched methods have another name in the diff than in the base{}: are both sides' logs of one collection, their contexts numbered alike?",
            thousands(count),
            thousands(matched),
            first.map_or(String::new(), |c| format!(" (the first: context {c})"))
        )
    })
}

/// The `--ignore-kind` names that no log of this collection names (without case or `CMK_`).
fn unknown_kinds(t: &Tally, ignore: &[String]) -> Vec<String> {
    ignore
        .iter()
        .filter(|name| {
            !(0..t.union.kind_count() as u32).any(|k| super::same_kind(t.union.kind_name(k), name))
        })
        .cloned()
        .collect()
}

/// A listed method's detail: who it is, and its kinds' bytes on each side.
type Detail = (MethodInfo, Vec<(u32, u64)>, Vec<(u32, u64)>);

/// Steps 3 and 4 at once, on two threads (they read different files): the base and the diff
/// again, decoding only the methods no method of the other side matched (taken back out of the
/// sums; the base's counted as missing from the diff unless they repeat a context,
/// `repeats_base`), the matched diff methods whose tier group differs from their base
/// method's (moved to the base method's group), and the methods the top lists name (`listed`,
/// by base index), whose detail is returned in that order.
fn read_again(
    t: &mut Tally,
    marks: &[Vec<FileMarks>; 2],
    matching: &Matching,
    repeats_base: &[u32],
    failed: &Failed,
    listed: &[u32],
    top_n: usize,
) -> Result<Vec<Detail>, Error> {
    let wanted: FastMap<u32, usize> = listed.iter().enumerate().map(|(k, &i)| (i, k)).collect();
    let wanted_diff: FastMap<u32, usize> = listed
        .iter()
        .enumerate()
        .map(|(k, &i)| (matching.diff_ordinal[i as usize], k))
        .collect();
    let diff_state = &matching.diff_state;
    let mut detail: Vec<Detail> = vec![Default::default(); listed.len()];
    let mut diff_detail: Vec<Vec<(u32, u64)>> = vec![Vec::new(); listed.len()];
    let mut missing_in_base = Largest::new(top_n);
    let mut missing_in_diff = Largest::new(top_n);
    let (mut failing_in_base, mut failing_in_diff) = (Largest::new(top_n), Largest::new(top_n));
    // The diff's pass cannot reach the coverage the base's pass fills: its counts, added after.
    let mut diff_coverage = super::Coverage::default();
    let Tally {
        union,
        ignored,
        matched,
        group,
        coverage,
        groups_base,
        groups_diff,
        sums_base,
        sums_diff,
        ..
    } = t;
    let (union, ignored) = (&*union, &*ignored);
    let needed_base: Vec<u32> = (0..matched.len() as u32)
        .filter(|&i| !matched[i as usize] || wanted.contains_key(&i))
        .collect();
    let needed_diff: Vec<u32> = (0..diff_state.len() as u32)
        .filter(|&j| diff_state[j as usize] != SAME_GROUP || wanted_diff.contains_key(&j))
        .collect();
    let (pass3, pass4) = std::thread::scope(|scope| {
        let pass4 = scope.spawn(|| {
            let mut counts = MethodCounts::default();
            visit_needed(&marks[1], &needed_diff, "diff", |n, reader, r| {
                let state = *diff_state.get(n).ok_or_else(|| changed("diff"))?;
                let listed = wanted_diff.get(&(n as u32));
                reader.decode_current(r)?;
                union.remap(&r.schema, &r.counts, &mut counts);
                let totals = strip_ignored(ignored, &mut counts);
                let own = tier_group(r.info.tier.as_deref()) as usize;
                if state == UNMATCHED || state == REPEAT {
                    let context = Some(r.info.context);
                    if state == UNMATCHED {
                        match failed.counts_record(context, false, &mut diff_coverage) {
                            true => failing_in_base.offer(totals.bytes, &r.info),
                            false => missing_in_base.offer(totals.bytes, &r.info),
                        }
                    }
                    groups_diff[0].sub(&totals);
                    groups_diff[own].sub(&totals);
                    sums_diff.add(&counts, union, false);
                } else if state >= MOVED {
                    // A part of the Overall group, which step 1 checked.
                    groups_diff[own].sub(&totals);
                    groups_diff[(state - MOVED) as usize].add(&totals);
                }
                if let Some(&k) = listed {
                    diff_detail[k] = counts.kinds.iter().map(|k| (k.0, k.1)).collect();
                }
                Ok(())
            })
        });
        // 3. Base again: take the unmatched methods back out; keep the listed ones' detail.
        let mut counts = MethodCounts::default();
        let pass3 = visit_needed(&marks[0], &needed_base, "base", |i, reader, r| {
            let listed = wanted.get(&(i as u32));
            let unmatched = !*matched.get(i).ok_or_else(|| changed("base"))?;
            reader.decode_current(r)?;
            union.remap(&r.schema, &r.counts, &mut counts);
            let totals = strip_ignored(ignored, &mut counts);
            if unmatched {
                let failing = |coverage: &mut super::Coverage| {
                    failed.counts_record(Some(r.info.context), true, coverage)
                };
                if repeats_base.binary_search(&(i as u32)).is_ok() {
                    // A duplicate: counted as one.
                } else if failing(coverage) {
                    failing_in_diff.offer(totals.bytes, &r.info);
                } else {
                    coverage.only_base += 1;
                    // A part of the base's total, which step 1 checked: it cannot overflow.
                    coverage.only_base_bytes =
                        coverage.only_base_bytes.saturating_add(totals.bytes);
                    missing_in_diff.offer(totals.bytes, &r.info);
                }
                groups_base[0].sub(&totals);
                groups_base[group[i] as usize].sub(&totals);
                sums_base.add(&counts, union, false);
            }
            if let Some(&k) = listed {
                detail[k].0 = r.info.clone();
                detail[k].1 = counts.kinds.iter().map(|k| (k.0, k.1)).collect();
            }
            Ok(())
        });
        let pass4 = pass4
            .join()
            .unwrap_or_else(|_| Err(internal("diff reader thread")));
        (pass3, pass4)
    });
    pass3?;
    pass4?;
    coverage.missing_in_base = missing_in_base.into_sorted();
    coverage.missing_in_diff = missing_in_diff.into_sorted();
    coverage.failing_in_base = failing_in_base.into_sorted();
    coverage.failing_in_diff = failing_in_diff.into_sorted();
    coverage.failing_base += diff_coverage.failing_base;
    coverage.failing_base_only += diff_coverage.failing_base_only;
    for (d, kinds) in detail.iter_mut().zip(diff_detail) {
        d.2 = kinds;
    }
    Ok(detail)
}

#[cfg(all(test, unix))]
#[path = "read_both_tests.rs"]
mod tests;
