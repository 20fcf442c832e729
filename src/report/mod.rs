//! Reports: the stats of one set of logs (`jitarena stats`) and the diff of two
//! (`jitarena memdiff`), as console text, markdown, JSON and HTML.

pub mod diff;
pub mod html;
pub mod stats;

use std::fmt::Write as _;

/// `1234567` as `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A signed number with thousands separators and an explicit sign.
pub fn signed_thousands(n: i128) -> String {
    let sign = if n > 0 {
        "+"
    } else if n < 0 {
        "-"
    } else {
        ""
    };
    format!("{sign}{}", thousands(n.unsigned_abs() as u64))
}

/// `part` as a percentage of `whole`, two decimals (`0.00%` when `whole` is 0).
pub fn pct(part: u64, whole: u64) -> String {
    if whole == 0 {
        return "0.00%".into();
    }
    format!("{:.2}%", part as f64 * 100.0 / whole as f64)
}

/// The value at quantile `q` (0..=1) of sorted values (nearest rank), 0 if empty.
pub fn quantile(sorted: &[u64], q: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// A JSON string literal.
pub fn json_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A JSON number for a float (finite; `null` otherwise), rounded to 4 decimals.
pub fn json_f64(x: f64) -> String {
    if x.is_finite() {
        let s = format!("{x:.4}");
        let s = s.trim_end_matches('0').trim_end_matches('.');
        if s.is_empty() || s == "-" {
            "0".into()
        } else {
            s.to_string()
        }
    } else {
        "null".into()
    }
}
