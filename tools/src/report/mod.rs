//! Reports: the stats of one set of logs (`jitarena stats`) and the diff of two
//! (`jitarena memdiff`), as console text, markdown, JSON and HTML.

pub mod diff;
pub mod html;
pub mod platforms;
pub mod stats;
pub use crate::stats::quantile;
pub mod summary;

pub(crate) use crate::text::disguises;
pub use crate::text::{pct, shown, signed_thousands, thousands, visible, NAME_SHOWN};

/// Text as markdown that renders as exactly those characters and nothing else: no element,
/// link, image, emphasis, code span, math, entity, autolink or table cell break can come from
/// it. [`visible`] first, then a backslash before each character that could start markup
/// inside a line, and only there, so that the raw markdown (read in CI logs) stays readable:
/// `benchmarks.run` and `System.Int32:Parse(string)` are left as they are.
///
/// - always: `` \ ` * [ ] < & | ~ $ `` (escapes, code, emphasis, links and images, HTML and
///   autolinks, entities, table cells, strikethrough, math);
/// - `_` where it could open or close emphasis: next to anything but a letter or digit on
///   either side (`LSRA_Interval` keeps its underscore bare).
///
/// Names are never written at the start of a line, where `#`, `>`, `-`, `+` and digits
/// would matter. GitHub also finds mentions (`@team`), issue references (`#123`) and bare
/// links (`https://x`, `www.x`) in the rendered text, after escapes are undone: a zero-width
/// space ([`MD_BREAK`]) after every `@` and `#`, after `:` before `//`, and after `www` before
/// `.`, keeps a name from pinging anyone or linking anything.
pub fn md_text(text: &str) -> String {
    let text = visible(text);
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len() + 8);
    let word = |c: Option<&char>| c.is_some_and(|c| c.is_alphanumeric());
    for (i, &c) in chars.iter().enumerate() {
        let (before, after) = (
            i.checked_sub(1).and_then(|b| chars.get(b)),
            chars.get(i + 1),
        );
        let escape = match c {
            '\\' | '`' | '*' | '[' | ']' | '<' | '&' | '|' | '~' | '$' => true,
            '_' => !(word(before) && word(after)),
            _ => false,
        };
        if escape {
            out.push('\\');
        }
        out.push(c);
        let link = (c == ':' && chars.get(i + 1..i + 3) == Some(&['/', '/']))
            || (c.eq_ignore_ascii_case(&'w')
                && after == Some(&'.')
                && i >= 2
                && chars[i - 2..i].iter().all(|w| w.eq_ignore_ascii_case(&'w')));
        if c == '@' || c == '#' || link {
            out.push(MD_BREAK);
        }
    }
    out
}

/// A floor of bytes in words: `10,000 bytes`, `1 byte`.
pub(crate) fn bytes_floor(floor: u64) -> String {
    let floor = floor.max(1);
    format!(
        "{} byte{}",
        thousands(floor),
        if floor == 1 { "" } else { "s" }
    )
}

/// The opening of a per-tier list's note: `The 20 largest changes`, `The largest change`.
pub(crate) fn largest_changes(n: usize) -> String {
    match n {
        1 => "The largest change".to_string(),
        n => format!("The {n} largest changes"),
    }
}

/// The zero-width space [`md_text`] puts after `@` and `#`.
pub const MD_BREAK: char = '\u{200B}';

/// A float as a JSON number rounded to 4 decimals (a whole number as an integer, so that
/// `3` stays `3`), or `null` when it is not finite.
pub fn json_f64(x: f64) -> serde_json::Value {
    if !x.is_finite() {
        return serde_json::Value::Null;
    }
    let rounded: f64 = format!("{x:.4}").parse().unwrap_or(x);
    if rounded.fract() == 0.0 && rounded.abs() < 9.0e15 {
        // `as` is exact below 2^53; -0 becomes 0.
        serde_json::Value::from(rounded as i64)
    } else {
        serde_json::Value::from(rounded)
    }
}
