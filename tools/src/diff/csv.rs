//! The CSV bridge: a per-method CSV with base and diff byte columns (as the .NET JIT replay
//! tool's details file can have) gives the same totals, distribution and top lists as logs.

use std::path::Path;

use super::tally::{finish, method_delta, rank, Tally};
use super::{keep_largest, tier_group, DiffOptions, MemDiff, Totals};
use jitarena::error::{Error, ErrorCode};
use jitarena::log::MethodInfo;

/// Compares the base and diff byte columns of a per-method CSV file (one row per method; an
/// empty cell: the method is on one side only). Optional columns: name (`name`, `method`,
/// `method full name`), `tier`, `context`. No kinds or phases.
pub fn diff_csv(
    path: &Path,
    base_col: &str,
    diff_col: &str,
    options: &DiffOptions,
) -> Result<MemDiff, Error> {
    let text = std::fs::read(path).map_err(|e| jitarena::format::io_error(path, "read", &e))?;
    let bad = |line: u64, what: String| {
        Error::new(ErrorCode::Io, format!("{}:{line}: {what}", path.display()))
    };
    // The `csv` crate: RFC 4180 quoting (a quoted cell may hold commas, quotes and newlines),
    // a UTF-8 byte order mark skipped, rows of any length, cells trimmed.
    let mut reader = ::csv::ReaderBuilder::new()
        .flexible(true)
        .trim(::csv::Trim::All)
        .from_reader(text.as_slice());
    // The line a row starts on. The `csv` crate's position of a row is where its reader stood
    // before the blank lines it skips, so its line number can be short of the row's: count the
    // newlines up to the row's first byte instead. Offsets only grow: count from the last one.
    let seen = std::cell::Cell::new((0usize, 1u64));
    let line_at = |byte: u64| {
        let mut byte = (byte as usize).min(text.len());
        while matches!(text.get(byte), Some(b'\n' | b'\r')) {
            byte += 1;
        }
        let (mut from, mut line) = seen.get();
        if byte < from {
            (from, line) = (0, 1);
        }
        line += text[from..byte].iter().filter(|&&c| c == b'\n').count() as u64;
        seen.set((byte, line));
        line
    };
    let csv_error = |e: ::csv::Error| {
        let line = e.position().map_or(1, |p| line_at(p.byte()));
        match e.kind() {
            ::csv::ErrorKind::Io(io) => jitarena::format::io_error(path, "read", io),
            ::csv::ErrorKind::Utf8 { .. } => bad(line, "not UTF-8 text".into()),
            _ => bad(line, format!("not readable as CSV: {e}")),
        }
    };
    let header = reader.headers().map_err(&csv_error)?.clone();
    if header.iter().all(str::is_empty) {
        return Err(bad(1, "the file is empty: expected a CSV header".into()));
    }
    let header_line = header.position().map_or(1, |p| line_at(p.byte()));
    let col = |names: &[&str]| {
        names
            .iter()
            .find_map(|n| header.iter().position(|h| h.eq_ignore_ascii_case(n)))
    };
    let missing = |name: &str| {
        bad(
            header_line,
            format!(
                "no column {name:?} (columns: {})",
                header.iter().collect::<Vec<_>>().join(", ")
            ),
        )
    };
    let b = col(&[base_col]).ok_or_else(|| missing(base_col))?;
    let d = col(&[diff_col]).ok_or_else(|| missing(diff_col))?;
    if b == d {
        return Err(bad(
            header_line,
            format!(
                "--base-col {base_col:?} and --diff-col {diff_col:?} name the same column ({:?}, names compared without case): the diff would compare it with itself",
                header.get(b).unwrap_or("")
            ),
        ));
    }
    let name_col = col(&["name", "method", "method name", "method full name"]);
    let tier_col = col(&["tier"]);
    let ctx_col = col(&["context", "context number"]);
    let mut t = Tally::default();
    t.coverage.base_files = 1;
    t.coverage.diff_files = 1;
    let mut infos = Vec::new();
    let (mut matched_base, mut matched_diff) = (0u64, 0u64);
    let mut row = ::csv::StringRecord::new();
    while reader.read_record(&mut row).map_err(&csv_error)? {
        if row.iter().all(str::is_empty) {
            continue;
        }
        // The line the row starts on (a quoted newline makes a row span lines).
        let n = row.position().map_or(0, |p| line_at(p.byte()));
        let cell = |c: usize| row.get(c).unwrap_or("");
        let number = |c: usize, what: &str| -> Result<Option<u64>, Error> {
            let v = cell(c).replace([',', '_'], "");
            if v.is_empty() {
                return Ok(None);
            }
            parse_bytes(&v).map(Some).ok_or_else(|| {
                bad(
                    n,
                    format!(
                        "the {what} column holds {:?}, not a number of bytes from 0 to {}",
                        cell(c),
                        u64::MAX
                    ),
                )
            })
        };
        let sum = |total: &mut u64, v: u64, what: &str| {
            *total = total.checked_add(v).ok_or_else(|| {
                bad(
                    n,
                    format!(
                        "the {what} add up to more than {} (2^64 - 1) bytes: not a real total",
                        u64::MAX
                    ),
                )
            })?;
            Ok::<(), Error>(())
        };
        let info = MethodInfo {
            name: name_col
                .map(|c| cell(c).to_string())
                .filter(|s| !s.is_empty()),
            context: ctx_col.and_then(|c| cell(c).parse().ok()).unwrap_or(-1),
            tier: tier_col
                .map(|c| cell(c).to_string())
                .filter(|s| !s.is_empty()),
        };
        match (number(b, base_col)?, number(d, diff_col)?) {
            (Some(x), Some(y)) => {
                // Every group's totals are parts of these two: when they fit, so do those.
                sum(&mut matched_base, x, "matched methods' base bytes")?;
                sum(&mut matched_diff, y, "matched methods' diff bytes")?;
                let g = tier_group(info.tier.as_deref()) as usize;
                for group in [0, g] {
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
                t.context.push(info.context);
                t.group.push(g as u8);
                t.matched.push(true);
                infos.push(info);
            }
            (Some(x), None) => {
                t.coverage.only_base += 1;
                sum(
                    &mut t.coverage.only_base_bytes,
                    x,
                    "base-only methods' bytes",
                )?;
                keep_largest(&mut t.coverage.missing_in_diff, options.top, x, &info);
            }
            (None, Some(y)) => {
                t.coverage.only_diff += 1;
                sum(
                    &mut t.coverage.only_diff_bytes,
                    y,
                    "diff-only methods' bytes",
                )?;
                keep_largest(&mut t.coverage.missing_in_base, options.top, y, &info);
            }
            (None, None) => {}
        }
    }
    t.check_overflow(&[path.to_path_buf()])?;
    let (top, matched) = rank(&t, options);
    let lists = top.describe(|i| method_delta(&t, i, &infos[i as usize], &[], &[]));
    let mut out = finish(t, options, matched, lists, &top.all, Vec::new());
    out.has_kinds = false;
    Ok(out)
}

/// A cell as a number of bytes: a whole number from 0 to `u64::MAX` exactly, or a decimal
/// (rounded) below 2^64; `None` for anything else, never a number clamped into range.
fn parse_bytes(v: &str) -> Option<u64> {
    if v.starts_with('-') {
        return None; // not even `-0.4`, which rounds to zero
    }
    if let Ok(n) = v.parse::<u64>() {
        return Some(n);
    }
    const TWO_TO_64: f64 = 18_446_744_073_709_551_616.0;
    v.parse::<f64>()
        .ok()
        .map(f64::round)
        .filter(|x| x.is_finite() && *x >= 0.0 && *x < TWO_TO_64)
        .map(|x| x as u64)
}
