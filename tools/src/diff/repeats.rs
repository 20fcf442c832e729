//! Contexts seen more than once on one side of a diff: a shard given twice (a retried replay
//! job, overlapping shards) or a context recorded twice by its JIT. The k-th record of a
//! context still matches the k-th of the other side; a repeat that matches nothing is a
//! duplicate, never a method the other side misses.

use std::collections::HashMap;

use super::side::{FileMarks, Keys};
use super::Duplicate;

/// The records of a side that repeat a context seen earlier on that side, in increasing
/// order. Methods without a context number (matched by name, tier and occurrence) are never
/// repeats: two methods may share a name.
pub(crate) fn repeats(keys: &Keys) -> Vec<u32> {
    match keys.max_context_seen() {
        None => Vec::new(),
        // A bit per context number while that is at most 64 bits per method.
        Some(max) if max < 64 * keys.len() as u64 + 65_536 => {
            let mut seen = vec![0u64; (max / 64 + 1) as usize];
            let mut out = Vec::new();
            for (i, c) in keys.contexts() {
                let (word, bit) = ((c / 64) as usize, 1u64 << (c % 64));
                if seen[word] & bit != 0 {
                    out.push(i as u32);
                }
                seen[word] |= bit;
            }
            out
        }
        Some(_) => {
            // Sparse numbers: sort them to find the few that repeat, then mark their records.
            let mut sorted: Vec<u64> = keys.contexts().map(|(_, c)| c).collect();
            sorted.sort_unstable();
            let mut twice: Vec<u64> = sorted
                .windows(2)
                .filter(|w| w[0] == w[1])
                .map(|w| w[0])
                .collect();
            twice.dedup();
            if twice.is_empty() {
                return Vec::new();
            }
            let mut first_seen = vec![false; twice.len()];
            let mut out = Vec::new();
            for (i, c) in keys.contexts() {
                if let Ok(k) = twice.binary_search(&c) {
                    if std::mem::replace(&mut first_seen[k], true) {
                        out.push(i as u32);
                    }
                }
            }
            out
        }
    }
}

/// The first `n` contexts that `repeats` (of `keys`) repeat, each with the files holding its
/// records, in reading order.
pub(crate) fn examples(
    side: &'static str,
    keys: &Keys,
    repeats: &[u32],
    files: &[FileMarks],
    n: usize,
) -> Vec<Duplicate> {
    // In order of first repeat; a set to look them up, so that the cost is linear in the
    // records whatever `n` is.
    let mut wanted: Vec<u64> = Vec::new();
    let mut found: HashMap<u64, Vec<String>> = HashMap::new();
    for &i in repeats {
        if wanted.len() == n {
            break;
        }
        if let Some(c) = keys.context(i as usize) {
            if found.insert(c, Vec::new()).is_none() {
                wanted.push(c);
            }
        }
    }
    for (i, c) in keys.contexts() {
        if let Some(holding) = found.get_mut(&c) {
            let file = files.partition_point(|f| f.first + f.count <= i);
            let name = files
                .get(file)
                .map_or_else(String::new, |f| f.path.display().to_string());
            holding.push(name);
        }
    }
    wanted
        .into_iter()
        .map(|c| Duplicate::new(side, c as i64, &found.remove(&c).unwrap_or_default()))
        .collect()
}
