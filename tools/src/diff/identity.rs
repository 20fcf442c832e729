//! Which JIT wrote each side: the build ids the logs name (`jitarena_config.build_id`) and
//! their kind lists. Shards of one side from different builds or kind lists, or both sides
//! from one build, are warned of: each is a pipeline that compared what it did not mean to.

use super::side::FileMarks;
use crate::text::shown;

/// The build ids of a side's files, each once, in the order first named.
pub(crate) fn builds_of(files: &[(String, Vec<String>)]) -> Vec<String> {
    let mut all: Vec<String> = Vec::new();
    for b in files.iter().flat_map(|(_, builds)| builds) {
        if !all.contains(b) {
            all.push(b.clone());
        }
    }
    all
}

/// The warnings of one side's identity: several builds, files that name none beside files
/// that do, several kind lists.
pub(crate) fn side_warnings(
    side: &str,
    files: &[(String, Vec<String>)],
    marks: &[FileMarks],
) -> Vec<String> {
    let mut out = Vec::new();
    let builds = builds_of(files);
    if builds.len() > 1 {
        let named: Vec<String> = builds
            .iter()
            .take(3)
            .map(|b| {
                let file = files
                    .iter()
                    .find(|(_, bs)| bs.contains(b))
                    .map_or("", |f| &f.0);
                format!("{} in {}", shown(b), shown(file))
            })
            .collect();
        out.push(format!(
            "the {side}'s logs come from {} JIT builds ({}): shards of different builds on one side",
            builds.len(),
            named.join("; ")
        ));
    }
    let unnamed: Vec<&str> = files
        .iter()
        .filter(|(_, b)| b.is_empty())
        .map(|(f, _)| f.as_str())
        .collect();
    if !builds.is_empty() && !unnamed.is_empty() {
        out.push(format!(
            "{} of the {side}'s logs name no build (the first: {}) while others name {}: shards of different JITs on one side?",
            unnamed.len(),
            shown(unnamed[0]),
            shown(&builds[0])
        ));
    }
    if let Some(w) = kind_lists_warning(side, marks) {
        out.push(w);
    }
    out
}

/// A warning when a side's files do not hold the same kind lists (a file may hold several,
/// from arenas of several configurations: the same several in every shard of one JIT): the
/// kinds the first file has and another lacks, and the other way round.
fn kind_lists_warning(side: &str, marks: &[FileMarks]) -> Option<String> {
    fn lists_of(file: &FileMarks) -> Vec<&[String]> {
        let mut lists: Vec<&[String]> = file
            .dictionary
            .schemas()
            .iter()
            .map(|s| s.kinds.as_slice())
            .collect();
        lists.sort_unstable();
        lists.dedup();
        lists
    }
    // A file with no schema (empty, or cut short before its first record) holds no kind list
    // to compare: it is warned of as cut short.
    let mut with_kinds = marks.iter().filter(|f| !f.dictionary.schemas().is_empty());
    let first = with_kinds.next()?;
    let theirs = lists_of(first);
    let other = with_kinds.find(|f| lists_of(f) != theirs)?;
    let kinds = |lists: Vec<&[String]>| -> Vec<String> {
        let mut all: Vec<String> = lists.into_iter().flatten().cloned().collect();
        all.sort_unstable();
        all.dedup();
        all
    };
    let (a, b) = (kinds(theirs), kinds(lists_of(other)));
    let only = |x: &[String], y: &[String]| -> String {
        let names: Vec<String> = x
            .iter()
            .filter(|k| !y.contains(k))
            .take(5)
            .map(|k| shown(k).into_owned())
            .collect();
        if names.is_empty() {
            "none".into()
        } else {
            names.join(", ")
        }
    };
    Some(format!(
        "the {side}'s logs do not hold the same kinds ({} kinds in {}, {} in {}; only in the first: {}; only in the second: {}): shards of different JIT builds on one side?",
        a.len(),
        shown(&first.path.display().to_string()),
        b.len(),
        shown(&other.path.display().to_string()),
        only(&a, &b),
        only(&b, &a),
    ))
}

/// A warning when both sides name the same builds: the same JIT compared with itself, or a
/// pipeline that gave one build to both sides.
pub(crate) fn same_build_warning(base: &[String], diff: &[String]) -> Option<String> {
    (!base.is_empty() && base == diff).then(|| {
        format!(
            "the base and the diff name the same build ({}): the same JIT on both sides?",
            shown(&base.join(", "))
        )
    })
}
