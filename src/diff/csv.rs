//! The CSV bridge: a per-method CSV with base and diff byte columns (as the .NET JIT replay
//! tool's details file can have) gives the same totals, distribution and top lists as logs.

use std::path::Path;

use super::tally::{finish, method_delta, Tally, TopLists};
use super::{keep_largest, tier_group, DiffOptions, MemDiff, Totals};
use crate::error::{Error, ErrorCode};
use crate::log::MethodInfo;

/// Compares the base and diff byte columns of a per-method CSV file (one row per method; an
/// empty cell: the method is on one side only). Optional columns: name (`name`, `method`,
/// `method full name`), `tier`, `context`. No kinds or phases.
pub fn diff_csv(
    path: &Path,
    base_col: &str,
    diff_col: &str,
    options: &DiffOptions,
) -> Result<MemDiff, Error> {
    let text =
        std::fs::read_to_string(path).map_err(|e| crate::format::io_error(path, "read", &e))?;
    let bad = |line: usize, what: String| {
        Error::new(ErrorCode::Io, format!("{}:{line}: {what}", path.display()))
    };
    let mut rows = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let (_, header) = rows
        .next()
        .ok_or_else(|| bad(1, "the file is empty: expected a CSV header".into()))?;
    let header = split_csv(header);
    let col = |names: &[&str]| {
        names
            .iter()
            .find_map(|n| header.iter().position(|h| h.trim().eq_ignore_ascii_case(n)))
    };
    let missing = |name: &str| {
        bad(
            1,
            format!("no column {name:?} (columns: {})", header.join(", ")),
        )
    };
    let b = col(&[base_col]).ok_or_else(|| missing(base_col))?;
    let d = col(&[diff_col]).ok_or_else(|| missing(diff_col))?;
    let name_col = col(&["name", "method", "method name", "method full name"]);
    let tier_col = col(&["tier"]);
    let ctx_col = col(&["context", "context number"]);
    let mut t = Tally::default();
    t.coverage.base_files = 1;
    t.coverage.diff_files = 1;
    let mut infos = Vec::new();
    for (n, line) in rows {
        let cells = split_csv(line);
        let cell = |c: usize| cells.get(c).map(|s| s.trim()).unwrap_or("");
        let number = |c: usize, what: &str| -> Result<Option<u64>, Error> {
            let v = cell(c).replace([',', '_'], "");
            if v.is_empty() {
                return Ok(None);
            }
            v.parse::<f64>()
                .ok()
                .filter(|x| x.is_finite() && *x >= 0.0)
                .map(|x| Some(x.round() as u64))
                .ok_or_else(|| {
                    bad(
                        n + 1,
                        format!(
                            "the {what} column holds {:?}, not a number of bytes",
                            cell(c)
                        ),
                    )
                })
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
                t.coverage.only_base_bytes = t.coverage.only_base_bytes.saturating_add(x);
                keep_largest(&mut t.coverage.missing_in_diff, options.top, x, &info);
            }
            (None, Some(y)) => {
                t.coverage.only_diff += 1;
                t.coverage.only_diff_bytes = t.coverage.only_diff_bytes.saturating_add(y);
                keep_largest(&mut t.coverage.missing_in_base, options.top, y, &info);
            }
            (None, None) => {}
        }
    }
    t.check_overflow(&[path.to_path_buf()])?;
    let top = TopLists::of(&t, options);
    let lists = top.describe(|i| method_delta(&t, i, &infos[i as usize], &[], &[]));
    let mut out = finish(t, options, lists, &top.all, Vec::new());
    out.has_kinds = false;
    Ok(out)
}

/// Splits one CSV line (RFC 4180 quoting).
fn split_csv(line: &str) -> Vec<String> {
    let mut cells = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                chars.next();
                if let Some(s) = cells.last_mut() {
                    s.push('"');
                }
            }
            ('"', _) => quoted = !quoted,
            (',', false) => cells.push(String::new()),
            (c, _) => {
                if let Some(s) = cells.last_mut() {
                    s.push(c);
                }
            }
        }
    }
    cells
}
