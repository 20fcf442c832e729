//! One summary over every platform: the JSON reports of several memdiff runs (one per host and
//! target: windows x64, windows x86, linux x64, ...) merged into one markdown page, a section
//! per platform, as the .NET JIT's replay pipeline summarizes its code-size and throughput
//! diffs. The verdict joins the platforms' (INCOMPLETE when one is, FAIL when one found a
//! regression), and the first lines name every platform that did not pass, the worst first.
//! Each report's verdict is recomputed from its own failures and collections, and a report
//! whose stated verdict disagrees is refused.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

use serde_json::value::RawValue;
use serde_json::Value;

use super::diff::{colored_pdiff, details};
use super::md_text;
use crate::diff::Status;
use crate::text::{shown, thousands};
use jitarena::error::{Error, ErrorCode};

/// The memdiff JSON schema this reads.
const SCHEMA: u64 = 3;

/// A tier group's figures: methods, base bytes, diff bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Figures {
    /// Methods (contexts) compared.
    pub methods: u64,
    /// Base bytes.
    pub base: u64,
    /// Diff bytes.
    pub diff: u64,
}

/// One collection of a platform's report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CollectionRow {
    /// Its name.
    pub name: String,
    /// `PASS`, `FAIL`, `INCOMPLETE` or `INCOMPLETE, FAIL`.
    pub status: String,
    /// All contexts, MinOpts, FullOpts.
    pub groups: [Figures; 3],
}

/// What a platform's memdiff JSON report says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlatformReport {
    /// `PASS`, `FAIL`, `INCOMPLETE` or `INCOMPLETE, FAIL`.
    pub status: String,
    /// memdiff's exit code: 0 or 1.
    pub exit_code: u8,
    /// Why, in one sentence.
    pub headline: String,
    /// Every rule broken, each in a sentence naming its collection.
    pub failures: Vec<String>,
    /// The sums over collections: all contexts, MinOpts, FullOpts.
    pub totals: [Figures; 3],
    /// The collections compared.
    pub collections: Vec<CollectionRow>,
    /// The collections that could not be compared: (name, why).
    pub not_compared: Vec<(String, String)>,
}

/// A JSON object's members, each left unparsed (a slice of the report's text): what is
/// not read costs nothing. Not an object (or absent): no member, as `Value` indexing gives
/// `null` for each.
fn members(raw: Option<&RawValue>) -> HashMap<String, &RawValue> {
    raw.and_then(|r| serde_json::from_str(r.get()).ok())
        .unwrap_or_default()
}

/// A JSON array's items, each left unparsed; `None` when it is not an array.
fn items(raw: Option<&RawValue>) -> Option<Vec<&RawValue>> {
    raw.and_then(|r| serde_json::from_str(r.get()).ok())
}

/// One value, parsed (`null` when absent): for the small parts of a report only.
fn parsed(raw: Option<&RawValue>) -> Value {
    raw.and_then(|r| serde_json::from_str(r.get()).ok())
        .unwrap_or(Value::Null)
}

/// Reads a memdiff JSON report (schema 3). Only what the summary needs is parsed: the report's
/// text is held once, its collections, failures and collections not compared are each parsed
/// alone, checked, reduced to their row and dropped, so that a report of 300k collections
/// costs about its size and a row per collection (`docs/formats.md`, "Reader memory").
pub fn read_report(path: &Path) -> Result<PlatformReport, Error> {
    let bad = |what: &str| {
        Error::new(
            ErrorCode::Io,
            format!("{}: not a memdiff JSON report ({what})", path.display()),
        )
    };
    let bytes = std::fs::read(path).map_err(|e| jitarena::format::io_error(path, "read", &e))?;
    let text = std::str::from_utf8(&bytes).map_err(|_| bad("not UTF-8 text"))?;
    // Byte order marks in front (an editor's, or two from a file re-encoded twice) are no
    // part of the JSON: serde_json would refuse the first as a syntax error.
    let doc: HashMap<String, &RawValue> = serde_json::from_str(text.trim_start_matches('\u{FEFF}'))
        .map_err(|e| bad(&e.to_string()))?;
    check_schema(&parsed(doc.get("schema_version").copied())).map_err(|what| bad(&what))?;
    let verdict = members(doc.get("verdict").copied());
    let field = |name: &str| parsed(verdict.get(name).copied());
    let text_of = |v: &Value, what: &str| v.as_str().map(String::from).ok_or_else(|| bad(what));
    // A status is one memdiff writes; the exit code is the one that status gives.
    let status_of = |v: &Value, what: &str| {
        let label = text_of(v, what)?;
        Status::from_label(&label).map(|_| label).ok_or_else(|| {
            bad(&format!(
                "{what} is {:?}, not PASS, FAIL, INCOMPLETE or INCOMPLETE, FAIL",
                v.as_str().unwrap_or_default()
            ))
        })
    };
    let status = status_of(&field("status"), "verdict.status")?;
    let exit_code = match field("exit_code").as_u64() {
        Some(c @ 0..=1) => c as u8,
        _ => return Err(bad("verdict.exit_code is not 0 or 1")),
    };
    if Status::from_label(&status).map(Status::exit_code) != Some(exit_code) {
        return Err(bad(&format!(
            "verdict.status {status} with verdict.exit_code {exit_code}: memdiff writes 0 for PASS and 1 otherwise"
        )));
    }
    let listed =
        items(verdict.get("failures").copied()).ok_or_else(|| bad("no verdict.failures"))?;
    let mut failures = Vec::with_capacity(listed.len());
    let (mut listed_incomplete, mut listed_regression) = (false, false);
    for raw in listed {
        let f = parsed(Some(raw));
        failures.push(text_of(&f["sentence"], "a failure without a sentence")?);
        let (i, r) = class_of(&f, "verdict.failures").map_err(|what| bad(&what))?;
        listed_incomplete |= i;
        listed_regression |= r;
    }
    let listed = items(doc.get("collections").copied()).ok_or_else(|| bad("no collections"))?;
    let mut collections = Vec::with_capacity(listed.len());
    // What the collections' own findings give: see `check_collection`.
    let (mut incomplete, mut regression) = (listed.is_empty(), false);
    for raw in listed {
        let c = parsed(Some(raw));
        collections.push(CollectionRow {
            name: text_of(&c["name"], "a collection without a name")?,
            status: status_of(&c["status"], "a collection's status")?,
            groups: groups_of(&c["diff"]["groups"]).ok_or_else(|| bad("a collection's groups"))?,
        });
        let (cov, grew) = check_collection(&c).map_err(|what| bad(&what))?;
        incomplete |= cov;
        regression |= grew;
    }
    let listed = items(doc.get("one_sided").copied()).ok_or_else(|| bad("no one_sided"))?;
    incomplete |= !listed.is_empty();
    let not_compared = listed
        .into_iter()
        .map(|raw| {
            let o = parsed(Some(raw));
            Ok((
                text_of(&o["name"], "a name")?,
                text_of(&o["reason"], "a reason")?,
            ))
        })
        .collect::<Result<Vec<_>, Error>>()?;
    let from_collections = Status::of(incomplete, regression);
    let from_failures = Status::of(listed_incomplete, listed_regression);
    if status != from_collections.label() || status != from_failures.label() {
        return Err(bad(&format!(
            "verdict.status is {status}, but its collections give {} and its verdict.failures {}: the report was edited, or is not memdiff's",
            from_collections.label(),
            from_failures.label()
        )));
    }
    Ok(PlatformReport {
        status,
        exit_code,
        headline: text_of(&field("headline"), "no verdict.headline")?,
        failures,
        totals: groups_of(&parsed(doc.get("totals").copied())).ok_or_else(|| bad("totals"))?,
        collections,
        not_compared,
    })
}

/// Checks a report's `schema_version`: a number equal to [`SCHEMA`] (JSON writes `3` and
/// `3.0` alike); the error says what it holds instead.
fn check_schema(v: &Value) -> Result<(), String> {
    match v {
        Value::Null => Err("no schema_version".into()),
        Value::Number(n) if n.as_f64() == Some(SCHEMA as f64) => Ok(()),
        Value::Number(n) => Err(format!("schema_version {n}; this jitarena reads {SCHEMA}")),
        other => Err(format!(
            "schema_version is {}, not a number; this jitarena reads {SCHEMA}",
            cut(&other.to_string())
        )),
    }
}

/// A value from a report as a message shows it: at most 100 characters.
fn cut(text: &str) -> String {
    match text.char_indices().nth(100) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// A failure's class: (INCOMPLETE, FAIL); `what` names its list in the error.
fn class_of(f: &Value, what: &str) -> Result<(bool, bool), String> {
    match f["class"].as_str() {
        Some("INCOMPLETE") => Ok((true, false)),
        Some("FAIL") => Ok((false, true)),
        _ => Err(format!(
            "a failure of {what} whose class is {}, not INCOMPLETE or FAIL",
            cut(&f["class"].to_string())
        )),
    }
}

/// Whether a JSON list of failures holds one of each class: (INCOMPLETE, FAIL).
fn classes(failures: &Value, what: &str) -> Result<(bool, bool), String> {
    let list = failures.as_array().ok_or_else(|| format!("no {what}"))?;
    let (mut incomplete, mut regression) = (false, false);
    for f in list {
        let (i, r) = class_of(f, what)?;
        incomplete |= i;
        regression |= r;
    }
    Ok((incomplete, regression))
}

/// A collection's status from its own findings, checked against the status it states: its
/// coverage failures (INCOMPLETE) and its growth failures (FAIL); returns them. With the
/// collections not compared (and no collection at all) they give the report's verdict, which
/// `read_report` checks against the verdict it states and its list of failures: a report
/// edited to PASS while still listing a failure, or with a failure taken out but its
/// collection still failing, is refused.
fn check_collection(c: &Value) -> Result<(bool, bool), String> {
    let name = cut(c["name"].as_str().unwrap_or_default());
    let (cov, _) = classes(&c["coverage_failures"], "a collection's coverage_failures")?;
    let (_, grew) = classes(
        &c["diff"]["verdict"]["failures"],
        "a collection's diff.verdict.failures",
    )?;
    let found = Status::of(cov, grew);
    let stated = (c["status"].as_str(), c["exit_code"].as_u64());
    if stated != (Some(found.label()), Some(found.exit_code().into())) {
        return Err(format!(
            "collection {name:?} states {} (exit code {}) where its failures give {} (exit code {}): the report was edited, or is not memdiff's",
            cut(&c["status"].to_string()),
            cut(&c["exit_code"].to_string()),
            found.label(),
            found.exit_code()
        ));
    }
    Ok((cov, grew))
}

/// All contexts, MinOpts and FullOpts of a JSON list of groups (a group absent: nothing).
fn groups_of(groups: &Value) -> Option<[Figures; 3]> {
    let mut out = [Figures::default(); 3];
    for g in groups.as_array()? {
        let at = match g["name"].as_str()? {
            "Overall" => 0,
            "MinOpts" => 1,
            "FullOpts" => 2,
            _ => continue,
        };
        out[at] = Figures {
            methods: g["methods"].as_u64()?,
            base: g["base"]["bytes"].as_u64()?,
            diff: g["diff"]["bytes"].as_u64()?,
        };
    }
    Some(out)
}

/// The exit code of the platforms together: the worst of theirs.
pub fn worst_exit(platforms: &[(String, PlatformReport)]) -> u8 {
    platforms
        .iter()
        .map(|(_, p)| p.exit_code)
        .max()
        .unwrap_or(0)
}

fn icon(status: &str) -> &'static str {
    if status == "PASS" {
        "✅"
    } else {
        "❌"
    }
}

/// Whether a status is (incomplete, a regression).
fn parts(status: &str) -> (bool, bool) {
    match Status::from_label(status) {
        Some(Status::Fail) => (false, true),
        Some(Status::Incomplete) => (true, false),
        Some(Status::IncompleteAndFail) => (true, true),
        Some(Status::Pass) | None => (false, false),
    }
}

/// How bad a status is, for ordering platforms: a regression found (with coverage broken as
/// well, then alone) before coverage broken alone.
fn severity(status: &str) -> u8 {
    match parts(status) {
        (true, true) => 3,
        (false, true) => 2,
        (true, false) => 1,
        (false, false) => 0,
    }
}

/// The verdict over every platform, as memdiff joins collections: INCOMPLETE when any
/// platform is, FAIL when any found a regression, INCOMPLETE, FAIL when both (on one platform
/// or on two).
pub fn overall_status(platforms: &[(String, PlatformReport)]) -> Status {
    let (incomplete, regression) = platforms
        .iter()
        .map(|(_, p)| parts(&p.status))
        .fold((false, false), |(i, r), (pi, pr)| (i || pi, r || pr));
    Status::of(incomplete, regression)
}

/// The summary over every platform, in markdown: the verdict over all platforms, then every
/// platform that did not pass with its verdict and why (the worst first: a regression before
/// coverage alone, then in the order given), a table of the platforms, then a section per
/// platform.
pub fn render_platforms_markdown(platforms: &[(String, PlatformReport)]) -> String {
    let mut o = String::new();
    let worst = worst_exit(platforms);
    let status = overall_status(platforms).label();
    let _ = writeln!(
        o,
        "## jitarena memdiff over {} platform{}: {} {status} (exit {worst})",
        platforms.len(),
        if platforms.len() == 1 { "" } else { "s" },
        icon(status)
    );
    let mut deciding: Vec<&(String, PlatformReport)> =
        platforms.iter().filter(|(_, p)| p.exit_code > 0).collect();
    // Stable: platforms of one status stay in the order given.
    deciding.sort_by_key(|(_, p)| std::cmp::Reverse(severity(&p.status)));
    for (name, p) in &deciding {
        let _ = writeln!(o);
        let _ = writeln!(
            o,
            "**{}**: {}: {}",
            p.status,
            md_text(&shown(name)),
            md_text(&p.headline)
        );
    }
    if deciding.is_empty() {
        let _ = writeln!(o);
        let _ = writeln!(o, "**PASS**: every platform passed");
    }
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "|Platform|Verdict|Contexts|MinOpts|FullOpts|Base bytes|Diff bytes|PDIFF|"
    );
    let _ = writeln!(o, "|---|---|--:|--:|--:|--:|--:|--:|");
    for (name, p) in platforms {
        let [all, min, full] = p.totals;
        let _ = writeln!(
            o,
            "|{}|{} {}|{}|{}|{}|{}|{}|{}|",
            md_text(&shown(name)),
            icon(&p.status),
            p.status,
            thousands(all.methods),
            thousands(min.methods),
            thousands(full.methods),
            thousands(all.base),
            thousands(all.diff),
            colored_pdiff(all.base, all.diff)
        );
    }
    let _ = writeln!(o);
    for (name, p) in platforms {
        platform_section(&mut o, name, p);
    }
    o
}

/// One platform: its verdict and why, its rules broken, and its collections.
fn platform_section(o: &mut String, name: &str, p: &PlatformReport) {
    let _ = writeln!(o, "### {}", md_text(&shown(name)));
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "{} **{}**: {}",
        icon(&p.status),
        p.status,
        md_text(&p.headline)
    );
    let _ = writeln!(o);
    if p.failures.len() > 1 {
        for f in &p.failures {
            let _ = writeln!(o, "- {}", md_text(f));
        }
        let _ = writeln!(o);
    }
    // The platform's name is in the heading above: what `<summary>` holds is not markdown.
    details(o, "Collections", |o| {
        let _ = writeln!(
            o,
            "|Collection|Verdict|Contexts|Base bytes|Diff bytes|PDIFF|MinOpts|FullOpts|"
        );
        let _ = writeln!(o, "|---|---|--:|--:|--:|--:|--:|--:|");
        for c in &p.collections {
            let [all, min, full] = c.groups;
            let pdiff_of = |f: Figures| match f.methods {
                0 => String::new(),
                _ => colored_pdiff(f.base, f.diff),
            };
            let _ = writeln!(
                o,
                "|{}|{} {}|{}|{}|{}|{}|{}|{}|",
                md_text(&shown(&c.name)),
                icon(&c.status),
                c.status,
                thousands(all.methods),
                thousands(all.base),
                thousands(all.diff),
                pdiff_of(all),
                pdiff_of(min),
                pdiff_of(full)
            );
        }
        for (c, why) in &p.not_compared {
            let _ = writeln!(
                o,
                "|{}|❌ not compared: {}|||||||",
                md_text(&shown(c)),
                md_text(why)
            );
        }
    });
}
