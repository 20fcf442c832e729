//! Names and numbers as people read them: a name from a JIT or a compiled program made safe
//! to show (no control character, bidirectional override or endless name reaches a terminal
//! or a document), and counts with thousands separators. Used by the computations that word
//! their findings (`diff`) and by every report.

use std::borrow::Cow;

/// Whether a character would hide or disguise text when shown: a control character, a
/// bidirectional control (Unicode's Bidi_Control: an override, isolate or mark, which can
/// reorder what a reader sees), or a non-character.
pub(crate) fn disguises(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
        || matches!(c, '\u{FFFE}' | '\u{FFFF}')
}

/// A name from a compiled program or a JIT (a method, kind, phase or collection name), made
/// safe to show on a terminal or in a document: control characters become their visible
/// pictures (a newline shows as `␊`, an escape as `␛`), bidirectional overrides and
/// non-characters become `�`. Everything else is kept.
pub fn visible(name: &str) -> Cow<'_, str> {
    if !name.chars().any(disguises) {
        return Cow::Borrowed(name);
    }
    Cow::Owned(
        name.chars()
            .map(|c| match c as u32 {
                n @ 0..=0x1F => char::from_u32(0x2400 + n).unwrap_or('\u{FFFD}'),
                0x7F => '\u{2421}',
                _ if disguises(c) => '\u{FFFD}',
                _ => c,
            })
            .collect(),
    )
}

/// Longest name shown, in characters: a longer one is cut and ends in `…`, so that a hostile
/// name cannot push a pull request comment past its size limit or flood a terminal.
pub const NAME_SHOWN: usize = 200;

/// A name as a report shows it: [`visible`], and cut at [`NAME_SHOWN`] characters.
pub fn shown(name: &str) -> Cow<'_, str> {
    let name = visible(name);
    match name.char_indices().nth(NAME_SHOWN) {
        None => name,
        Some((at, _)) => Cow::Owned(format!("{}…", &name[..at])),
    }
}

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

/// The names of `candidates` nearest to `name` (without case, by edit distance), at most
/// `n`, nearest first: those within a third of the name's length (at least 2 edits).
pub fn nearest<'a>(name: &str, candidates: &[&'a str], n: usize) -> Vec<&'a str> {
    let name = name.to_lowercase();
    let most = (name.chars().count() / 3).max(2);
    let mut scored: Vec<(usize, &str)> = candidates
        .iter()
        .map(|c| (edits(&name, &c.to_lowercase()), *c))
        .filter(|(d, _)| *d <= most)
        .collect();
    scored.sort();
    scored.into_iter().take(n).map(|(_, c)| c).collect()
}

/// The Levenshtein distance between two strings, by characters.
fn edits(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (diagonal + usize::from(ca != *cb))
                .min(above + 1)
                .min(row[j] + 1);
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_names_forgive_a_letter_and_case() {
        let kinds = ["ValueNumber", "LSRA", "LSRA_Interval", "ASTNode"];
        assert_eq!(nearest("ValueNumbr", &kinds, 3), ["ValueNumber"]);
        assert_eq!(nearest("lsra", &kinds, 3), ["LSRA"]);
        assert!(nearest("Morph", &kinds, 3).is_empty());
        assert_eq!(edits("kitten", "sitting"), 3);
    }
}
