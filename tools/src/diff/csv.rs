//! The CSV bridge: SuperPMI's per-context details file (`superpmi -details FILE`, one per
//! collection, which the .NET JIT's replay pipeline writes), and any per-method CSV with a base
//! and a diff column, give the same totals, tiers, distribution and top lists as logs (no
//! kinds or phases: a CSV holds one total per method).
//!
//! SuperPMI's file says how each JIT's compile of each context ended (`Base result`,
//! `Diff result`: `Success`, `Miss` or `Error`) and whether it was compiled with MinOpts
//! (`MinOpts`: `True`/`False`). Only contexts both JITs compiled are compared; a compile that
//! failed on one side only is a failing compile, never a method that shrank to nothing.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use super::tally::{finish, method_delta, rank, FastMap, Tally};
use super::{tier_group, DiffOptions, Duplicate, Largest, MemDiff, Totals};
use jitarena::error::{Error, ErrorCode};
use jitarena::log::MethodInfo;

/// The metric SuperPMI's details file is compared on by default: the bytes a JIT's arena
/// handed out for the method (`Base BytesAllocated`, `Diff BytesAllocated`).
pub const DEFAULT_METRIC: &str = "BytesAllocated";

/// The columns holding each side's bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CsvColumns {
    /// The base's column.
    pub base: String,
    /// The diff's column.
    pub diff: String,
}

impl CsvColumns {
    /// SuperPMI's pair for a metric: `Base NAME` and `Diff NAME`.
    pub fn metric(name: &str) -> CsvColumns {
        CsvColumns {
            base: format!("Base {name}"),
            diff: format!("Diff {name}"),
        }
    }
}

/// The collection a details file holds, named after the file as SuperPMI names it:
/// `libraries.pmi.windows.x64.checked.mch_details.csv` holds
/// `libraries.pmi.windows.x64.checked.mch`; another file loses its `.csv`.
pub fn collection_name(path: &Path) -> String {
    let file = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into(),
    );
    for suffix in ["_details.csv", ".csv"] {
        if let Some(stem) = file.strip_suffix(suffix).filter(|s| !s.is_empty()) {
            return stem.to_string();
        }
    }
    file
}

/// How one JIT's compile of a context ended, as SuperPMI's details file says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Compile {
    Success,
    Miss,
    Error,
}

/// The UTF-8 byte order mark.
const BOM: &str = "\u{FEFF}";

/// A header name as compared: without case, spaces, underscores or byte order marks
/// (`Method full name`, `MethodFullName` and `method_full_name` are one column).
fn folded(name: &str) -> String {
    name.chars()
        .filter(|c| !matches!(c, ' ' | '_' | '\u{FEFF}'))
        .flat_map(char::to_lowercase)
        .collect()
}

/// Where each column is.
struct Columns {
    base: usize,
    diff: usize,
    /// The byte columns' names, as the header spells them.
    names: (String, String),
    base_result: Option<usize>,
    diff_result: Option<usize>,
    min_opts: Option<usize>,
    name: Option<usize>,
    tier: Option<usize>,
    context: Option<usize>,
}

/// The file being read, for messages that name it and the line.
struct Source<'a> {
    path: &'a Path,
    text: &'a [u8],
    /// The last line found: (byte offset, line number), so that counting goes on from there.
    seen: std::cell::Cell<(usize, u64)>,
}

impl Source<'_> {
    fn bad(&self, line: u64, what: impl std::fmt::Display) -> Error {
        Error::new(
            ErrorCode::Io,
            format!("{}:{line}: {what}", self.path.display()),
        )
    }

    /// The line a row starts on. The `csv` crate's position of a row is where its reader
    /// stood before the blank lines it skips, so its line number can be short of the row's:
    /// count the newlines up to the row's first byte instead. Offsets only grow: count from
    /// the last one.
    fn line_at(&self, byte: u64) -> u64 {
        let text = self.text;
        let mut byte = (byte as usize).min(text.len());
        while matches!(text.get(byte), Some(b'\n' | b'\r')) {
            byte += 1;
        }
        let (mut from, mut line) = self.seen.get();
        if byte < from {
            (from, line) = (0, 1);
        }
        line += line_breaks(&text[from..byte]);
        self.seen.set((byte, line));
        line
    }

    fn csv_error(&self, e: ::csv::Error) -> Error {
        let line = e.position().map_or(1, |p| self.line_at(p.byte()));
        match e.kind() {
            ::csv::ErrorKind::Io(io) => jitarena::format::io_error(self.path, "read", io),
            ::csv::ErrorKind::Utf8 { .. } => self.bad(line, "not UTF-8 text"),
            _ => self.bad(line, format!("not readable as CSV: {e}")),
        }
    }
}

/// The line breaks in `text`: `\n`, `\r\n` or a lone `\r` (a file with classic Mac line
/// endings), each one, as the `csv` crate ends a row at any of them.
fn line_breaks(text: &[u8]) -> u64 {
    let mut n = 0;
    for (i, &b) in text.iter().enumerate() {
        n += u64::from(b == b'\n' || (b == b'\r' && text.get(i + 1) != Some(&b'\n')));
    }
    n
}

/// Finds the columns: the byte columns named, and those SuperPMI names (`Context`,
/// `Base result`, `Diff result`, `MinOpts`, `Method full name`, `Tier name`) when present.
fn find_columns(
    src: &Source,
    header: &::csv::StringRecord,
    columns: &CsvColumns,
) -> Result<Columns, Error> {
    let line = header.position().map_or(1, |p| src.line_at(p.byte()));
    let folded_header: Vec<String> = header.iter().map(folded).collect();
    let col = |names: &[&str]| {
        names.iter().find_map(|n| {
            let n = folded(n);
            folded_header.iter().position(|h| *h == n)
        })
    };
    // A name the reading depends on, given twice: which one holds the figures is a guess.
    let names: [&str; 11] = [
        &columns.base,
        &columns.diff,
        "Base result",
        "Diff result",
        "MinOpts",
        "Context",
        "context number",
        "Method full name",
        "Tier name",
        "TieringName",
        "tier",
    ];
    for name in names {
        let folded_name = folded(name);
        let at: Vec<usize> = (0..folded_header.len())
            .filter(|&i| folded_header[i] == folded_name)
            .collect();
        if let [first, second, ..] = at[..] {
            return Err(src.bad(
                line,
                format!(
                    "two columns named {name:?} ({:?} and {:?}, columns {} and {}; names compared without case, spaces or underscores): which one to read is a guess",
                    crate::text::shown(header.get(first).unwrap_or("")),
                    crate::text::shown(header.get(second).unwrap_or("")),
                    first + 1,
                    second + 1
                ),
            ));
        }
    }
    let missing = |name: &str| {
        // The first columns, each shown cut: a header of a million columns makes a message of
        // a few lines, not of megabytes.
        const LISTED: usize = 20;
        let mut listed: Vec<String> = header
            .iter()
            .take(LISTED)
            .map(|h| crate::text::shown(h).into_owned())
            .collect();
        if header.len() > LISTED {
            listed.push(format!(
                "and {} more",
                crate::text::thousands((header.len() - LISTED) as u64)
            ));
        }
        let mut what = format!("no column {name:?} (columns: {})", listed.join(", "));
        if col(&["Base result"]).is_some() {
            what.push_str(
                "; SuperPMI writes Base/Diff BytesAllocated from JITs that report it, and --metric NAME compares another Base NAME/Diff NAME pair",
            );
        }
        src.bad(line, what)
    };
    let base = col(&[&columns.base]).ok_or_else(|| missing(&columns.base))?;
    let diff = col(&[&columns.diff]).ok_or_else(|| missing(&columns.diff))?;
    if base == diff {
        return Err(src.bad(
            line,
            format!(
                "the base column {:?} and the diff column {:?} are the same column ({:?}; names compared without case, spaces or underscores): the diff would compare it with itself",
                columns.base,
                columns.diff,
                header.get(base).unwrap_or("")
            ),
        ));
    }
    let (base_result, diff_result) = (col(&["Base result"]), col(&["Diff result"]));
    if base_result.is_some() != diff_result.is_some() {
        return Err(src.bad(
            line,
            "a \"Base result\" column without \"Diff result\", or the other way round: SuperPMI writes both",
        ));
    }
    let name = |i: usize| header.get(i).unwrap_or("").to_string();
    Ok(Columns {
        base,
        diff,
        names: (name(base), name(diff)),
        base_result,
        diff_result,
        min_opts: col(&["MinOpts"]),
        name: col(&["Method full name", "name", "method", "method name"]),
        tier: col(&["Tier name", "TieringName", "tier"]),
        context: col(&["Context", "context number"]),
    })
}

/// One row, read.
struct Row {
    info: MethodInfo,
    /// The tier group (see [`tier_group`]): from `MinOpts` when the file has it.
    group: u8,
    base: (Compile, Option<u64>),
    diff: (Compile, Option<u64>),
}

/// Reads a row's cells (its line `n`, for messages).
fn read_row(src: &Source, c: &Columns, row: &::csv::StringRecord, n: u64) -> Result<Row, Error> {
    let cell = |i: usize| row.get(i).unwrap_or("");
    let info = MethodInfo {
        name: c
            .name
            .map(|i| cell(i).to_string())
            .filter(|s| !s.is_empty()),
        context: match c.context {
            None => -1,
            // Digits alone: `parse` would take a sign (`+1`), which SuperPMI never writes.
            Some(i) => Some(cell(i))
                .filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|v| v.parse::<i64>().ok())
                .ok_or_else(|| {
                    src.bad(
                        n,
                        format!(
                            "the context column holds {:?}, not a context number (0 to 2^63 - 1)",
                            cell(i)
                        ),
                    )
                })?,
        },
        tier: c
            .tier
            .map(|i| cell(i).to_string())
            .filter(|s| !s.is_empty()),
    };
    let group = match c.min_opts.map(&cell) {
        None => tier_group(info.tier.as_deref()),
        Some(v) if v.eq_ignore_ascii_case("true") => 1,
        Some(v) if v.eq_ignore_ascii_case("false") => 2,
        Some(v) => {
            return Err(src.bad(n, format!("MinOpts holds {v:?}, not True or False")));
        }
    };
    let result = |col: Option<usize>, what: &str| -> Result<Compile, Error> {
        let Some(i) = col else {
            return Ok(Compile::Success); // no result column: every value is a compile
        };
        match cell(i) {
            v if v.eq_ignore_ascii_case("success") => Ok(Compile::Success),
            v if v.eq_ignore_ascii_case("miss") => Ok(Compile::Miss),
            v if v.eq_ignore_ascii_case("error") => Ok(Compile::Error),
            v => Err(src.bad(
                n,
                format!("{what} holds {v:?}, not Success, Miss or Error (SuperPMI's results)"),
            )),
        }
    };
    let number = |i: usize, name: &str, outcome: Compile| -> Result<Option<u64>, Error> {
        let v = cell(i);
        if outcome != Compile::Success {
            return Ok(None); // a compile that did not finish measured nothing
        }
        if v.is_empty() {
            return match c.base_result {
                Some(_) => Err(src.bad(
                    n,
                    format!("the {name} column is empty for a compile that succeeded"),
                )),
                None => Ok(None), // no result column: the method is on the other side only
            };
        }
        parse_bytes(v).map(Some).ok_or_else(|| {
            src.bad(
                n,
                format!(
                    "the {name} column holds {:?}, not a number of bytes from 0 to {}",
                    cell(i),
                    u64::MAX
                ),
            )
        })
    };
    let base_outcome = result(c.base_result, "Base result")?;
    let diff_outcome = result(c.diff_result, "Diff result")?;
    Ok(Row {
        base: (base_outcome, number(c.base, &c.names.0, base_outcome)?),
        diff: (diff_outcome, number(c.diff, &c.names.1, diff_outcome)?),
        info,
        group,
    })
}

/// What the rows add up to, as they are read. A compared row keeps its figures and where it
/// starts in the file, not its name and tier: those of the rows listed are read again
/// ([`Reread`]), so that a row costs about as much as a log's record does.
struct Gathered {
    t: Tally,
    /// Where each compared row starts in the file (the `csv` reader's byte position).
    at: Vec<u64>,
    sums: (u64, u64),
    /// Context numbers seen, to find a context given twice.
    seen: HashSet<i64>,
    /// Where each context given twice is in the duplicate examples.
    example_at: HashMap<i64, usize>,
    /// The largest contexts not compared, for the coverage's lists.
    lists: Lists,
}

/// The largest contexts of each kind not compared, kept as the rows come.
struct Lists {
    failing_in_diff: Largest,
    failing_in_base: Largest,
    missing_in_diff: Largest,
    missing_in_base: Largest,
}

impl Lists {
    /// Lists of at most `top` contexts.
    fn new(top: usize) -> Lists {
        Lists {
            failing_in_diff: Largest::new(top),
            failing_in_base: Largest::new(top),
            missing_in_diff: Largest::new(top),
            missing_in_base: Largest::new(top),
        }
    }
}

impl Gathered {
    /// Nothing read yet; lists of at most `top` contexts.
    fn new(top: usize) -> Gathered {
        Gathered {
            t: Tally::default(),
            at: Vec::new(),
            sums: (0, 0),
            seen: HashSet::new(),
            example_at: HashMap::new(),
            lists: Lists::new(top),
        }
    }

    /// The coverage's lists, from the rows read.
    fn finish_lists(&mut self) {
        let lists = std::mem::replace(&mut self.lists, Lists::new(0));
        let cov = &mut self.t.coverage;
        cov.failing_in_diff = lists.failing_in_diff.into_sorted();
        cov.failing_in_base = lists.failing_in_base.into_sorted();
        cov.missing_in_diff = lists.missing_in_diff.into_sorted();
        cov.missing_in_base = lists.missing_in_base.into_sorted();
    }

    /// Adds one row; `n` is its line, for messages.
    /// Adds one row, which starts at byte `at`; `n` is its line, for messages.
    fn add(
        &mut self,
        src: &Source,
        (row, at): (Row, u64),
        n: u64,
        options: &DiffOptions,
    ) -> Result<(), Error> {
        if let ((Compile::Success, None), (Compile::Success, None)) = (row.base, row.diff) {
            return Ok(()); // no result columns and both cells empty: no method, no context
        }
        self.t.coverage.csv_rows += 1;
        if row.info.context >= 0 && !self.seen.insert(row.info.context) {
            self.note_repeat(src, row.info.context, options.top);
        }
        let sum = |total: &mut u64, v: u64, what: &str| {
            *total = total.checked_add(v).ok_or_else(|| {
                src.bad(
                    n,
                    format!(
                        "the {what} add up to more than {} (2^64 - 1) bytes: not a real total",
                        u64::MAX
                    ),
                )
            })?;
            Ok::<(), Error>(())
        };
        match (row.base, row.diff) {
            ((Compile::Success, Some(x)), (Compile::Success, Some(y))) => {
                // Every group's totals are parts of these two: when they fit, so do those.
                sum(&mut self.sums.0, x, "matched methods' base bytes")?;
                sum(&mut self.sums.1, y, "matched methods' diff bytes")?;
                self.compare(row, at, x, y);
                Ok(())
            }
            _ => count_uncompared(&mut self.t.coverage, &mut self.lists, row, &sum),
        }
    }

    /// Reads one row of the file (`header` its header) and adds it.
    fn read(
        &mut self,
        src: &Source,
        cols: &Columns,
        header: &::csv::StringRecord,
        row: &::csv::StringRecord,
        options: &DiffOptions,
    ) -> Result<(), Error> {
        if row.iter().all(str::is_empty) {
            return Ok(());
        }
        // The line the row starts on (a quoted newline makes a row span lines).
        let n = row.position().map_or(0, |p| src.line_at(p.byte()));
        if row.iter().skip(header.len()).any(|c| !c.is_empty()) {
            return Err(src.bad(
                n,
                format!(
                    "the row has {} cells, the header {}: its cells would be read under the wrong columns (a number with a thousands separator needs quotes)",
                    row.len(),
                    header.len()
                ),
            ));
        }
        swallowed(src, cols, header, row, n)?;
        let read = read_row(src, cols, row, n)?;
        let at = row.position().map_or(0, ::csv::Position::byte);
        self.add(src, (read, at), n, options)
    }

    /// A context given twice (a details file concatenated twice, a replay retried): a
    /// duplicate, never a missing method. Each row holds both JITs' compiles of one replay, so
    /// it is compared as any other; the duplicate makes the check INCOMPLETE unless
    /// --allow-duplicates.
    fn note_repeat(&mut self, src: &Source, context: i64, top: usize) {
        let cov = &mut self.t.coverage;
        cov.duplicates_base += 1;
        cov.duplicates_diff += 1;
        let examples = &mut cov.duplicate_examples;
        if let Some(&at) = self.example_at.get(&context) {
            examples[at].records += 1; // its third row or later: one example, all its rows counted
        } else if examples.len() < top {
            self.example_at.insert(context, examples.len());
            let file = src.path.display().to_string();
            examples.push(Duplicate::new(
                "base and diff",
                context,
                &[file.clone(), file],
            ));
        }
    }

    /// A context both JITs compiled, its row at byte `at`: `x` bytes in the base, `y` in the
    /// diff.
    fn compare(&mut self, row: Row, at: u64, x: u64, y: u64) {
        let t = &mut self.t;
        for group in [0, row.group as usize] {
            t.overflow |= !t.groups_base[group].add(&Totals {
                bytes: x,
                ..Totals::default()
            });
            t.overflow |= !t.groups_diff[group].add(&Totals {
                bytes: y,
                ..Totals::default()
            });
        }
        t.base_bytes.push(x);
        t.diff_bytes.push(y);
        t.context.push(row.info.context);
        t.group.push(row.group);
        t.matched.push(true);
        self.at.push(at);
    }
}

/// A context not compared, counted by its two results (see docs/memdiff.md's table); `sum`
/// adds bytes to a total, checked.
fn count_uncompared(
    cov: &mut super::Coverage,
    lists: &mut Lists,
    row: Row,
    sum: &dyn Fn(&mut u64, u64, &str) -> Result<(), Error>,
) -> Result<(), Error> {
    use Compile::{Error as Failed, Miss, Success};
    match (row.base, row.diff) {
        ((Success, b), (Failed, _)) => {
            cov.failing_diff += 1;
            cov.failing_diff_only += 1;
            lists.failing_in_diff.offer(b.unwrap_or(0), &row.info);
        }
        ((Failed, _), (Success, d)) => {
            cov.failing_base += 1;
            cov.failing_base_only += 1;
            lists.failing_in_base.offer(d.unwrap_or(0), &row.info);
        }
        ((Failed, _), (Failed, _)) => {
            cov.failing_base += 1;
            cov.failing_diff += 1;
        }
        // Missed on one side, failed on the other: nothing measured on either side. Each
        // side's count says what happened on it, as superpmi.py counts them.
        ((Miss, _), (Failed, _)) => {
            cov.failing_diff += 1;
            cov.missed_base_failing_diff += 1;
        }
        ((Failed, _), (Miss, _)) => {
            cov.failing_base += 1;
            cov.missed_diff_failing_base += 1;
        }
        ((Miss, _), (Miss, _)) => cov.missed_both += 1,
        ((_, Some(x)), (_, None)) => {
            cov.only_base += 1;
            sum(&mut cov.only_base_bytes, x, "base-only methods' bytes")?;
            lists.missing_in_diff.offer(x, &row.info);
        }
        ((_, None), (_, Some(y))) => {
            cov.only_diff += 1;
            sum(&mut cov.only_diff_bytes, y, "diff-only methods' bytes")?;
            lists.missing_in_base.offer(y, &row.info);
        }
        // Compared by `add`, or both cells empty without result columns (left out by `add`).
        _ => {}
    }
    Ok(())
}

/// Compares the base and diff columns of a per-method CSV file: SuperPMI's details file (its
/// results decide what is compared), or any CSV with one row per method (an empty cell: the
/// method is on one side only). No kinds or phases.
pub fn diff_csv(
    path: &Path,
    columns: &CsvColumns,
    options: &DiffOptions,
) -> Result<MemDiff, Error> {
    let whole = std::fs::read(path).map_err(|e| jitarena::format::io_error(path, "read", &e))?;
    // Every UTF-8 byte order mark in front (a file re-encoded twice has two), not only the
    // first that the `csv` crate skips: one left would hide the first column's name. They hold
    // no line break, so lines are counted as in the file.
    let mut text = whole.as_slice();
    while let Some(rest) = text.strip_prefix(BOM.as_bytes()) {
        text = rest;
    }
    let src = Source {
        path,
        text,
        seen: std::cell::Cell::new((0, 1)),
    };
    // The `csv` crate: RFC 4180 quoting (a quoted cell may hold commas, quotes and newlines),
    // cells trimmed. A row may be shorter than the header
    // (its missing cells are empty) but not longer, unless its extra cells are empty.
    let mut reader = ::csv::ReaderBuilder::new()
        .flexible(true)
        .trim(::csv::Trim::All)
        .from_reader(text);
    // A file whose last line has no line ending was cut short (a replay killed while writing
    // it): its last row may stop inside a number, so it is not read, and the file is judged as
    // a log cut short is.
    let cut = !matches!(text.last(), None | Some(b'\n' | b'\r'));
    if let Some(at) = open_quote(text).filter(|&at| !cut || has_line_break(&text[at..])) {
        return Err(src.bad(
            src.line_at(at as u64),
            "a quote opens a cell here and is never closed, so every line after it would be read as one cell (a quote inside a cell needs the cell quoted and the quote doubled)",
        ));
    }
    let header = reader.headers().map_err(|e| src.csv_error(e))?.clone();
    if header.iter().all(str::is_empty) {
        return Err(src.bad(1, "the file is empty: expected a CSV header"));
    }
    let cols = find_columns(&src, &header, columns)?;
    let mut g = Gathered::new(options.top);
    g.t.coverage.base_files = 1;
    g.t.coverage.diff_files = 1;
    if cut {
        g.t.coverage.truncated.push(path.display().to_string());
    }
    let (mut row, mut next) = (::csv::StringRecord::new(), ::csv::StringRecord::new());
    let mut more = reader.read_record(&mut row).map_err(|e| src.csv_error(e))?;
    while more {
        // The next row is read first, to know whether this one is the last; an error in it
        // is reported after this row's own.
        let read = reader.read_record(&mut next);
        let last = matches!(read, Ok(false));
        if !(last && cut) {
            g.read(&src, &cols, &header, &row, options)?;
        }
        more = read.map_err(|e| src.csv_error(e))?;
        std::mem::swap(&mut row, &mut next);
    }
    g.finish_lists();
    g.t.check_overflow(&[path.to_path_buf()])?;
    let (top, matched) = rank(&g.t, options);
    // The listed rows' names and tiers, read again from the file, in the file's order (the
    // list of all is sorted), so that counting their lines goes through the file once.
    let mut reread = Reread::new(&src, &cols);
    let infos: FastMap<u32, MethodInfo> = top
        .all
        .iter()
        .map(|&i| {
            let at = g.at.get(i as usize).copied().unwrap_or(0);
            Ok((i, reread.info_at(at)?))
        })
        .collect::<Result<_, Error>>()?;
    let unknown = MethodInfo::default();
    let lists = top.describe(&matched.methods, |i| {
        method_delta(&g.t, i, infos.get(&i).unwrap_or(&unknown), &[], &[])
    });
    let mut out = finish(g.t, options, matched, lists, &top.all, Vec::new());
    out.has_kinds = false;
    out.unknown_ignored = options.ignore_kinds.clone();
    Ok(out)
}

/// The rows' methods read again, from where each starts in the file, as the first reading
/// read them: one reader, moved from row to row.
struct Reread<'a, 'f> {
    src: &'a Source<'f>,
    cols: &'a Columns,
    reader: ::csv::Reader<std::io::Cursor<&'f [u8]>>,
    row: ::csv::StringRecord,
}

impl<'a, 'f> Reread<'a, 'f> {
    fn new(src: &'a Source<'f>, cols: &'a Columns) -> Reread<'a, 'f> {
        Reread {
            src,
            cols,
            reader: ::csv::ReaderBuilder::new()
                .flexible(true)
                .trim(::csv::Trim::All)
                .has_headers(false)
                .from_reader(std::io::Cursor::new(src.text)),
            row: ::csv::StringRecord::new(),
        }
    }

    /// The method of the row that starts at byte `at`.
    fn info_at(&mut self, at: u64) -> Result<MethodInfo, Error> {
        let src = self.src;
        let mut pos = ::csv::Position::new();
        pos.set_byte(at);
        let read = self
            .reader
            .seek(pos)
            .and_then(|()| self.reader.read_record(&mut self.row));
        match read {
            Ok(true) => Ok(read_row(src, self.cols, &self.row, src.line_at(at))?.info),
            Ok(false) => Err(src.bad(src.line_at(at), "the row read before is gone")),
            Err(e) => Err(src.csv_error(e)),
        }
    }
}

/// A cell as a number of bytes, read exactly: a whole number from 0 to `u64::MAX`, plain or
/// with thousands separators in groups of three (`1,234,567` or `1_234_567`); a decimal, rounded
/// half up (`12.5` is 13); or a number with an exponent (`1e19`), read through a double. `None`
/// for anything else (a separator out of place, a decimal comma, a sign, a value past
/// `u64::MAX`), never a number clamped into range.
fn parse_bytes(v: &str) -> Option<u64> {
    if v.contains(['e', 'E']) {
        const TWO_TO_64: f64 = 18_446_744_073_709_551_616.0;
        // A sign is refused here as in a plain number (`+2e2` as `+200`); the exponent may
        // have one (`1e+3`).
        if !v.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
            return None;
        }
        let x = v.parse::<f64>().ok()?.round();
        let fits = (0.0..TWO_TO_64).contains(&x);
        return fits.then_some(x as u64);
    }
    let (whole, fraction) = match v.split_once('.') {
        Some((whole, fraction)) => (whole, Some(fraction)),
        None => (v, None),
    };
    let digits = ungrouped(whole)?;
    let mut n: u64 = match (digits.is_empty(), fraction) {
        (true, None) | (true, Some("")) => return None,
        (true, Some(_)) => 0,
        (false, _) => digits.parse().ok()?,
    };
    if let Some(fraction) = fraction {
        if !fraction.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        if fraction.as_bytes().first().is_some_and(|&d| d >= b'5') {
            n = n.checked_add(1)?;
        }
    }
    Some(n)
}

/// The digits of a whole number written with or without thousands separators (`,` or `_`, one
/// kind, between groups of three digits after a first group of one to three); `None` when it
/// holds anything else or a separator out of place.
fn ungrouped(whole: &str) -> Option<String> {
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    let Some(sep) = whole.chars().find(|c| matches!(c, ',' | '_')) else {
        return all_digits(whole).then(|| whole.to_string());
    };
    let mut groups = whole.split(sep);
    let first = groups.next().unwrap_or("");
    if !(1..=3).contains(&first.len()) || !all_digits(first) {
        return None;
    }
    let mut digits = first.to_string();
    for group in groups {
        if group.len() != 3 || !all_digits(group) {
            return None;
        }
        digits.push_str(group);
    }
    Some(digits)
}

/// Where a quote opens that is never closed, as a byte offset, the file read as the `csv`
/// crate reads it: a quote opens a quoted cell only as the cell's first byte, `""` inside a
/// quoted cell is one quote, and a quote inside an unquoted cell is a character like any other
/// (`5" disk` is read as it stands). A quoted cell still open at the end of the file holds
/// every line after its quote.
fn open_quote(text: &[u8]) -> Option<usize> {
    #[derive(Clone, Copy)]
    enum At {
        /// The start of a cell.
        Start,
        /// Inside an unquoted cell.
        Plain,
        /// Inside a quoted cell that opened at this offset.
        Quoted(usize),
        /// Just after a quote inside a quoted cell: its end, or the first of `""`.
        Quote(usize),
    }
    let mut at = At::Start;
    for (i, &b) in text.iter().enumerate() {
        at = match (at, b) {
            (At::Start, b'"') => At::Quoted(i),
            (At::Quoted(open), b'"') => At::Quote(open),
            (At::Quoted(open), _) | (At::Quote(open), b'"') => At::Quoted(open),
            (_, b',' | b'\n' | b'\r') => At::Start,
            _ => At::Plain,
        };
    }
    match at {
        At::Quoted(open) => Some(open),
        _ => None,
    }
}

/// Whether `text` holds a line break.
fn has_line_break(text: &[u8]) -> bool {
    text.iter().any(|&b| matches!(b, b'\n' | b'\r'))
}

/// A row whose quoted cell holds a line break where none belongs: a quote that opens a cell
/// and closes on a later line (two stray quotes that pair up) reads the lines in between as
/// one cell, and the rows on them with it, so their figures would go unread. No column the
/// reading takes a number, a result, a flag, a context or a tier from holds a line break; a
/// name, or a column not read, may, unless the cell also holds as many commas as a row has
/// separators (the cells of a whole row).
fn swallowed(
    src: &Source,
    cols: &Columns,
    header: &::csv::StringRecord,
    row: &::csv::StringRecord,
    n: u64,
) -> Result<(), Error> {
    let plain = [
        Some(cols.base),
        Some(cols.diff),
        cols.base_result,
        cols.diff_result,
        cols.min_opts,
        cols.context,
        cols.tier,
    ];
    for (i, cell) in row.iter().enumerate() {
        if !has_line_break(cell.as_bytes()) {
            continue;
        }
        let why = if plain.contains(&Some(i)) {
            "a column that holds no line break"
        } else if cell.matches(',').count() + 1 >= header.len() {
            "with as many commas as a whole row"
        } else {
            continue;
        };
        let lines = 1 + line_breaks(cell.as_bytes());
        return Err(src.bad(
            n,
            format!(
                "a quoted cell of column {} ({:?}, {why}) runs over {lines} lines from here: a quote that opens a cell and closes on a later line (two stray quotes that pair up) would read the rows in between as one cell; a quote inside a cell needs the cell quoted and the quote doubled",
                i + 1,
                crate::text::shown(header.get(i).unwrap_or(""))
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_collection_is_named_after_its_details_file() {
        let name = |p: &str| collection_name(Path::new(p));
        assert_eq!(
            name("/x/libraries.pmi.windows.x64.checked.mch_details.csv"),
            "libraries.pmi.windows.x64.checked.mch"
        );
        assert_eq!(name("d/bytes.csv"), "bytes");
        assert_eq!(name("_details.csv"), "_details");
        assert_eq!(name("plain"), "plain");
    }

    #[test]
    fn header_names_compare_without_case_spaces_or_underscores() {
        assert_eq!(folded("Method full name"), folded("MethodFullName"));
        assert_eq!(
            folded("Base BytesAllocated"),
            folded("base_bytes_allocated")
        );
        assert_ne!(folded("Base result"), folded("Diff result"));
    }
}
