//! `jitarena sites`: the allocation sites of two JITs' traces, symbolized from each JIT's
//! module and matched by what they mean, with the bytes and allocations of each on each side.
//!
//! A trace of version 2 names each allocation's site: a module and the offset of the call's
//! return address in it. Each side's sites are symbolized from its module (`--base-module`,
//! `--diff-module`, else the file the trace names) into the frames at the call, innermost
//! first: function, file and line, inline frames included. The site is the first frame
//! outside allocator code (frames in `jitarena.h`, `jitarena.hpp` and the files and functions
//! given to skip). Sites are matched across the builds by their function, the inline chain
//! above it and its file's name (not their addresses, nor their lines, which move); two sites
//! with the same key on one side are told apart by their lines: paired in line order when
//! both sides have as many, else nearest lines first within `--line-tolerance`. A module
//! without debug information gives `module+offset`, matched only by that.
//!
//! Every allocation of the traces is counted at exactly one site (those without one, at
//! "(no site recorded)"), so the sites add up to each side's kind and phase totals, which
//! [`SitesDiff`] holds beside them.

pub mod render;
pub mod symbolize;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use jitarena::error::{Error, ErrorCode};
use jitarena::sys::JITARENA_EVENT_PHASE;
use jitarena::trace::{self, NO_SITE};

use symbolize::{Frame, Symbolizer};

/// What `jitarena sites` is asked.
#[derive(Debug, Clone)]
pub struct SitesOptions {
    /// The base JIT's module file (its debug information), else the file the trace names.
    pub base_module: Option<PathBuf>,
    /// The diff JIT's module file.
    pub diff_module: Option<PathBuf>,
    /// Files whose frames are allocator code (matched by file name or path suffix), besides
    /// `jitarena.h` and `jitarena.hpp`.
    pub skip_files: Vec<String>,
    /// Functions whose frames are allocator code (a substring of the demangled name).
    pub skip_functions: Vec<String>,
    /// How far (in lines) two sites of the same function and file may have moved and still
    /// be paired, when their number differs between the sides.
    pub line_tolerance: u32,
    /// Sites shown per list, methods shown per site.
    pub top: usize,
    /// Methods shown per site.
    pub top_methods: usize,
}

impl Default for SitesOptions {
    fn default() -> Self {
        SitesOptions {
            base_module: None,
            diff_module: None,
            skip_files: Vec::new(),
            skip_functions: Vec::new(),
            line_tolerance: 20,
            top: 20,
            top_methods: 3,
        }
    }
}

/// Bytes and allocations.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Count {
    /// Bytes requested.
    pub bytes: u64,
    /// Allocations.
    pub allocations: u64,
}

impl Count {
    fn add(&mut self, bytes: u64) {
        self.bytes += bytes;
        self.allocations += 1;
    }

    fn merge(&mut self, other: Count) {
        self.bytes += other.bytes;
        self.allocations += other.allocations;
    }
}

/// One side's figures for one site, or the whole side.
#[derive(Debug, Clone, Default)]
pub struct Figures {
    /// Its bytes and allocations.
    pub total: Count,
    /// By kind name.
    pub kinds: BTreeMap<String, Count>,
    /// By phase name (`(no phase)` before the first).
    pub phases: BTreeMap<String, Count>,
    /// By method (its name, else `context N`).
    pub methods: HashMap<String, Count>,
}

impl Figures {
    fn add(&mut self, kind: &str, phase: &str, method: &str, bytes: u64) {
        self.total.add(bytes);
        add_to(&mut self.kinds, kind, bytes);
        add_to(&mut self.phases, phase, bytes);
        match self.methods.get_mut(method) {
            Some(c) => c.add(bytes),
            None => {
                let mut c = Count::default();
                c.add(bytes);
                self.methods.insert(method.to_string(), c);
            }
        }
    }

    fn merge(&mut self, other: &Figures) {
        self.total.merge(other.total);
        for (k, c) in &other.kinds {
            self.kinds.entry(k.clone()).or_default().merge(*c);
        }
        for (k, c) in &other.phases {
            self.phases.entry(k.clone()).or_default().merge(*c);
        }
        for (k, c) in &other.methods {
            self.methods.entry(k.clone()).or_default().merge(*c);
        }
    }
}

fn add_to(map: &mut BTreeMap<String, Count>, name: &str, bytes: u64) {
    match map.get_mut(name) {
        Some(c) => c.add(bytes),
        None => {
            let mut c = Count::default();
            c.add(bytes);
            map.insert(name.to_string(), c);
        }
    }
}

/// A site as symbolized: where it is and what it is matched by.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Place {
    /// The site's function (demangled), or `module+0xoffset` without debug information.
    pub function: String,
    /// Its source file (as the debug information names it; empty when unknown).
    pub file: String,
    /// Its line (0 when unknown).
    pub line: u32,
    /// The functions it is inlined into, innermost first, up to the function of the code.
    pub inlined_into: Vec<String>,
    /// The allocator frames skipped below it, innermost first (`function (file:line)`).
    pub skipped: Vec<String>,
}

impl Place {
    /// What sites are matched by: function, inline chain, file name.
    fn key(&self) -> (String, Vec<String>, String) {
        let file = Path::new(&self.file)
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        (self.function.clone(), self.inlined_into.clone(), file)
    }
}

/// One site of the diff: its place on each side (one at least) and its figures.
#[derive(Debug, Clone)]
pub struct SiteDiff {
    /// Where it is in the base build (None: it appeared).
    pub base_place: Option<Place>,
    /// Where it is in the diff build (None: it vanished).
    pub diff_place: Option<Place>,
    /// The base's figures.
    pub base: Figures,
    /// The diff's figures.
    pub diff: Figures,
}

impl SiteDiff {
    /// The diff's bytes less the base's.
    pub fn delta(&self) -> i128 {
        i128::from(self.diff.total.bytes) - i128::from(self.base.total.bytes)
    }

    /// Where it is: the diff's place, else the base's.
    pub fn place(&self) -> &Place {
        match (&self.diff_place, &self.base_place) {
            (Some(p), _) | (None, Some(p)) => p,
            (None, None) => unreachable!("a site has a place on one side at least"),
        }
    }

    /// `grew`, `shrank`, `same`, `new` (only in the diff) or `gone` (only in the base).
    pub fn status(&self) -> &'static str {
        match (&self.base_place, &self.diff_place) {
            (None, _) => "new",
            (_, None) => "gone",
            _ if self.delta() > 0 => "grew",
            _ if self.delta() < 0 => "shrank",
            _ => "same",
        }
    }

    /// The methods whose bytes at this site changed most (by the diff's bytes less the
    /// base's), largest growth first, at most `n`.
    pub fn methods_changed(&self, n: usize, growth: bool) -> Vec<(String, Count, Count)> {
        let mut all: Vec<(String, Count, Count)> = self
            .base
            .methods
            .iter()
            .map(|(m, &c)| {
                (
                    m.clone(),
                    c,
                    self.diff.methods.get(m).copied().unwrap_or_default(),
                )
            })
            .chain(
                self.diff
                    .methods
                    .iter()
                    .filter(|(m, _)| !self.base.methods.contains_key(*m))
                    .map(|(m, &c)| (m.clone(), Count::default(), c)),
            )
            .collect();
        let delta = |(_, b, d): &(String, Count, Count)| i128::from(d.bytes) - i128::from(b.bytes);
        all.retain(|m| if growth { delta(m) > 0 } else { delta(m) < 0 });
        all.sort_by(|a, b| {
            let (da, db) = (delta(a), delta(b));
            let order = if growth { db.cmp(&da) } else { da.cmp(&db) };
            order.then_with(|| a.0.cmp(&b.0))
        });
        all.truncate(n);
        all
    }
}

/// One side of the diff.
#[derive(Debug, Clone, Default)]
pub struct SideSummary {
    /// The traces read.
    pub traces: Vec<PathBuf>,
    /// The modules the sites were symbolized from, and whether each had debug information.
    pub modules: Vec<(String, bool)>,
    /// Methods read.
    pub methods: u64,
    /// Every allocation of the side, by kind and phase: what the sites add up to.
    pub figures: Figures,
    /// Allocations with no site recorded (a version-1 trace, a trace of the Rust API).
    pub unsited: Count,
    /// Distinct sites (after symbolization).
    pub sites: usize,
}

/// `jitarena sites`'s findings.
#[derive(Debug, Clone, Default)]
pub struct SitesDiff {
    /// The base side.
    pub base: SideSummary,
    /// The diff side.
    pub diff: SideSummary,
    /// Every site, the largest growth first (then the largest shrink last).
    pub sites: Vec<SiteDiff>,
    /// Warnings (traces cut short, modules without debug information).
    pub warnings: Vec<String>,
    /// How many sites and methods to show.
    pub top: usize,
    /// Methods shown per site.
    pub top_methods: usize,
    /// The line tolerance used.
    pub line_tolerance: u32,
}

impl SitesDiff {
    /// The sites that grew (or appeared), most first, at most `top`.
    pub fn grew(&self) -> impl Iterator<Item = &SiteDiff> {
        self.sites.iter().filter(|s| s.delta() > 0).take(self.top)
    }

    /// The sites that shrank (or vanished), most first, at most `top`.
    pub fn shrank(&self) -> impl Iterator<Item = &SiteDiff> {
        self.sites
            .iter()
            .rev()
            .filter(|s| s.delta() < 0)
            .take(self.top)
    }
}

/// One side's raw sites: per (module id, offset) of a trace, its figures.
type RawSites = HashMap<(usize, u32, u64), Figures>;

/// A trace's module files by id.
type ModuleFiles = HashMap<u32, String>;

/// The name of allocations without a site.
const NO_SITE_NAME: &str = "(no site recorded)";

/// Reads one side's traces: its raw sites and totals, and each trace's module files by id.
fn read_side(
    traces: &[PathBuf],
    warnings: &mut Vec<String>,
) -> Result<(RawSites, SideSummary, Vec<ModuleFiles>), Error> {
    let mut raw = RawSites::new();
    let mut side = SideSummary {
        traces: traces.to_vec(),
        ..SideSummary::default()
    };
    let mut modules = Vec::new();
    for (t, path) in traces.iter().enumerate() {
        let mut r = trace::open(path)?;
        let mut ids = Vec::new();
        let before = side.figures.total.allocations;
        while let Some(mut m) = r.next_events()? {
            side.methods += 1;
            let schema = m.schema().clone();
            // Methods are told apart by name, else context, else their place in the trace
            // (both JITs replaying the same contexts in the same order).
            let method = match (&m.info().name, m.info().context) {
                (Some(n), _) => n.clone(),
                (None, c) if c >= 0 => format!("context {c}"),
                (None, _) => format!("method #{}", side.methods),
            };
            let table = m.sites().to_vec();
            let mut phase = u32::MAX;
            while let Some((events, sites)) = m.next_chunk_sited()? {
                for (e, &site) in events.iter().zip(sites) {
                    if e.op == JITARENA_EVENT_PHASE {
                        phase = e.arg;
                        continue;
                    }
                    let kind = schema
                        .kinds
                        .get(e.arg as usize)
                        .map(String::as_str)
                        .unwrap_or("(invalid kind)");
                    let phase = schema
                        .phases
                        .get(phase as usize)
                        .map(String::as_str)
                        .unwrap_or("(no phase)");
                    side.figures.add(kind, phase, &method, e.size);
                    let key = match (site != NO_SITE)
                        .then(|| table.get(site as usize))
                        .flatten()
                    {
                        Some(s) => {
                            ids.push(s.module);
                            (t, s.module, s.offset)
                        }
                        None => {
                            side.unsited.add(e.size);
                            (t, u32::MAX, 0)
                        }
                    };
                    raw.entry(key)
                        .or_default()
                        .add(kind, phase, &method, e.size);
                }
            }
        }
        warnings.extend(r.warnings());
        if ids.is_empty() && side.figures.total.allocations > before {
            warnings.push(format!(
                "{}: its allocations carry no site (a text trace, a version-1 trace, or one written without sites): they are counted at {NO_SITE_NAME}; record the trace with JITARENA_TRACE from the JIT",
                path.display(),
            ));
        }
        ids.sort_unstable();
        ids.dedup();
        let names = ids
            .into_iter()
            .filter_map(|id| r.module(id).map(|p| (id, p.to_string())))
            .collect();
        modules.push(names);
    }
    Ok((raw, side, modules))
}

/// The module file to symbolize a trace's module `recorded` from: the one given when its
/// file name is the recorded one's (or nothing else was recorded), else the recorded file.
fn module_file(recorded: &str, given: Option<&Path>, only_one: bool) -> PathBuf {
    if let Some(given) = given {
        let same = Path::new(recorded).file_name() == given.file_name();
        if same || only_one || recorded.is_empty() {
            return given.to_path_buf();
        }
    }
    PathBuf::from(recorded)
}

/// Symbolizes one side's raw sites into places, merging those at the same place.
fn symbolize_side(
    raw: RawSites,
    modules: &[HashMap<u32, String>],
    given: Option<&Path>,
    options: &SitesOptions,
    side: &mut SideSummary,
    warnings: &mut Vec<String>,
    label: &str,
) -> HashMap<Place, Figures> {
    let mut loaders: HashMap<PathBuf, Option<Symbolizer>> = HashMap::new();
    let mut places: HashMap<Place, Figures> = HashMap::new();
    for ((t, module, offset), figures) in raw {
        let place = if module == u32::MAX {
            Place {
                function: NO_SITE_NAME.to_string(),
                file: String::new(),
                line: 0,
                inlined_into: Vec::new(),
                skipped: Vec::new(),
            }
        } else {
            let recorded = modules
                .get(t)
                .and_then(|m| m.get(&module))
                .cloned()
                .unwrap_or_default();
            let only_one = modules.get(t).is_some_and(|m| m.len() == 1);
            let file = module_file(&recorded, given, only_one);
            let loader = loaders.entry(file.clone()).or_insert_with(|| {
                let s = (!recorded.is_empty() || given.is_some())
                    .then(|| Symbolizer::open(&file))
                    .flatten();
                let debug = s.as_ref().is_some_and(Symbolizer::has_lines);
                if !debug {
                    warnings.push(format!(
                        "{label}: {}: no debug information could be read: its sites are shown as module+offset",
                        file.display()
                    ));
                }
                side.modules.push((file.display().to_string(), debug));
                s
            });
            let name = Path::new(if recorded.is_empty() {
                "unknown"
            } else {
                &recorded
            })
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_else(|| recorded.clone());
            let frames = match (module, loader) {
                (0, _) | (_, None) => Vec::new(),
                (_, Some(s)) => s.frames(offset),
            };
            place_of(&frames, &name, offset, module, options)
        };
        match places.get_mut(&place) {
            Some(f) => f.merge(&figures),
            None => {
                places.insert(place, figures);
            }
        }
    }
    side.sites = places.len();
    places
}

/// The place of a site from its frames (innermost first): the first frame outside allocator
/// code, or `module+0xoffset` without frames.
fn place_of(frames: &[Frame], module: &str, offset: u64, id: u32, options: &SitesOptions) -> Place {
    let skipped = |f: &Frame| {
        let file = f.file.as_str();
        let name = Path::new(file)
            .file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default();
        name == "jitarena.h"
            || name == "jitarena.hpp"
            || options
                .skip_files
                .iter()
                .any(|s| !s.is_empty() && (name == s.as_str() || file.ends_with(s.as_str())))
            || options
                .skip_functions
                .iter()
                .any(|s| !s.is_empty() && f.function.contains(s.as_str()))
    };
    match frames.iter().position(|f| !skipped(f)) {
        Some(k) => Place {
            function: frames[k].function.clone(),
            file: frames[k].file.clone(),
            line: frames[k].line,
            inlined_into: frames[k + 1..].iter().map(|f| f.function.clone()).collect(),
            skipped: frames[..k]
                .iter()
                .map(|f| format!("{} ({}:{})", f.function, short_file(&f.file), f.line))
                .collect(),
        },
        None => Place {
            function: match id {
                0 => "(unknown module)".to_string(),
                _ => format!("{module}+{offset:#x}"),
            },
            file: String::new(),
            line: 0,
            inlined_into: Vec::new(),
            skipped: frames
                .iter()
                .map(|f| format!("{} ({}:{})", f.function, short_file(&f.file), f.line))
                .collect(),
        },
    }
}

/// A file's name without its directories.
pub fn short_file(file: &str) -> String {
    Path::new(file)
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_else(|| file.to_string())
}

/// Pairs the base's and the diff's sites: by key, then by line (see the module's doc).
fn pair(
    base: HashMap<Place, Figures>,
    diff: HashMap<Place, Figures>,
    tolerance: u32,
) -> Vec<SiteDiff> {
    pair_places(
        base.into_iter().collect(),
        diff.into_iter().collect(),
        tolerance,
    )
}

/// Pairs the base's and the diff's sites as `jitarena sites` does: by function, inline chain
/// and file name; within one such key, in line order when both sides have as many sites, else
/// nearest lines first, at most `tolerance` lines apart; the rest appear or vanish. Returns
/// them the largest growth first.
pub fn pair_places(
    base: Vec<(Place, Figures)>,
    diff: Vec<(Place, Figures)>,
    tolerance: u32,
) -> Vec<SiteDiff> {
    type Group = Vec<(Place, Figures)>;
    let mut groups: BTreeMap<(String, Vec<String>, String), (Group, Group)> = BTreeMap::new();
    for (p, f) in base {
        groups.entry(p.key()).or_default().0.push((p, f));
    }
    for (p, f) in diff {
        groups.entry(p.key()).or_default().1.push((p, f));
    }
    let mut out = Vec::new();
    for (_, (mut b, mut d)) in groups {
        b.sort_by(|x, y| x.0.cmp(&y.0));
        d.sort_by(|x, y| x.0.cmp(&y.0));
        let mut pairs: Vec<(Option<usize>, Option<usize>)> = Vec::new();
        if b.len() == d.len() {
            pairs.extend((0..b.len()).map(|i| (Some(i), Some(i))));
        } else {
            let mut candidates: Vec<(u32, usize, usize)> = Vec::new();
            for (i, (pb, _)) in b.iter().enumerate() {
                for (j, (pd, _)) in d.iter().enumerate() {
                    let distance = pb.line.abs_diff(pd.line);
                    if distance <= tolerance {
                        candidates.push((distance, i, j));
                    }
                }
            }
            candidates.sort_unstable();
            let (mut used_b, mut used_d) = (vec![false; b.len()], vec![false; d.len()]);
            for (_, i, j) in candidates {
                if !used_b[i] && !used_d[j] {
                    used_b[i] = true;
                    used_d[j] = true;
                    pairs.push((Some(i), Some(j)));
                }
            }
            pairs.extend(
                (0..b.len())
                    .filter(|&i| !used_b[i])
                    .map(|i| (Some(i), None)),
            );
            pairs.extend(
                (0..d.len())
                    .filter(|&j| !used_d[j])
                    .map(|j| (None, Some(j))),
            );
        }
        let mut b: Vec<Option<(Place, Figures)>> = b.into_iter().map(Some).collect();
        let mut d: Vec<Option<(Place, Figures)>> = d.into_iter().map(Some).collect();
        for (i, j) in pairs {
            let base = i.and_then(|i| b[i].take());
            let diff = j.and_then(|j| d[j].take());
            let (base_place, base) = base.map_or((None, Figures::default()), |(p, f)| (Some(p), f));
            let (diff_place, diff) = diff.map_or((None, Figures::default()), |(p, f)| (Some(p), f));
            out.push(SiteDiff {
                base_place,
                diff_place,
                base,
                diff,
            });
        }
    }
    out.sort_by(|x, y| {
        y.delta()
            .cmp(&x.delta())
            .then_with(|| x.place().cmp(y.place()))
    });
    out
}

/// `jitarena sites`: reads both sides' traces, symbolizes and pairs their sites.
pub fn diff_sites(
    base: &[PathBuf],
    diff: &[PathBuf],
    options: &SitesOptions,
) -> Result<SitesDiff, Error> {
    let mut warnings = Vec::new();
    let (raw_b, mut side_b, modules_b) = read_side(base, &mut warnings)?;
    let (raw_d, mut side_d, modules_d) = read_side(diff, &mut warnings)?;
    for (module, side) in [
        (&options.base_module, "--base-module"),
        (&options.diff_module, "--diff-module"),
    ] {
        if let Some(m) = module {
            if !m.is_file() {
                return Err(Error::new(
                    ErrorCode::Io,
                    format!("{}: {side}: no such file", m.display()),
                ));
            }
        }
    }
    let places_b = symbolize_side(
        raw_b,
        &modules_b,
        options.base_module.as_deref(),
        options,
        &mut side_b,
        &mut warnings,
        "base",
    );
    let places_d = symbolize_side(
        raw_d,
        &modules_d,
        options.diff_module.as_deref(),
        options,
        &mut side_d,
        &mut warnings,
        "diff",
    );
    Ok(SitesDiff {
        base: side_b,
        diff: side_d,
        sites: pair(places_b, places_d, options.line_tolerance),
        warnings,
        top: options.top,
        top_methods: options.top_methods,
        line_tolerance: options.line_tolerance,
    })
}
