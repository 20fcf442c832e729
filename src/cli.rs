//! The `jitarena` command line. Exit codes: 0 success; 1 a regression beyond the thresholds
//! (`memdiff`); 2 bad usage or unreadable input, with a message naming the file and the problem.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::error::Error;
use crate::gen::{GenOptions, Generator};
use crate::harness::{self, ReplayOptions};
use crate::log::{LogWriter, MethodCounts};
use crate::logtools::{self, DumpFormat};
use crate::report::{stats, thousands};
use crate::trace::TraceWriter;

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
    /// Replay traces (binary or text) through the arena's C fast path into a stats log.
    Replay {
        /// Traces to replay, in order.
        #[arg(required = true)]
        traces: Vec<PathBuf>,
        /// The stats log to write.
        #[arg(short, long)]
        output: PathBuf,
        /// Page size of the replayed arena, in bytes.
        #[arg(long, default_value_t = 65536)]
        page_size: usize,
        /// Memory limit per method, in bytes (0: none).
        #[arg(long, default_value_t = 0)]
        limit: u64,
        /// Replay with the uncounted inline path (JITARENA_NO_COUNTERS).
        #[arg(long)]
        no_counters: bool,
    },
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
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn warn_all(warnings: &[String]) {
    for w in warnings {
        eprintln!("warning: {w}");
    }
}

fn write_out(text: &str) -> Result<(), Error> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .map_err(|e| crate::format::io_error(Path::new("<standard output>"), "write", &e))
}

fn run(cli: Cli) -> Result<u8, Error> {
    match cli.command {
        Command::Stats { logs, json } => {
            let s = stats::collect(&logs)?;
            warn_all(&s.warnings);
            write_out(&if json {
                stats::render_json(&s)
            } else {
                stats::render_text(&s)
            })?;
        }
        Command::Dump { files, format } => {
            let fmt = match format {
                Format::Csv => DumpFormat::Csv,
                Format::Jsonl => DumpFormat::Jsonl,
                Format::Text => DumpFormat::Text,
            };
            let files = stats::expand_inputs(&files)?;
            let mut out = std::io::BufWriter::new(std::io::stdout().lock());
            let warnings = logtools::dump(&files, fmt, &mut out)?;
            out.flush().map_err(|e| {
                crate::format::io_error(Path::new("<standard output>"), "write", &e)
            })?;
            warn_all(&warnings);
        }
        Command::Merge { output, logs } => {
            let files = stats::expand_inputs(&logs)?;
            let (n, warnings) = logtools::merge(&files, &output)?;
            warn_all(&warnings);
            eprintln!(
                "merged {} methods from {} logs into {}",
                thousands(n),
                files.len(),
                output.display()
            );
        }
        Command::Gen(args) => gen(args)?,
        Command::Replay {
            traces,
            output,
            page_size,
            limit,
            no_counters,
        } => {
            let options = ReplayOptions {
                page_size,
                limit_bytes: limit,
                counters: !no_counters,
                progress: true,
            };
            let s = harness::replay(&traces, &output, &options)?;
            warn_all(&s.warnings);
            eprintln!(
                "replayed {} methods ({} allocations, {} failed) into {}",
                thousands(s.methods),
                thousands(s.allocations),
                thousands(s.failed),
                output.display()
            );
        }
    }
    Ok(0)
}

fn gen(args: GenArgs) -> Result<(), Error> {
    let generator = Generator::new(GenOptions {
        seed: args.seed,
        methods: args.methods,
        scale: args.scale,
    })
    .map_err(|e| Error::new(crate::ErrorCode::Config, e))?;
    let (path, allocations) = match (&args.trace, &args.log) {
        (Some(path), _) => (path, gen_trace(&generator, path)?),
        (None, Some(path)) => (path, gen_log(&generator, path)?),
        (None, None) => {
            return Err(Error::new(
                crate::ErrorCode::Config,
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
    let io = |e: std::io::Error| crate::format::io_error(path, "write", &e);
    let file =
        std::fs::File::create(path).map_err(|e| crate::format::io_error(path, "create", &e))?;
    let mut w = TraceWriter::new(std::io::BufWriter::new(file)).map_err(io)?;
    let mut events = Vec::new();
    let mut allocations = 0;
    for i in 0..generator.methods() {
        let info = generator.method_events(i, &mut events);
        allocations += events
            .iter()
            .filter(|e| e.op == crate::sys::JITARENA_EVENT_ALLOC)
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
    let io = |e: std::io::Error| crate::format::io_error(path, "write", &e);
    let file =
        std::fs::File::create(path).map_err(|e| crate::format::io_error(path, "create", &e))?;
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
