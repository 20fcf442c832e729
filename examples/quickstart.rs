//! The Rust quick start from the README: an arena with the .NET JIT's kind names, a few
//! phases, a method's worth of allocations, and its counters.
//!
//! Run: `cargo run --example quickstart`

use jitarena::{Arena, Config, Kind, Phase};

fn main() -> Result<(), jitarena::Error> {
    let kinds = ["ASTNode", "BasicBlock", "LSRA", "ValueNumber"];
    let config = Config::new(&kinds).phases(&["Importer", "Morph", "LSRA"]);
    let arena = Arena::new(&config)?;
    let (ast, block, lsra) = (Kind(0), Kind(1), Kind(2));

    arena.set_phase(Phase(0));
    for i in 0..1000u64 {
        arena.alloc(ast, [i; 6])?; // a 48-byte tree node
    }
    arena.alloc_slice_copy(block, &[0u64; 20])?;
    arena.set_phase(Phase(2));
    arena.alloc_bytes(100_000, lsra)?; // a large array: a page of its own

    let snap = arena.snapshot();
    let c = &snap.counters;
    println!("{:<14} {:>10} {:>8}", "kind", "bytes", "count");
    for (i, name) in snap.schema.kinds.iter().enumerate() {
        println!("{name:<14} {:>10} {:>8}", c.kind_bytes[i], c.kind_count[i]);
    }
    for (i, name) in snap.schema.phases.iter().enumerate() {
        println!("phase {name:<8} {:>10} bytes", c.phase_bytes[i]);
    }
    println!(
        "requested {} B, used {} B, reserved {} B in {} pages, largest {} B",
        c.total_bytes(),
        c.used_bytes,
        c.reserved_bytes,
        c.page_count,
        c.largest_alloc
    );
    Ok(())
}
