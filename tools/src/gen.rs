//! `jitarena gen`: a synthetic but realistic JIT workload, shaped after the .NET JIT's public
//! allocation figures (`jit-alloc-profile.md`): its 55 kinds, heavy-tailed method sizes (most
//! methods need a few kilobytes, a few need megabytes), about 2,700 allocations and 240 KB per
//! average method, small sizes dominating and a few large arrays. Deterministic for a seed.
//!
//! The model, and which parts of it are public figures and which are our assumptions:
//! - byte shares per kind: the profile's where it gives one (ASTNode 17.6%, ValueNumber 18.8%,
//!   LvaTable 4.7%, SSA 4.9%, BasicBlock 3.8%, ...); the other kinds (register allocation,
//!   code generation, ...) share the remaining third by our estimate;
//! - sizes per kind: node-like kinds draw from a few fixed sizes, table-like kinds from a range,
//!   and about one request in a thousand is an array of 2 KB to 105 KB (the profile's largest);
//! - tiers: 45% of methods are MinOpts, which skip the optimizer's kinds and are ten times
//!   smaller; allocation counts per method are log-normal.

use jitarena::counters::Schema;
use jitarena::log::{MethodCounts, MethodInfo};
use jitarena::sys::jitarena_event as Event;
use jitarena::trace::{alloc_event, phase_event};
use jitarena::Shared;

/// The .NET JIT's allocation kinds (`CompMemKind`), in the order of its newest public list.
pub const RYUJIT_KINDS: [&str; 55] = [
    "ABI",
    "ASTNode",
    "ArrayStack",
    "AssertionProp",
    "BasicBlock",
    "CSE",
    "CallArgs",
    "ClassLayout",
    "Codegen",
    "CopyProp",
    "CorTailCallInfo",
    "DebugInfo",
    "DebugOnly",
    "DepthFirstSearch",
    "DominatorMemory",
    "EarlyProp",
    "FieldSeqStore",
    "FixedBitVect",
    "FlowEdge",
    "GC",
    "Generic",
    "ImpStack",
    "Inlining",
    "InstDesc",
    "Liveness",
    "LSRA",
    "LSRA_Interval",
    "LSRA_RefPosition",
    "LocalAddressVisitor",
    "LoopClone",
    "LoopHoist",
    "LoopIVOpts",
    "LoopOpt",
    "LoopUnroll",
    "Loops",
    "LvaTable",
    "MemoryPhiArg",
    "MemorySsaMap",
    "ObjectAllocator",
    "Pgo",
    "Promotion",
    "RangeCheck",
    "Reachability",
    "SSA",
    "SiScope",
    "SideEffects",
    "TailMergeThrows",
    "TreeStatementList",
    "Unknown",
    "UnwindInfo",
    "ValueNumber",
    "VariableLiveRanges",
    "ZeroInit",
    "bitset",
    "hashBv",
];

/// The phases of the generated workload, in compilation order.
pub const PHASES: [&str; 10] = [
    "Importer",
    "Morph",
    "FlowGraph",
    "SSA",
    "ValueNumbering",
    "Optimizer",
    "Lowering",
    "LSRA",
    "Codegen",
    "Emit",
];

/// How a kind's request sizes are drawn.
#[derive(Clone, Copy)]
enum Sizes {
    /// One of these, equally likely.
    Choice(&'static [u32]),
    /// Uniform in `lo..=hi`.
    Range(u32, u32),
}

impl Sizes {
    fn mean(self) -> f64 {
        match self {
            Sizes::Choice(c) => c.iter().map(|&s| f64::from(s)).sum::<f64>() / c.len() as f64,
            Sizes::Range(lo, hi) => f64::from(lo + hi) / 2.0,
        }
    }
}

/// One kind of the model: its share of requested bytes (percent), its sizes, the phase it is
/// mostly allocated in, and whether MinOpts methods allocate it.
struct KindModel {
    name: &'static str,
    share: f64,
    sizes: Sizes,
    phase: usize,
    in_minopts: bool,
}

const NODES: &[u32] = &[40, 48, 56, 64, 64, 72, 80, 96, 104];

#[rustfmt::skip]
const MODEL: &[(&str, f64, Sizes, usize, bool)] = &[
    // Public shares (jit-alloc-profile.md).
    ("ValueNumber", 18.8, Sizes::Range(16, 240), 4, false),
    ("ASTNode", 17.6, Sizes::Choice(NODES), 0, true),
    ("SSA", 4.9, Sizes::Range(16, 96), 3, false),
    ("LvaTable", 4.7, Sizes::Range(64, 512), 0, true),
    ("BasicBlock", 3.8, Sizes::Choice(&[168, 176, 184]), 2, true),
    ("InstDesc", 3.6, Sizes::Choice(&[16, 24, 32, 40, 48]), 9, true),
    ("AssertionProp", 2.8, Sizes::Range(32, 640), 5, false),
    ("Generic", 2.4, Sizes::Range(8, 256), 1, true),
    ("CopyProp", 2.3, Sizes::Range(16, 128), 5, false),
    ("bitset", 1.5, Sizes::Range(8, 64), 3, true),
    ("Unknown", 1.0, Sizes::Range(8, 128), 1, true),
    ("CallArgs", 0.9, Sizes::Choice(&[48, 64, 80]), 1, true),
    ("FlowEdge", 0.8, Sizes::Choice(&[40, 48]), 2, true),
    ("RangeCheck", 0.5, Sizes::Range(16, 128), 5, false),
    ("hashBv", 0.3, Sizes::Range(16, 64), 5, false),
    ("FieldSeqStore", 0.3, Sizes::Choice(&[24, 32]), 4, false),
    ("ImpStack", 0.17, Sizes::Range(32, 256), 0, true),
    ("TreeStatementList", 0.1, Sizes::Choice(&[24, 32]), 0, true),
    ("LoopHoist", 0.1, Sizes::Range(16, 96), 5, false),
    // Our estimates for the rest of the bytes.
    ("LSRA_RefPosition", 7.0, Sizes::Choice(&[56, 64]), 7, true),
    ("LSRA", 6.0, Sizes::Range(16, 512), 7, true),
    ("LSRA_Interval", 4.0, Sizes::Choice(&[88, 96]), 7, true),
    ("Codegen", 2.0, Sizes::Range(16, 256), 8, true),
    ("Inlining", 2.0, Sizes::Range(32, 256), 0, false),
    ("Liveness", 2.0, Sizes::Range(16, 128), 6, true),
    ("CSE", 2.0, Sizes::Range(32, 160), 5, false),
    ("Loops", 1.5, Sizes::Range(32, 192), 2, false),
    ("GC", 1.0, Sizes::Range(16, 96), 8, true),
    ("DepthFirstSearch", 1.0, Sizes::Range(16, 128), 2, true),
    ("DominatorMemory", 1.0, Sizes::Range(16, 128), 3, false),
    ("ArrayStack", 0.5, Sizes::Range(32, 256), 1, true),
    ("EarlyProp", 0.5, Sizes::Range(16, 96), 5, false),
    ("Reachability", 0.5, Sizes::Range(8, 64), 2, false),
    ("LoopOpt", 0.5, Sizes::Range(32, 128), 5, false),
    ("Promotion", 0.5, Sizes::Range(32, 128), 1, false),
    ("VariableLiveRanges", 0.5, Sizes::Choice(&[24, 32]), 8, true),
    ("ObjectAllocator", 0.3, Sizes::Range(16, 96), 1, false),
    ("DebugInfo", 0.3, Sizes::Range(16, 96), 9, true),
    ("SideEffects", 0.3, Sizes::Range(16, 64), 5, false),
    ("LocalAddressVisitor", 0.3, Sizes::Range(16, 64), 1, true),
    ("UnwindInfo", 0.2, Sizes::Range(16, 64), 9, true),
    ("ClassLayout", 0.2, Sizes::Range(32, 96), 0, true),
    ("MemorySsaMap", 0.2, Sizes::Range(32, 128), 3, false),
    ("LoopClone", 0.2, Sizes::Range(32, 128), 5, false),
    ("LoopIVOpts", 0.2, Sizes::Range(32, 128), 5, false),
    ("FixedBitVect", 0.2, Sizes::Range(8, 64), 3, false),
    ("ABI", 0.2, Sizes::Choice(&[24, 32, 48]), 0, true),
    ("Pgo", 0.1, Sizes::Range(16, 128), 0, false),
    ("SiScope", 0.1, Sizes::Range(16, 48), 9, true),
    ("ZeroInit", 0.1, Sizes::Range(8, 32), 1, true),
    ("MemoryPhiArg", 0.1, Sizes::Choice(&[16, 24]), 3, false),
    ("LoopUnroll", 0.1, Sizes::Range(32, 96), 5, false),
    ("TailMergeThrows", 0.05, Sizes::Range(16, 64), 2, false),
    ("CorTailCallInfo", 0.05, Sizes::Range(16, 64), 0, false),
    ("DebugOnly", 0.05, Sizes::Range(16, 64), 1, true),
];

/// Kinds whose requests are sometimes large arrays.
const ARRAY_KINDS: [&str; 4] = ["ValueNumber", "LvaTable", "Generic", "Codegen"];

/// What to generate.
#[derive(Debug, Clone)]
pub struct GenOptions {
    /// The seed: the same seed gives the same workload.
    pub seed: u64,
    /// Number of methods.
    pub methods: u64,
    /// Per-kind traffic changes: `(kind name, percent)`, e.g. `("LSRA", 25.0)` is 25% more bytes.
    pub scale: Vec<(String, f64)>,
}

/// SplitMix64: small, fast, and the same on every platform.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x6A09_E667_F3BC_C909)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// A standard normal deviate (Box-Muller).
    fn normal(&mut self) -> f64 {
        let u = self.unit().max(1e-300);
        let v = self.unit();
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
}

/// The generator: the schema, the kind model and the cumulative weights to draw kinds.
pub struct Generator {
    schema: Shared<Schema>,
    kinds: Vec<KindModel>,
    /// Per tier (0: MinOpts, 1: FullOpts): cumulative draw weights over `kinds`.
    cumulative: [Vec<f64>; 2],
    /// Byte multiplier per kind (from `--scale`).
    scale: Vec<f64>,
    array_kinds: Vec<usize>,
    options: GenOptions,
}

impl Generator {
    /// A generator; fails if a `--scale` kind is unknown or its percent is below -100.
    pub fn new(options: GenOptions) -> Result<Generator, String> {
        let schema = Schema::new(
            RYUJIT_KINDS.iter().map(|k| k.to_string()).collect(),
            PHASES.iter().map(|p| p.to_string()).collect(),
        )
        .and_then(Schema::interned)
        .map_err(|e| e.message.into_owned())?;
        let index = |name: &str| RYUJIT_KINDS.iter().position(|k| *k == name);
        let mut kinds: Vec<KindModel> = Vec::new();
        for &(name, share, sizes, phase, in_minopts) in MODEL {
            debug_assert!(index(name).is_some(), "{name} is not a RyuJIT kind");
            kinds.push(KindModel {
                name,
                share,
                sizes,
                phase,
                in_minopts,
            });
        }
        // Kinds in schema order, so that kind ids are schema indexes.
        kinds.sort_by_key(|k| index(k.name));
        let cumulative = [false, true].map(|full| {
            let mut sum = 0.0;
            kinds
                .iter()
                .map(|k| {
                    // Draw weight = share of bytes / mean size = share of requests.
                    if full || k.in_minopts {
                        sum += k.share / k.sizes.mean();
                    }
                    sum
                })
                .collect()
        });
        let mut scale = vec![1.0; kinds.len()];
        for (name, pct) in &options.scale {
            let i = index(name).ok_or_else(|| format!("--scale names an unknown kind {name:?} (the kinds are the .NET JIT's CMK_ names, e.g. ASTNode, LSRA)"))?;
            if *pct <= -100.0 || !pct.is_finite() {
                return Err(format!(
                    "--scale {name}={pct}: the percent must be above -100"
                ));
            }
            scale[i] *= 1.0 + pct / 100.0;
        }
        let array_kinds = ARRAY_KINDS.iter().filter_map(|k| index(k)).collect();
        Ok(Generator {
            schema,
            kinds,
            cumulative,
            scale,
            array_kinds,
            options,
        })
    }

    /// The schema of the generated methods.
    pub fn schema(&self) -> &Shared<Schema> {
        &self.schema
    }

    /// Number of methods to generate.
    pub fn methods(&self) -> u64 {
        self.options.methods
    }

    /// The method's info and its random stream: the same for a given seed and index, whatever
    /// `--scale` says, so that a baseline and a diff workload match method for method.
    fn method_start(&self, index: u64) -> (MethodInfo, Rng, bool, u64) {
        let mut rng = Rng::new(
            self.options.seed.wrapping_mul(0x100_0000_01B3) ^ index.wrapping_mul(0x9E37_79B9),
        );
        let full = rng.unit() >= 0.45;
        // Log-normal request counts: MinOpts median 250, FullOpts median 2,600.
        let (median, sigma) = if full { (2600.0, 1.1) } else { (250.0, 0.9) };
        let count = (median * (sigma * rng.normal()).exp()).clamp(4.0, 400_000.0) as u64;
        let info = MethodInfo {
            name: Some(format!("Gen.Class{}:Method{index}(int,ref)", index % 997)),
            context: index as i64,
            tier: Some(if full { "FullOpts" } else { "MinOpts" }.to_string()),
        };
        (info, rng, full, count)
    }

    fn draw_kind(&self, rng: &mut Rng, full: bool) -> usize {
        let cumulative = &self.cumulative[usize::from(full)];
        let total = *cumulative.last().unwrap_or(&1.0);
        let x = rng.unit() * total;
        cumulative
            .partition_point(|&c| c <= x)
            .min(cumulative.len() - 1)
    }

    fn draw_size(&self, rng: &mut Rng, kind: usize) -> u64 {
        let base = if self.array_kinds.contains(&kind) && rng.below(2000) == 0 {
            // A large array: 2 KB to 105,720 bytes, heavy-tailed toward the small end.
            let u = rng.unit();
            2048.0 + (105_720.0 - 2048.0) * u * u * u
        } else {
            match self.kinds[kind].sizes {
                Sizes::Choice(c) => f64::from(c[rng.below(c.len() as u64) as usize]),
                Sizes::Range(lo, hi) => f64::from(lo) + rng.below(u64::from(hi - lo) + 1) as f64,
            }
        };
        (base * self.scale[kind]).round().max(1.0) as u64
    }

    /// Method `index`'s events: its requests grouped by phase, in phase order.
    pub fn method_events(&self, index: u64, events: &mut Vec<Event>) -> MethodInfo {
        let (info, mut rng, full, count) = self.method_start(index);
        let mut by_phase: Vec<Vec<Event>> = vec![Vec::new(); PHASES.len()];
        for _ in 0..count {
            let kind = self.draw_kind(&mut rng, full);
            let size = self.draw_size(&mut rng, kind);
            by_phase[self.kinds[kind].phase].push(alloc_event(kind as u32, size));
        }
        events.clear();
        for (phase, list) in by_phase.into_iter().enumerate() {
            if !list.is_empty() {
                events.push(phase_event(phase as u32));
                events.extend(list);
            }
        }
        info
    }

    /// Method `index`'s counters straight from the model, without events (for scale tests):
    /// per-kind request counts are drawn, bytes are their sizes' sum estimated from the kind's
    /// mean with noise, pages follow from a 64 KiB page model.
    pub fn method_counts(&self, index: u64, out: &mut MethodCounts) -> MethodInfo {
        let (info, mut rng, full, count) = self.method_start(index);
        let cumulative = &self.cumulative[usize::from(full)];
        let total = *cumulative.last().unwrap_or(&1.0);
        out.kinds.clear();
        out.phases.clear();
        let mut phase_bytes = [0u64; PHASES.len()];
        let (mut used, mut largest) = (0u64, 0u64);
        let mut previous = 0.0;
        for (kind, &c) in cumulative.iter().enumerate() {
            let p = (c - previous) / total;
            previous = c;
            if p == 0.0 {
                continue;
            }
            let mean = p * count as f64;
            let n = (mean + mean.sqrt() * rng.normal()).round().max(0.0) as u64;
            if n == 0 {
                continue;
            }
            let per = self.kinds[kind].sizes.mean() * self.scale[kind];
            let mut bytes = (per * n as f64 * (1.0 + 0.05 * rng.normal()).max(0.5)) as u64;
            largest = largest.max(per as u64);
            if self.array_kinds.contains(&kind) && rng.below(2000) < n.min(2000) {
                let array = (2048.0 + 103_672.0 * rng.unit().powi(3)) * self.scale[kind];
                bytes += array as u64;
                largest = largest.max(array as u64);
            }
            bytes = bytes.max(n);
            used += bytes + 4 * n;
            phase_bytes[self.kinds[kind].phase] += bytes;
            out.kinds.push((kind as u32, bytes, n));
        }
        for (phase, &bytes) in phase_bytes.iter().enumerate() {
            if bytes != 0 {
                out.phases.push((phase as u32, bytes));
            }
        }
        used = used.next_multiple_of(8);
        let pages = used.div_ceil(60 * 1024).max(1);
        out.used_bytes = used;
        out.reserved_bytes = pages * 64 * 1024;
        out.page_count = pages;
        out.largest_alloc = largest;
        out.limit_hit = false;
        info
    }
}
