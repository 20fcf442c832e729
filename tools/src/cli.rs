//! The `jitarena` command line. Exit codes: 0 success; 1 a regression beyond the thresholds or
//! incomplete coverage (`memdiff`); 2 bad usage or unreadable input, with a message naming the file and the problem.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::diff::{
    self, collections_from_roots, pair_name, Collection, CoverageRules, DiffOptions, Report,
    Thresholds,
};
use crate::gen::{GenOptions, Generator};
use crate::harness::{self, ReplayOptions};
use crate::logtools::{self, DumpFormat};
use crate::output::{check_not_input, OutputFile};
use crate::report::{self, stats, thousands};
use jitarena::error::Error;
use jitarena::log::{LogWriter, MethodCounts};
use jitarena::trace::TraceWriter;

/// Memory statistics of a JIT's arena: per kind, per phase, per method.
#[derive(Parser, Debug)]
#[command(name = "jitarena", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Sum up stats logs: totals, kinds, phases, tiers, percentiles, largest methods.
    Stats {
        /// Stats logs, or directories of them.
        #[arg(required = true)]
        logs: Vec<PathBuf>,
        /// Print JSON instead of the table.
        #[arg(long)]
        json: bool,
    },
    /// Print one row per method of stats logs (csv, jsonl), or a trace as text.
    Dump {
        /// Stats logs (csv, jsonl) or traces (text).
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Output format.
        #[arg(long, value_enum, default_value = "csv")]
        format: Format,
        /// Write here instead of to standard output (not over an input).
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// Merge stats logs (shards) into one; kind lists are united by name.
    Merge {
        /// The merged log to write.
        #[arg(short, long)]
        output: PathBuf,
        /// Stats logs, or directories of them.
        #[arg(required = true)]
        logs: Vec<PathBuf>,
    },
    /// Generate a synthetic JIT-like workload: a trace, or a stats log directly.
    Gen(GenArgs),
    /// Compare a baseline JIT's stats logs with a changed JIT's: per kind, phase, tier, method.
    Memdiff(Box<MemdiffArgs>),
    /// Merge the JSON reports of memdiff runs on several platforms (hosts and targets) into one
    /// markdown summary, a section per platform; exits with the worst of their exit codes.
    Summarize {
        /// A platform and its memdiff JSON report (`memdiff --json`), in the order shown
        /// (repeatable).
        #[arg(long, num_args = 2, value_names = ["NAME", "REPORT"], action = clap::ArgAction::Append, required = true)]
        platform: Vec<String>,
        /// Write the markdown here instead of to standard output.
        #[arg(long, value_name = "FILE")]
        md: Option<PathBuf>,
    },
    /// The main job on defaults: generate a baseline and a diff workload with a known injected
    /// regression, replay both through the arena, and diff them.
    Demo {
        /// Methods per workload.
        #[arg(long, default_value_t = 2000)]
        methods: u64,
        /// Where the logs and reports go.
        #[arg(long, default_value = "jitarena-demo")]
        out: PathBuf,
        /// Seed of the workloads.
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// Replay traces (binary or text) through the arena's C fast path into a stats log.
    Replay {
        /// Traces to replay, in order.
        #[arg(required = true)]
        traces: Vec<PathBuf>,
        /// The stats log to write (without it, the replay only runs and reports).
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Page size of the replayed arena, in bytes.
        #[arg(long, default_value_t = 65536)]
        page_size: usize,
        /// Memory limit per method, in bytes (0: none).
        #[arg(long, default_value_t = 0)]
        limit: u64,
        /// Replay with the uncounted inline path (JITARENA_NO_COUNTERS).
        #[arg(long)]
        no_counters: bool,
        /// Record bytes per (phase, kind) in each method's record, as an arena made with
        /// `kinds_by_phase` on does (`stats` and `memdiff` then show them).
        #[arg(long)]
        kinds_by_phase: bool,
    },
    /// Which allocation sites grew: two JITs' traces (recorded with JITARENA_TRACE), each
    /// site symbolized from its JIT's module (DWARF) and matched across the builds by
    /// function, inline chain and file (docs/memdiff.md, "From the gate to the site").
    Sites(Box<SitesArgs>),
}

#[derive(Args, Debug)]
struct SitesArgs {
    /// The base JIT's trace (version 2, with sites), or a directory of its traces (one per
    /// process: JITARENA_TRACE=sites/%m/%p.jat).
    base: PathBuf,
    /// The diff JIT's trace, or a directory of them.
    diff: PathBuf,
    /// The base JIT's module (its shared library or program, with debug information); by
    /// default the file the trace names.
    #[arg(long, value_name = "PATH")]
    base_module: Option<PathBuf>,
    /// The diff JIT's module.
    #[arg(long, value_name = "PATH")]
    diff_module: Option<PathBuf>,
    /// A source file whose frames are allocator code, skipped to find the site (a file name
    /// or the end of a path; repeatable; jitarena.h and jitarena.hpp always are).
    #[arg(long, value_name = "FILE")]
    skip_file: Vec<String>,
    /// A function whose frames are allocator code (part of its demangled name; repeatable).
    #[arg(long, value_name = "NAME")]
    skip_function: Vec<String>,
    /// Lines a site may have moved and still be paired, when a function's sites differ in
    /// number between the builds.
    #[arg(long, default_value_t = 20)]
    line_tolerance: u32,
    /// Sites shown per list.
    #[arg(long, default_value_t = 20)]
    top: usize,
    /// Methods shown per site.
    #[arg(long, default_value_t = 3)]
    top_methods: usize,
    /// Print JSON instead of text.
    #[arg(long, conflicts_with = "markdown")]
    json: bool,
    /// Print markdown instead of text.
    #[arg(long)]
    markdown: bool,
}

#[derive(Args, Debug)]
struct MemdiffArgs {
    /// BASE DIFF: two logs or directories of shards, one collection (or use the options below).
    paths: Vec<PathBuf>,
    /// A baseline log or directory of shards (repeatable); one collection with --diff.
    #[arg(long)]
    base: Vec<PathBuf>,
    /// A diff log or directory of shards (repeatable).
    #[arg(long)]
    diff: Vec<PathBuf>,
    /// A directory whose subdirectories are the baseline's collections (each holding its logs
    /// or shards), paired by name with those of --diff-root.
    #[arg(long, value_name = "DIR", requires = "diff_root")]
    base_root: Option<PathBuf>,
    /// A directory whose subdirectories are the diff's collections.
    #[arg(long, value_name = "DIR", requires = "base_root")]
    diff_root: Option<PathBuf>,
    /// A named collection: its base and diff, each a log or a directory of shards
    /// (repeatable).
    #[arg(long, num_args = 3, value_names = ["NAME", "BASE", "DIFF"], action = clap::ArgAction::Append)]
    collection: Vec<String>,
    /// Fail (INCOMPLETE) when either side misses more than this percentage of the other side's
    /// methods in a collection.
    #[arg(long, default_value = "1", value_name = "PCT", value_parser = parse_share)]
    max_missed: f64,
    /// Accept logs whose last record was cut short, and CSV files whose last line has no line
    /// ending (by default they make the check INCOMPLETE).
    #[arg(long)]
    allow_truncated: bool,
    /// Methods that grew by fewer bytes stay out of the summary's list of methods that grew
    /// most.
    #[arg(long, default_value_t = 4096, value_name = "BYTES")]
    min_delta_bytes: u64,
    /// Leave this kind out of every total and of the kinds, e.g. DebugOnly or CMK_DebugOnly
    /// (repeatable; matched without case; a name no log holds is an error); the phases'
    /// bytes, recorded per phase, still hold it.
    #[arg(long = "ignore-kind", value_name = "NAME")]
    ignore_kinds: Vec<String>,
    /// Fail when total bytes grow by more than this percentage.
    #[arg(long, default_value = "25", value_name = "PCT", value_parser = parse_percent)]
    fail_above: f64,
    /// Fail when a kind grows by more than this percentage, its gain counted no further than
    /// the collection's (bytes moved from other kinds do not count; `off`: never).
    #[arg(long, default_value = "25", value_name = "PCT", value_parser = parse_limit)]
    kind_fail_above: Limit,
    /// Kinds smaller than this many bytes on both sides cannot fail the check
    /// [default: 1% of the base's total bytes].
    #[arg(long, value_name = "BYTES")]
    kind_min_bytes: Option<u64>,
    /// Fail when a method grows by more than this percentage [default: off].
    #[arg(long, value_name = "PCT", value_parser = parse_limit)]
    method_fail_above: Option<Limit>,
    /// Methods smaller than this many bytes in the base cannot fail the method check.
    #[arg(long, default_value_t = 100_000, value_name = "BYTES")]
    method_min_bytes: u64,
    /// MinOpts and FullOpts are each judged against --fail-above on their own only when the
    /// tier holds at least this many bytes on one side...
    #[arg(long, default_value_t = 1_000_000, value_name = "BYTES")]
    tier_min_bytes: u64,
    /// ...and at least this share (0 to 100) of the collection's base bytes.
    #[arg(long, default_value = "1", value_name = "PCT", value_parser = parse_share)]
    tier_min_share: f64,
    /// Methods listed in each top list.
    #[arg(long, default_value_t = 10)]
    top: usize,
    /// Methods smaller than this in the base are left out of the relative top lists.
    #[arg(long, default_value_t = 10_000, value_name = "BYTES")]
    min_method_bytes: u64,
    /// Write the markdown summary (short, for a pull request comment) here.
    #[arg(long, value_name = "FILE")]
    md: Option<PathBuf>,
    /// Write the long markdown report (every kind and phase) here.
    #[arg(long, value_name = "FILE")]
    md_long: Option<PathBuf>,
    /// Write the JSON report here.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Write the self-contained HTML page here.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// Do not print the console report, nor a progress line.
    #[arg(long, short)]
    quiet: bool,
    /// Compare a per-context CSV instead of logs: SuperPMI's details file (`superpmi
    /// -details`), one per collection, named after the file (`X.mch_details.csv` holds
    /// `X.mch`), or any CSV with a base and a diff column (repeatable).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["base", "diff"])]
    csv: Vec<PathBuf>,
    /// The metric of SuperPMI's details file to compare: its `Base NAME` and `Diff NAME`
    /// columns [default: BytesAllocated].
    #[arg(long, value_name = "NAME", requires = "csv", conflicts_with_all = ["base_col", "diff_col"], value_parser = parse_name)]
    metric: Option<String>,
    /// The CSV's base bytes column, for a CSV that SuperPMI did not write.
    #[arg(long, value_name = "NAME", requires_all = ["csv", "diff_col"], value_parser = parse_name)]
    base_col: Option<String>,
    /// The CSV's diff bytes column.
    #[arg(long, value_name = "NAME", requires_all = ["csv", "base_col"], value_parser = parse_name)]
    diff_col: Option<String>,
    /// Accept compiles that failed on one side only (SuperPMI's `Error` result; by default
    /// they make the check INCOMPLETE).
    #[arg(long)]
    allow_failing_compiles: bool,
    /// Accept contexts seen more than once on a side (by default they make the check
    /// INCOMPLETE): the k-th record of a context is compared with the k-th of the other
    /// side, and extra records on one side are left out, never counted as missing (a CSV's
    /// row holds both sides: every row is compared).
    #[arg(long)]
    allow_duplicates: bool,
}

/// A percentage threshold, or off.
#[derive(Copy, Clone, Debug, PartialEq)]
struct Limit(Option<f64>);

fn parse_limit(s: &str) -> Result<Limit, String> {
    if s.eq_ignore_ascii_case("off") {
        return Ok(Limit(None));
    }
    parse_percent(s)
        .map(|v| Limit(Some(v)))
        .map_err(|e| format!("{e}, or `off`"))
}

/// A name of a metric or column: not empty (`--metric ''` would read the columns `Base ` and
/// `Diff `).
fn parse_name(s: &str) -> Result<String, String> {
    match s.trim() {
        "" => Err(format!("{s:?}: expected a name, not an empty one")),
        _ => Ok(s.to_string()),
    }
}

/// A threshold of growth: a percentage of at least 0, `25` or `25%`, without a sign (`-0`
/// would be shown as `-0%`).
fn parse_percent(s: &str) -> Result<f64, String> {
    let number = s.strip_suffix('%').unwrap_or(s).trim();
    match number.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 && !number.starts_with(['-', '+']) => Ok(v),
        _ => Err(format!(
            "{s:?}: expected a percentage of at least 0, as 25 or 25%"
        )),
    }
}

/// A share of a whole: a percentage from 0 to 100, `1` or `1%`.
fn parse_share(s: &str) -> Result<f64, String> {
    match parse_percent(s) {
        Ok(v) if v <= 100.0 => Ok(v),
        _ => Err(format!(
            "{s:?}: expected a share from 0 to 100%, as 1 or 1%"
        )),
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum Format {
    Csv,
    Jsonl,
    Text,
}

#[derive(Args, Debug)]
struct GenArgs {
    /// Seed: the same seed gives the same workload.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Number of methods.
    #[arg(long, default_value_t = 1000)]
    methods: u64,
    /// Write an allocation trace here (for `replay`).
    #[arg(long, required_unless_present = "log", conflicts_with = "log")]
    trace: Option<PathBuf>,
    /// Write a stats log here directly, from the model without events (fast, for scale tests).
    #[arg(long)]
    log: Option<PathBuf>,
    /// Change one kind's traffic by a percentage, e.g. `LSRA=25` or `ASTNode=-10` (repeatable).
    #[arg(long, value_parser = parse_scale)]
    scale: Vec<(String, f64)>,
}

fn parse_scale(s: &str) -> Result<(String, f64), String> {
    let (kind, pct) = s
        .split_once('=')
        .ok_or_else(|| format!("expected KIND=PERCENT, got {s:?}"))?;
    let pct = pct
        .trim_end_matches('%')
        .parse::<f64>()
        .map_err(|_| format!("{pct:?} is not a percentage"))?;
    Ok((kind.to_string(), pct))
}

/// Runs the command line; returns the process exit code.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            // A path in the message may hold a newline or a terminal escape: shown visibly.
            eprintln!("error: {}", crate::report::visible(&e.to_string()));
            ExitCode::from(2)
        }
    }
}

fn warn_all(warnings: &[String]) {
    for w in warnings {
        eprintln!("warning: {}", crate::report::visible(w));
    }
}

/// Writes `text` to standard output. A reader that has gone (`jitarena stats log | head`) ends
/// the output quietly: what it did not read is not an error, and the exit code stays what the
/// command decided (memdiff's verdict included).
fn write_out(text: &str) -> Result<(), Error> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(jitarena::format::io_error(
            Path::new("<standard output>"),
            "write",
            &e,
        )),
        _ => Ok(()),
    }
}

/// Standard output for a stream of rows, remembering whether its reader has gone, so that
/// `dump` stops reading its inputs then and ends quietly.
struct RowsOut<W: Write> {
    inner: W,
    reader_gone: bool,
}

impl<W: Write> Write for RowsOut<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let r = self.inner.write(buf);
        self.note(r)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let r = self.inner.flush();
        self.note(r)
    }
}

impl<W: Write> RowsOut<W> {
    fn note<T>(&mut self, r: std::io::Result<T>) -> std::io::Result<T> {
        if let Err(e) = &r {
            self.reader_gone |= e.kind() == std::io::ErrorKind::BrokenPipe;
        }
        r
    }
}

fn run(cli: Cli) -> Result<u8, Error> {
    match cli.command {
        Command::Stats { logs, json } => {
            let s = crate::stats::collect(&logs)?;
            warn_all(&s.warnings);
            write_out(&if json {
                stats::render_json(&s)
            } else {
                stats::render_text(&s)
            })?;
        }
        Command::Dump {
            files,
            format,
            output,
        } => {
            let fmt = match format {
                Format::Csv => DumpFormat::Csv,
                Format::Jsonl => DumpFormat::Jsonl,
                Format::Text => DumpFormat::Text,
            };
            let warnings = dump(&files, fmt, output.as_deref())?;
            warn_all(&warnings);
        }
        Command::Merge { output, logs } => {
            check_not_input(&output, &logs)?;
            let files = crate::inputs::expand_inputs(&logs)?;
            let progress = crate::progress::Progress::new(true, "merge");
            let (n, warnings) = logtools::merge(&files, &output, &progress)?;
            warn_all(&warnings);
            eprintln!(
                "merged {} methods from {} logs into {}",
                thousands(n),
                files.len(),
                output.display()
            );
        }
        Command::Gen(args) => gen(args)?,
        Command::Memdiff(args) => return memdiff(*args),
        Command::Summarize { platform, md } => return summarize(&platform, md.as_deref()),
        Command::Sites(args) => {
            let options = crate::sites::SitesOptions {
                base_module: args.base_module,
                diff_module: args.diff_module,
                skip_files: args.skip_file,
                skip_functions: args.skip_function,
                line_tolerance: args.line_tolerance,
                top: args.top,
                top_methods: args.top_methods,
            };
            let base = crate::inputs::expand_inputs(&[args.base])?;
            let diff = crate::inputs::expand_inputs(&[args.diff])?;
            let d = crate::sites::diff_sites(&base, &diff, &options)?;
            warn_all(&d.warnings);
            write_out(&if args.json {
                crate::sites::render::render_json(&d)
            } else if args.markdown {
                crate::sites::render::render_markdown(&d)
            } else {
                crate::sites::render::render_text(&d)
            })?;
        }
        Command::Demo { methods, out, seed } => return demo(methods, &out, seed),
        Command::Replay {
            traces,
            output,
            page_size,
            limit,
            no_counters,
            kinds_by_phase,
        } => {
            let options = ReplayOptions {
                page_size,
                limit_bytes: limit,
                counters: !no_counters,
                kinds_by_phase,
                progress: true,
            };
            let s = harness::replay(&traces, output.as_deref(), &options)?;
            warn_all(&s.warnings);
            let into = output.map_or(String::new(), |o| format!(" into {}", o.display()));
            eprintln!(
                "replayed {} methods ({} allocations, {} failed){into}",
                thousands(s.methods),
                thousands(s.allocations),
                thousands(s.failed),
            );
        }
    }
    Ok(0)
}

/// `dump`: to standard output, or through a temporary file renamed to `output` when complete.
fn dump(files: &[PathBuf], fmt: DumpFormat, output: Option<&Path>) -> Result<Vec<String>, Error> {
    let Some(path) = output else {
        let name = Path::new("<standard output>");
        let files = crate::inputs::expand_inputs(files)?;
        let mut out = RowsOut {
            inner: std::io::BufWriter::new(std::io::stdout().lock()),
            reader_gone: false,
        };
        let done = logtools::dump(&files, fmt, &mut out, name).and_then(|warnings| {
            out.flush()
                .map_err(|e| jitarena::format::io_error(name, "write", &e))?;
            Ok(warnings)
        });
        return match done {
            Err(_) if out.reader_gone => Ok(Vec::new()),
            done => done,
        };
    };
    check_not_input(path, files)?;
    let files = crate::inputs::expand_inputs(files)?;
    check_not_input(path, &files)?;
    let file = OutputFile::create(path)?;
    let mut out = std::io::BufWriter::new(file.file());
    let warnings = logtools::dump(&files, fmt, &mut out, path)?;
    out.into_inner()
        .map_err(|e| jitarena::format::io_error(path, "write", e.error()))?;
    file.commit()?;
    Ok(warnings)
}

fn gen(args: GenArgs) -> Result<(), Error> {
    let generator = Generator::new(GenOptions {
        seed: args.seed,
        methods: args.methods,
        scale: args.scale,
    })
    .map_err(|e| Error::new(jitarena::ErrorCode::Config, e))?;
    let (path, allocations) = match (&args.trace, &args.log) {
        (Some(path), _) => (path, gen_trace(&generator, path)?),
        (None, Some(path)) => (path, gen_log(&generator, path)?),
        (None, None) => {
            return Err(Error::new(
                jitarena::ErrorCode::Config,
                "gen needs --trace FILE or --log FILE",
            ))
        }
    };
    eprintln!(
        "generated {} methods ({} allocations) into {}",
        thousands(generator.methods()),
        thousands(allocations),
        path.display()
    );
    Ok(())
}

/// Writes the generator's methods as a binary trace; returns the number of allocations.
pub fn gen_trace(generator: &Generator, path: &Path) -> Result<u64, Error> {
    let io = |e: std::io::Error| jitarena::format::io_error(path, "write", &e);
    let file =
        std::fs::File::create(path).map_err(|e| jitarena::format::io_error(path, "create", &e))?;
    let mut w = TraceWriter::new(std::io::BufWriter::new(file)).map_err(io)?;
    let mut events = Vec::new();
    let mut allocations = 0;
    for i in 0..generator.methods() {
        let info = generator.method_events(i, &mut events);
        allocations += events
            .iter()
            .filter(|e| e.op == jitarena::sys::JITARENA_EVENT_ALLOC)
            .count() as u64;
        w.write(
            generator.schema(),
            info.name.as_deref(),
            info.context,
            info.tier.as_deref(),
            &events,
        )
        .map_err(io)?;
    }
    w.finish().map_err(io)?;
    Ok(allocations)
}

/// Writes the generator's methods as a stats log straight from the model.
pub fn gen_log(generator: &Generator, path: &Path) -> Result<u64, Error> {
    let io = |e: std::io::Error| jitarena::format::io_error(path, "write", &e);
    let file =
        std::fs::File::create(path).map_err(|e| jitarena::format::io_error(path, "create", &e))?;
    let mut w = LogWriter::new(std::io::BufWriter::new(file)).map_err(io)?;
    let mut counts = MethodCounts::default();
    let mut allocations = 0;
    for i in 0..generator.methods() {
        let info = generator.method_counts(i, &mut counts);
        allocations += counts.total_count();
        w.write(
            generator.schema(),
            info.name.as_deref(),
            info.context,
            info.tier.as_deref(),
            &counts,
        )
        .map_err(io)?;
    }
    w.finish().map_err(io)?;
    Ok(allocations)
}

fn usage(message: impl Into<String>) -> Error {
    Error::new(jitarena::ErrorCode::Config, message.into())
}

/// `jitarena memdiff`: the options checked, the inputs compared, the reports written; the
/// exit code of the verdict.
fn memdiff(a: MemdiffArgs) -> Result<u8, Error> {
    let options = diff_options(&a);
    let rules = CoverageRules {
        max_missed: a.max_missed,
        allow_truncated: a.allow_truncated,
        allow_failing_compiles: a.allow_failing_compiles,
        allow_duplicates: a.allow_duplicates,
    };
    check_one_mode(&a)?;
    // A report written over an input would destroy it, or inside an input directory would be
    // read back as a shard by the next run.
    let inputs = memdiff_inputs(&a);
    for report in [&a.md, &a.md_long, &a.json, &a.html].into_iter().flatten() {
        check_not_input(report, &inputs)?;
    }
    let mut result = if !a.csv.is_empty() {
        csv_report(&a, &options, &rules)?
    } else {
        logs_report(&a, &options, &rules)?
    };
    result.check_ignored_kinds(&options.ignore_kinds)?;
    warn_all(&result.warnings());
    write_reports(&result, &a)?;
    if !a.quiet {
        write_out(&report::summary::render_text(&result))?;
    }
    Ok(result.outcome.status.exit_code())
}

/// memdiff's options for comparing a collection: the kinds to ignore, how many methods to
/// list, the thresholds and the progress bar.
fn diff_options(a: &MemdiffArgs) -> DiffOptions {
    DiffOptions {
        // The .NET JIT's spelling, `CMK_DebugOnly`, names the kind `DebugOnly` its logs hold.
        ignore_kinds: a
            .ignore_kinds
            .iter()
            .map(|k| diff::without_cmk(k).to_string())
            .collect(),
        top: a.top,
        min_method_bytes: a.min_method_bytes,
        min_delta_bytes: a.min_delta_bytes,
        thresholds: Thresholds {
            fail_above: a.fail_above,
            kind_fail_above: a.kind_fail_above.0,
            kind_min_bytes: a.kind_min_bytes,
            method_fail_above: a.method_fail_above.and_then(|l| l.0),
            method_min_bytes: a.method_min_bytes,
            tier_min_bytes: a.tier_min_bytes,
            tier_min_share: a.tier_min_share,
        },
        progress: crate::progress::Progress::new(!a.quiet, "memdiff"),
    }
}

/// Fails unless exactly one way of naming memdiff's inputs was used.
fn check_one_mode(a: &MemdiffArgs) -> Result<(), Error> {
    let modes = [
        !a.paths.is_empty(),
        !a.base.is_empty() || !a.diff.is_empty(),
        a.base_root.is_some(),
        !a.collection.is_empty(),
        !a.csv.is_empty(),
    ];
    if modes.iter().filter(|m| **m).count() != 1 {
        return Err(usage(
            "memdiff takes one of: BASE DIFF; --base PATH... --diff PATH...; --base-root DIR --diff-root DIR; --collection NAME BASE DIFF...; --csv FILE (see --help)",
        ));
    }
    if let Some(k) = a
        .ignore_kinds
        .iter()
        .find(|k| diff::without_cmk(k).is_empty())
    {
        return Err(usage(format!(
            "--ignore-kind {k:?} names no kind: give a kind's name (LSRA or CMK_LSRA)"
        )));
    }
    Ok(())
}

/// Every input path memdiff was given, however named (logs, directories, roots, CSV files,
/// the paths of `--collection`).
fn memdiff_inputs(a: &MemdiffArgs) -> Vec<PathBuf> {
    a.paths
        .iter()
        .chain(&a.base)
        .chain(&a.diff)
        .chain(&a.base_root)
        .chain(&a.diff_root)
        .chain(&a.csv)
        .cloned()
        .chain(
            a.collection
                .chunks(3)
                .flat_map(|c| c[1..].iter().map(PathBuf::from)),
        )
        .collect()
}

/// memdiff over stats logs: the collections under two roots, those named by `--collection`,
/// or one collection of BASE DIFF (or `--base`/`--diff`), which the report leaves unnamed.
fn logs_report(
    a: &MemdiffArgs,
    options: &DiffOptions,
    rules: &CoverageRules,
) -> Result<Report, Error> {
    let mut unnamed = false;
    let (collections, one_sided) = if let (Some(b), Some(d)) = (&a.base_root, &a.diff_root) {
        collections_from_roots(b, d)?
    } else if !a.collection.is_empty() {
        (named_collections(&a.collection)?, Vec::new())
    } else {
        unnamed = true;
        (vec![pair_collection(a)?], Vec::new())
    };
    let report = diff::diff_collections(&collections, one_sided, options, rules)?;
    Ok(if unnamed { report.unnamed() } else { report })
}

/// The collections of `--collection NAME BASE DIFF`, given in threes; a name must be
/// given, and only once.
fn named_collections(triples: &[String]) -> Result<Vec<Collection>, Error> {
    let mut list: Vec<Collection> = Vec::new();
    for c in triples.chunks(3) {
        if c[0].is_empty() {
            return Err(usage("--collection needs a name: \"\" shows as nothing"));
        }
        if list.iter().any(|l| l.name == c[0]) {
            return Err(usage(format!("--collection {:?} is named twice", c[0])));
        }
        list.push(Collection {
            name: c[0].clone(),
            base: vec![PathBuf::from(&c[1])],
            diff: vec![PathBuf::from(&c[2])],
        });
    }
    Ok(list)
}

/// The one collection of BASE DIFF, or of `--base PATH...` and `--diff PATH...`, named
/// after its paths.
fn pair_collection(a: &MemdiffArgs) -> Result<Collection, Error> {
    let (base, diff_side) = match (a.paths.len(), a.base.is_empty(), a.diff.is_empty()) {
        (2, _, _) => (vec![a.paths[0].clone()], vec![a.paths[1].clone()]),
        (0, false, false) => (a.base.clone(), a.diff.clone()),
        _ => {
            return Err(usage(
                "memdiff takes BASE DIFF, or --base PATH... and --diff PATH... (see --help)",
            ))
        }
    };
    let name = pair_name(&base, &diff_side);
    Ok(Collection {
        name,
        base,
        diff: diff_side,
    })
}

/// `jitarena summarize`: one summary over the platforms' memdiff reports.
fn summarize(platforms: &[String], md: Option<&Path>) -> Result<u8, Error> {
    let mut read: Vec<(String, report::platforms::PlatformReport)> = Vec::new();
    // Each report's bytes, hashed: the same report given for two platforms is said.
    let mut seen: Vec<(u64, &str, &str)> = Vec::new();
    for pair in platforms.chunks(2) {
        let (name, path) = (&pair[0], Path::new(&pair[1]));
        if name.is_empty() {
            return Err(usage("--platform needs a name: \"\" shows as nothing"));
        }
        if read.iter().any(|(n, _)| n == name) {
            return Err(usage(format!("--platform {name:?} is named twice")));
        }
        if let Some(md) = md {
            check_not_input(md, &[path.to_path_buf()])?;
        }
        read.push((name.clone(), report::platforms::read_report(path)?));
        if let Ok(bytes) = std::fs::read(path) {
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            bytes.hash(&mut h);
            let hash = h.finish();
            if let Some((_, other, other_path)) = seen.iter().find(|(x, ..)| *x == hash) {
                warn_all(&[format!(
                    "--platform {name:?} ({}) gives the same report as --platform {other:?} ({other_path}): one platform's report given twice?",
                    pair[1]
                )]);
            }
            seen.push((hash, name, &pair[1]));
        }
    }
    let text = report::platforms::render_platforms_markdown(&read);
    match md {
        Some(path) => write_file(path, &text)?,
        None => write_out(&text)?,
    }
    Ok(report::platforms::worst_exit(&read))
}

/// memdiff over CSV files, each one collection.
fn csv_report(
    a: &MemdiffArgs,
    options: &DiffOptions,
    rules: &CoverageRules,
) -> Result<Report, Error> {
    let columns = match (&a.base_col, &a.diff_col) {
        (Some(base), Some(diff)) => diff::CsvColumns {
            base: base.clone(),
            diff: diff.clone(),
        },
        _ => diff::CsvColumns::metric(a.metric.as_deref().unwrap_or(diff::DEFAULT_METRIC)),
    };
    let mut diffs: Vec<(String, diff::MemDiff)> = Vec::new();
    for (i, csv) in a.csv.iter().enumerate() {
        let name = diff::collection_name(csv);
        let earlier = a.csv[..i].iter().find(|c| diff::collection_name(c) == name);
        if let Some(other) = earlier {
            return Err(usage(format!(
                "--csv {} and --csv {} hold one collection, {name:?}: give each collection once",
                other.display(),
                csv.display()
            )));
        }
        diffs.push((name, diff::diff_csv(csv, &columns, options)?));
    }
    let report = Report::new(diffs, Vec::new(), options, rules);
    report.check_sums()?;
    Ok(if a.csv.len() == 1 {
        report.unnamed()
    } else {
        report
    })
}

fn write_file(path: &Path, text: &str) -> Result<(), Error> {
    std::fs::write(path, text).map_err(|e| jitarena::format::io_error(path, "write", &e))
}

fn write_reports(result: &Report, a: &MemdiffArgs) -> Result<(), Error> {
    if let Some(p) = &a.md {
        write_file(p, &report::summary::render_markdown(result))?;
    }
    if let Some(p) = &a.md_long {
        write_file(p, &report::summary::render_long_markdown(result))?;
    }
    if let Some(p) = &a.json {
        write_file(p, &report::diff::render_report_json(result))?;
    }
    if let Some(p) = &a.html {
        write_file(p, &report::html::render_report_html(result))?;
    }
    Ok(())
}

/// The kind the demo inflates, and by how much: a large kind (about a fifth of the bytes), so
/// that the total moves by only a few percent while the kind gate catches it.
const DEMO_REGRESSION: (&str, f64) = ("ValueNumber", 30.0);

/// The demo's collections (named after the .NET JIT's replay collections) and the one that
/// carries the injected regression.
const DEMO_COLLECTIONS: [&str; 3] = ["benchmarks.run", "libraries.pmi", "realworld.run"];
const DEMO_REGRESSED: usize = 1;

fn demo(methods: u64, out: &Path, seed: u64) -> Result<u8, Error> {
    let (kind, pct) = DEMO_REGRESSION;
    let say = |s: String| eprintln!("demo: {s}");
    let per = (methods / DEMO_COLLECTIONS.len() as u64).max(1);
    for (c, name) in DEMO_COLLECTIONS.iter().enumerate() {
        for side in ["base", "diff"] {
            let scale = if side == "diff" && c == DEMO_REGRESSED {
                vec![(kind.to_string(), pct)]
            } else {
                vec![]
            };
            let generator = Generator::new(GenOptions {
                seed: seed.wrapping_add(c as u64),
                methods: per,
                scale,
            })
            .map_err(usage)?;
            let dir = out.join(side).join(name);
            std::fs::create_dir_all(&dir)
                .map_err(|e| jitarena::format::io_error(&dir, "create", &e))?;
            let trace = out.join(format!("{side}-{name}.jat"));
            let allocations = gen_trace(&generator, &trace)?;
            let log = dir.join("shard0.jas");
            let s = harness::replay(
                std::slice::from_ref(&trace),
                Some(&log),
                &ReplayOptions {
                    progress: true,
                    kinds_by_phase: true,
                    ..ReplayOptions::default()
                },
            )?;
            say(format!(
                "{side} {name}: generated {} methods ({} allocations), replayed through the arena into {}",
                thousands(s.methods),
                thousands(allocations),
                log.display()
            ));
        }
    }
    say(format!(
        "the diff JIT carries an injected regression in {}: {kind} {pct:+}%",
        DEMO_COLLECTIONS[DEMO_REGRESSED]
    ));
    let options = DiffOptions::default();
    let (collections, one_sided) = collections_from_roots(&out.join("base"), &out.join("diff"))?;
    let result =
        diff::diff_collections(&collections, one_sided, &options, &CoverageRules::default())?;
    let paths = [
        out.join("memdiff.md"),
        out.join("memdiff-long.md"),
        out.join("memdiff.json"),
        out.join("memdiff.html"),
    ];
    write_file(&paths[0], &report::summary::render_markdown(&result))?;
    write_file(&paths[1], &report::summary::render_long_markdown(&result))?;
    write_file(&paths[2], &report::diff::render_report_json(&result))?;
    write_file(&paths[3], &report::html::render_report_html(&result))?;
    write_out(&report::summary::render_text(&result))?;
    let regressed: Vec<&str> = result
        .collections
        .iter()
        .filter(|c| c.diff.verdict.regression)
        .map(|c| c.name.as_str())
        .collect();
    let found = regressed == [DEMO_COLLECTIONS[DEMO_REGRESSED]]
        && result.collections[DEMO_REGRESSED]
            .diff
            .kinds
            .first()
            .is_some_and(|k| k.name == kind);
    eprintln!();
    for p in &paths {
        say(format!("wrote {}", p.display()));
    }
    if found {
        say(format!(
            "memdiff found the injected regression in {} ({kind}) and would fail the check (exit code 1 in CI)",
            DEMO_COLLECTIONS[DEMO_REGRESSED]
        ));
        Ok(0)
    } else {
        say(format!(
            "memdiff did not attribute the injected regression to {kind} in {}",
            DEMO_COLLECTIONS[DEMO_REGRESSED]
        ));
        Ok(1)
    }
}
