//! memdiff over a SuperPMI details CSV keeps a row's figures and where it starts, not its name
//! and tier (those of the rows listed are read again): its peak resident size is the file plus
//! under 100 bytes a row, as a log's record costs, not the 245 bytes a row it took holding
//! every row's name.

mod common;

use std::io::{BufWriter, Write};

use common::{run_measured, s, tmp};

/// Rows of the file.
const ROWS: u64 = 200_000;
/// What a run may hold beyond the file and `PER_ROW` bytes a row: the program and its buffers.
const SLACK: u64 = 16 << 20;
/// Bytes a row may cost beyond its text.
const PER_ROW: u64 = 100;

#[test]
fn a_details_csv_costs_its_size_and_under_100_bytes_a_row() {
    let path = tmp("big_details.csv");
    let mut out = BufWriter::new(std::fs::File::create(&path).unwrap());
    out.write_all(b"Context,Method full name,Tier name,Base result,Diff result,MinOpts,Base BytesAllocated,Diff BytesAllocated\n").unwrap();
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for i in 0..ROWS {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let base = 1_000 + x % 200_000;
        let diff = base + x % 101 - 50;
        let (tier, min_opts) = if i % 3 == 0 {
            ("Tier0", "True")
        } else {
            ("Tier1", "False")
        };
        writeln!(
            out,
            "{i},\"System.Collections.Generic.Dictionary`2[System.__Canon,int]:TryInsert(System.__Canon,int,ubyte):bool:{i}\",{tier},Success,Success,{min_opts},{base},{diff}"
        )
        .unwrap();
    }
    out.flush().unwrap();
    drop(out);
    let size = std::fs::metadata(&path).unwrap().len();
    let mut report = String::new();
    let (code, err, peak) = run_measured(&["memdiff", "--csv", s(&path)], |l| report.push_str(l));
    eprintln!("memdiff --csv: {ROWS} rows, {size} bytes: peak resident {peak} bytes");
    assert_eq!(code, 0, "{err}");
    // The methods listed are named, read again from the file.
    assert!(
        report.contains("TryInsert(System.__Canon,int,ubyte):bool:"),
        "{report}"
    );
    let bound = size + PER_ROW * ROWS + SLACK;
    assert!(
        peak < bound,
        "memdiff of a {size}-byte CSV of {ROWS} rows peaked at {peak} bytes (bound {bound})"
    );
}
