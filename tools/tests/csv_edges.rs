//! memdiff's CSV bridge (`memdiff --csv`) on the edges a hand-written reader trips on: a UTF-8
//! byte order mark, quoted fields, newlines inside quotes, numbers at and past 2^64, NaN,
//! negative numbers, empty cells, and errors that name the file and line.

mod common;

use std::path::{Path, PathBuf};

use common::tmp;
use jitarena_tools::diff::{self, CsvColumns, DiffOptions, MemDiff};

fn write(name: &str, text: &[u8]) -> PathBuf {
    let path = tmp(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn diff_of(path: &Path) -> Result<MemDiff, jitarena::Error> {
    diff::diff_csv(path, &CsvColumns::metric("bytes"), &DiffOptions::default())
}

fn error_of(name: &str, text: &str) -> String {
    let path = write(name, text.as_bytes());
    match diff_of(&path) {
        Ok(_) => panic!("{name}: read without an error"),
        Err(e) => e.to_string(),
    }
}

/// Overall base and diff bytes, and (matched, only in base, only in diff).
fn totals(d: &MemDiff) -> ((u64, u64), (u64, u64, u64)) {
    let g = &d.groups[0];
    assert_eq!(g.name, "Overall");
    let c = &d.coverage;
    (
        (g.base.bytes, g.diff.bytes),
        (c.matched, c.only_base, c.only_diff),
    )
}

#[test]
fn a_byte_order_mark_is_not_part_of_the_first_column() {
    // The first column is one of the byte columns: with the BOM kept, it would not be found.
    let path = write(
        "bom.csv",
        b"\xEF\xBB\xBFBase bytes,Diff bytes,Method\r\n100,150,A\r\n200,200,B\r\n",
    );
    let d = diff_of(&path).unwrap();
    assert_eq!(totals(&d), ((300, 350), (2, 0, 0)));
}

#[test]
fn every_byte_order_mark_in_front_is_skipped_and_none_hides_a_column() {
    // A file re-encoded twice starts with two marks: the second hid the Context column's name,
    // and with it the duplicate.
    let path = write(
        "bom2.csv",
        b"\xEF\xBB\xBF\xEF\xBB\xBFContext,Base bytes,Diff bytes\n1,10,10\n1,10,10\n2,5,6\n",
    );
    let d = diff_of(&path).unwrap();
    assert_eq!(totals(&d), ((25, 26), (3, 0, 0)));
    assert_eq!(d.coverage.duplicates_base, 1);
    // The first column a byte column; a mark before a later header name too.
    let path = write(
        "bom3.csv",
        "\u{FEFF}\u{FEFF}\u{FEFF}Base bytes,\u{FEFF}Diff bytes\n1,2\n".as_bytes(),
    );
    assert_eq!(totals(&diff_of(&path).unwrap()), ((1, 2), (1, 0, 0)));
    // Lines are still counted from the file's first.
    let err = error_of(
        "bom-line.csv",
        "\u{FEFF}\u{FEFF}Base bytes,Diff bytes\n1,2\nx,2\n",
    );
    assert!(
        err.contains("bom-line.csv:3: the Base bytes column holds"),
        "{err}"
    );
}

#[test]
fn quoted_fields_hold_commas_quotes_and_newlines() {
    let text = "Method,Base bytes,Diff bytes\n\
                \"Ns.C`1[System.Int32,System.String]:M()\",\"1,000\",2000\n\
                \"a \"\"quoted\"\" name\",10,10\n\
                \"two\nlines\",5,7\n\
                \n\
                last,1,1\n";
    let path = write("quoted.csv", text.as_bytes());
    let d = diff_of(&path).unwrap();
    assert_eq!(totals(&d), ((1016, 2018), (4, 0, 0)));
    let growth: Vec<_> = d.top_growth.iter().map(|m| m.name.clone()).collect();
    assert_eq!(
        growth.first().cloned().flatten().as_deref(),
        Some("Ns.C`1[System.Int32,System.String]:M()")
    );
    assert!(
        growth.contains(&Some("two\nlines".to_string())),
        "{growth:?}"
    );
    // A row after a quoted newline is counted by its own line: the error names line 5.
    let err = error_of(
        "quoted-bad.csv",
        "Method,Base bytes,Diff bytes\n\"two\nlines\",5,7\nok,1,1\nbad,x,1\n",
    );
    assert!(err.contains("quoted-bad.csv:5:"), "{err}");
}

#[test]
fn numbers_up_to_2_to_the_64_are_read_exactly() {
    // 1e19 is below 2^64 (about 1.8e19) and exact as a float: 10,000,000,000,000,000,000.
    let path = write(
        "big.csv",
        b"Base bytes,Diff bytes\n1e19,18446744073709551615\n",
    );
    let d = diff_of(&path).unwrap();
    assert_eq!(
        totals(&d),
        ((10_000_000_000_000_000_000, u64::MAX), (1, 0, 0))
    );
    // A decimal is rounded.
    let path = write("decimal.csv", b"Base bytes,Diff bytes\n10.4,10.6\n");
    assert_eq!(totals(&diff_of(&path).unwrap()), ((10, 11), (1, 0, 0)));
}

#[test]
fn numbers_that_do_not_fit_are_errors_naming_file_and_line() {
    for (name, value) in [
        ("e300", "1e300"),
        ("two-to-64", "18446744073709551616"),
        ("e20", "2e19"),
        ("nan", "NaN"),
        ("inf", "inf"),
        ("negative", "-5"),
        ("negative-zero", "-0"),
        ("negative-fraction", "-0.4"),
        ("word", "lots"),
    ] {
        let file = format!("{name}.csv");
        let err = error_of(
            &file,
            &format!("Method,Base bytes,Diff bytes\nA,1,1\n\nB,{value},2\n"),
        );
        assert!(
            err.contains(&format!(
                "{file}:4: the Base bytes column holds \"{value}\""
            )),
            "{name}: {err}"
        );
        assert!(err.contains("not a number of bytes"), "{name}: {err}");
    }
}

#[test]
fn an_empty_cell_puts_the_method_on_one_side() {
    let text = "Method,Base bytes,Diff bytes\nboth,10,20\nbase-only,30,\ndiff-only,,40\n\"\",,\n";
    let path = write("one-sided.csv", text.as_bytes());
    let d = diff_of(&path).unwrap();
    assert_eq!(totals(&d), ((10, 20), (1, 1, 1)));
    assert_eq!(
        (d.coverage.only_base_bytes, d.coverage.only_diff_bytes),
        (30, 40)
    );
    assert_eq!(
        d.coverage.missing_in_diff[0].name.as_deref(),
        Some("base-only")
    );
    assert_eq!(
        d.coverage.missing_in_base[0].name.as_deref(),
        Some("diff-only")
    );
}

#[test]
fn an_unreadable_file_is_an_error_naming_file_and_line() {
    let err = error_of("empty.csv", "");
    assert!(err.contains("empty.csv:1: the file is empty"), "{err}");
    let err = error_of("no-column.csv", "Method,Base bytes\nA,1\n");
    assert!(
        err.contains("no-column.csv:1: no column \"Diff bytes\""),
        "{err}"
    );
    let path = write(
        "not-utf8.csv",
        b"Method,Base bytes,Diff bytes\nA,1,1\n\xFF\xFE,2,2\n",
    );
    let err = diff_of(&path).unwrap_err().to_string();
    assert!(err.contains("not-utf8.csv:3: not UTF-8"), "{err}");
    // The sums are checked too, on the line that overflows them.
    let err = error_of(
        "sum.csv",
        "Base bytes,Diff bytes\n18446744073709551615,1\n1,1\n",
    );
    assert!(
        err.contains("sum.csv:3: the matched methods' base bytes add up"),
        "{err}"
    );
}

/// `dump --format csv` writes names with commas, quotes and newlines (and kinds and phases
/// named with commas and quotes) as cells a CSV reader gives back exactly.
#[test]
fn dump_csv_reads_back_exactly() {
    use jitarena::log::LogWriter;
    use jitarena::Shared;
    use jitarena::{MethodCounts, Schema};
    let schema = Shared::new(
        Schema::new(
            vec!["plain".into(), "a,\"kind\"".into()],
            vec!["p,\"1\"".into()],
        )
        .unwrap(),
    );
    let names = ["Ns.C`1[A,B]:M()", "say \"hi\"", "two\r\nlines", ""];
    let log = tmp("hostile.jas");
    let mut w = LogWriter::new(std::fs::File::create(&log).unwrap()).unwrap();
    for (i, name) in names.iter().enumerate() {
        let counts = MethodCounts {
            kinds: vec![(0, 10 + i as u64, 1), (1, 100 + i as u64, 2)],
            phases: vec![(0, 110 + 2 * i as u64)],
            ..MethodCounts::default()
        };
        let name = Some(*name).filter(|n| !n.is_empty());
        w.write(&schema, name, i as i64, Some("Tier,0"), &counts)
            .unwrap();
    }
    w.finish().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_jitarena"))
        .args(["dump", "--format", "csv", log.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut reader = csv::Reader::from_reader(out.stdout.as_slice());
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(header[2], "name");
    assert_eq!(
        header[10..],
        [
            "bytes:plain",
            "bytes:a,\"kind\"",
            "bytes:(invalid kind)",
            "phase:p,\"1\""
        ]
    );
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), names.len());
    for (i, (row, name)) in rows.iter().zip(names).enumerate() {
        let i = i as u64;
        assert_eq!(&row[0], i.to_string());
        assert_eq!(&row[1], "Tier,0");
        assert_eq!(&row[2], name);
        assert_eq!(&row[3], (110 + 2 * i).to_string());
        assert_eq!(&row[10], (10 + i).to_string());
        assert_eq!(&row[11], (100 + i).to_string());
        assert_eq!(&row[13], (110 + 2 * i).to_string());
    }
}

/// The two columns must be two: one named twice, or in another case, would be compared with
/// itself (a diff of 0.00% whatever the JITs did).
#[test]
fn base_and_diff_columns_that_are_one_column_are_an_error() {
    let path = write(
        "same-col.csv",
        b"Method,Bytes,Other
A,1,2
",
    );
    for (base, diff) in [("Bytes", "Bytes"), ("bytes", "BYTES")] {
        let columns = diff::CsvColumns {
            base: base.into(),
            diff: diff.into(),
        };
        let err = diff::diff_csv(&path, &columns, &DiffOptions::default())
            .expect_err("one column")
            .to_string();
        assert!(
            err.contains("same-col.csv:1") && err.contains("are the same column (\"Bytes\""),
            "{err}"
        );
    }
}

#[test]
fn a_quote_never_closed_is_an_error_not_a_cell_swallowing_the_rest() {
    // The name is the last column: with the quote left open, rows 3 and 4 (each growing a
    // thousandfold) would be read as part of row 2's name, and the file would pass.
    let err = error_of(
        "unclosed.csv",
        "Base bytes,Diff bytes,Method\n100,100,\"A unbalanced\n1000,1000000,B\n1000,1000000,C\n",
    );
    assert!(
        err.contains("unclosed.csv:2: a quote opens a cell here and is never closed"),
        "{err}"
    );
}

#[test]
fn a_row_longer_than_the_header_is_an_error_unless_its_extra_cells_are_empty() {
    // An unquoted thousands separator: `90,000` would be read as 90 and `000` left over.
    let err = error_of(
        "long-row.csv",
        "Method,Base bytes,Diff bytes\nA,100,100\nB,100,90,000\n",
    );
    assert!(
        err.contains("long-row.csv:3: the row has 4 cells, the header 3"),
        "{err}"
    );
    // A trailing comma is no cell.
    let path = write(
        "trailing-comma.csv",
        b"Method,Base bytes,Diff bytes\nA,100,150,\nB,7,7,,\n",
    );
    assert_eq!(totals(&diff_of(&path).unwrap()), ((107, 157), (2, 0, 0)));
}

#[test]
fn a_column_the_reading_uses_given_twice_is_an_error() {
    for (name, header) in [
        ("twice-base.csv", "Method,Base bytes,Diff bytes,Base bytes"),
        ("twice-folded.csv", "base_bytes,Diff bytes,BaseBytes"),
        ("twice-context.csv", "Context,Base bytes,Diff bytes,context"),
    ] {
        let err = error_of(name, &format!("{header}\n1,1,1,1\n"));
        assert!(
            err.contains(&format!("{name}:1: two columns named")),
            "{err}"
        );
    }
    // Columns the reading does not use may repeat.
    let path = write(
        "twice-unused.csv",
        b"Note,Base bytes,Diff bytes,Note\nx,1,2,y\n",
    );
    assert_eq!(totals(&diff_of(&path).unwrap()), ((1, 2), (1, 0, 0)));
}

#[test]
fn byte_cells_are_read_exactly_or_refused() {
    let value = |name: &str, cell: &str| {
        let path = write(
            name,
            format!("Base bytes,Diff bytes\n{cell},0\n").as_bytes(),
        );
        diff_of(&path).map(|d| totals(&d).0 .0)
    };
    for (cell, bytes) in [
        ("\"1,234,567\"", 1_234_567),
        ("1_000", 1_000),
        ("\"999\"", 999),
        ("12.5", 13),
        ("12.4999999999999999999", 12),
        ("0.4999999999999999999", 0),
        (".5", 1),
        ("9007199254740993.0", 9_007_199_254_740_993),
        ("18446744073709551615.0", u64::MAX),
        ("\"18,446,744,073,709,551,615\"", u64::MAX),
        ("2e2", 200),
        ("2E+2", 200),
        (".5e1", 5),
    ] {
        assert_eq!(value("exact.csv", cell).ok(), Some(bytes), "{cell}");
    }
    for cell in [
        "\"1,0,0\"",
        "\"5,\"",
        "\",5\"",
        "_5",
        "\"1234,5\"",
        "\"1,234_567\"",
        "18446744073709551615.5",
        "+5",
        "+2e2",
        "-2e2",
        ".",
        "1.2.3",
        "1.x",
    ] {
        let err = value("refused.csv", cell)
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("refused.csv:2: the Base bytes column holds"),
            "{cell}: {err}"
        );
    }
}

#[test]
fn a_context_that_is_not_a_context_number_is_an_error() {
    for (name, context) in [
        ("ctx-word.csv", "abc"),
        ("ctx-negative.csv", "-1"),
        ("ctx-empty.csv", ""),
        ("ctx-plus.csv", "+1"),
        ("ctx-huge.csv", "9223372036854775808"),
    ] {
        let err = error_of(
            name,
            &format!("Context,Base bytes,Diff bytes\n1,5,5\n{context},1,1\n"),
        );
        assert!(
            err.contains(&format!("{name}:3: the context column holds")),
            "{err}"
        );
    }
}

#[test]
fn a_context_in_three_rows_is_one_duplicate_of_three_records_and_blank_rows_are_no_context() {
    let path = write(
        "three-rows.csv",
        b"Context,Base bytes,Diff bytes\n1,10,10\n1,10,10\n1,10,10\n2,5,\n3,,\n",
    );
    let d = diff_of(&path).unwrap();
    let c = &d.coverage;
    assert_eq!((c.duplicates_base, c.duplicates_diff), (2, 2));
    assert_eq!(c.duplicate_examples.len(), 1, "{:?}", c.duplicate_examples);
    assert_eq!(c.duplicate_examples[0].records, 3);
    // Context 3 has neither cell: it is no method, so the file's contexts are 4 rows, not 5.
    assert_eq!(c.csv_rows, 4);
    assert_eq!((c.only_base, c.only_diff), (1, 0));
}

#[test]
fn stray_quotes_that_pair_up_are_an_error_naming_the_line_not_rows_read_as_one_cell() {
    // Two stray quotes, each opening a cell: with the file's quote count even, rows 3 and 4
    // (one of them a ninefold regression) were read as part of row 3's name, and the file
    // passed. A cell holding a line break and a whole row's commas is rows read as one cell.
    let err = error_of(
        "paired-names.csv",
        "Context,Method full name,Base result,Diff result,MinOpts,Base bytes,Diff bytes\n\
         1,A,Success,Success,False,100,100\n\
         2,\"B stray,Success,Success,False,100,100\n\
         3,C,Success,Success,False,100,900\n\
         4,\"D stray,Success,Success,False,100,100\n\
         5,E,Success,Success,False,100,100\n",
    );
    assert!(
        err.contains("paired-names.csv:3: a quoted cell of column 2 (\"Method full name\"")
            && err.contains("runs over 3 lines"),
        "{err}"
    );
    // In a column that holds no line break (here the tier), any line break is one.
    let err = error_of(
        "paired-tier.csv",
        "Method,Tier name,Base bytes,Diff bytes\nA,\"Tier0\nB\",100,100\n",
    );
    assert!(
        err.contains("paired-tier.csv:2: a quoted cell of column 2 (\"Tier name\", a column that holds no line break) runs over 2 lines"),
        "{err}"
    );
    // A name may still hold a line break (a quoted name from a log's hostile method).
    let path = write(
        "name-newline.csv",
        b"Method,Base bytes,Diff bytes\n\"two\r\nlines\",5,7\n",
    );
    assert_eq!(totals(&diff_of(&path).unwrap()), ((5, 7), (1, 0, 0)));
}

#[test]
fn a_single_stray_quote_inside_a_cell_is_read_as_the_csv_crate_reads_it() {
    // A quote inside an unquoted cell is a character: the file's quote count is odd, yet
    // nothing is swallowed.
    let path = write(
        "one-stray.csv",
        b"Method,Base bytes,Diff bytes\nA 5\" disk,100,150\n\"q\"\"x\"y,1,1\nB,10,10\n",
    );
    let d = diff_of(&path).unwrap();
    assert_eq!(totals(&d), ((111, 161), (3, 0, 0)));
    assert_eq!(d.top_growth[0].name.as_deref(), Some("A 5\" disk"));
}

#[test]
fn a_file_whose_last_line_has_no_line_ending_is_cut_short_and_its_last_row_unread() {
    // The replay was killed inside the last row's number (10000 written as 10): read as
    // whole, it turned a total that grew ninefold into one that fell.
    let text = "Method,Base bytes,Diff bytes\nA,100,900\nB,100,10";
    let path = write("cut.csv", text.as_bytes());
    let d = diff_of(&path).unwrap();
    assert_eq!(totals(&d), ((100, 900), (1, 0, 0)));
    assert_eq!(d.coverage.truncated, [path.display().to_string()]);
    let failures = diff::judge_coverage(&d, &diff::CoverageRules::default());
    let cut: Vec<_> = failures
        .iter()
        .filter(|f| f.rule == diff::Rule::Truncated)
        .collect();
    assert_eq!(cut.len(), 1, "{failures:?}");
    assert!(
        cut[0]
            .sentence
            .contains("cut.csv: a CSV file cut short (its last line has no line ending"),
        "{}",
        cut[0].sentence
    );
    // Cut inside a quoted name of its last row: no quote left open, the same cut file.
    let path = write(
        "cut-quoted.csv",
        b"Method,Base bytes,Diff bytes\r\nA,100,100\r\n\"Ns.C:M(int,",
    );
    let d = diff_of(&path).unwrap();
    assert_eq!(totals(&d), ((100, 100), (1, 0, 0)));
    assert_eq!(d.coverage.truncated.len(), 1);
    // A file that ends in a line ending (LF, CRLF or CR) is whole.
    for (name, end) in [("lf.csv", "\n"), ("crlf.csv", "\r\n"), ("cr.csv", "\r")] {
        let path = write(
            name,
            format!("Base bytes,Diff bytes{end}1,2{end}").as_bytes(),
        );
        let d = diff_of(&path).unwrap();
        assert_eq!(totals(&d), ((1, 2), (1, 0, 0)), "{name}");
        assert!(d.coverage.truncated.is_empty(), "{name}");
    }
}

#[test]
fn lines_end_in_lf_crlf_or_a_lone_cr_and_are_counted_alike() {
    for (name, end) in [
        ("lines-lf.csv", "\n"),
        ("lines-crlf.csv", "\r\n"),
        ("lines-cr.csv", "\r"),
    ] {
        let text = [
            "Method,Base bytes,Diff bytes",
            "A,1,1",
            "",
            "\"B\",2,2",
            "C,x,3",
            "",
        ]
        .join(end);
        let err = error_of(name, &text);
        assert!(
            err.contains(&format!("{name}:5: the Base bytes column holds \"x\"")),
            "{err}"
        );
    }
}

#[test]
fn a_missing_column_of_a_wide_header_is_named_in_a_short_message() {
    // A header of a million columns made a message of 10.9 MB listing every one.
    let header: Vec<String> = (0..1_000_000).map(|i| format!("column{i}")).collect();
    let path = write("wide.csv", format!("{}\n", header.join(",")).as_bytes());
    let err = diff_of(&path).unwrap_err().to_string();
    assert!(err.len() < 2_000, "{} bytes", err.len());
    assert!(
        err.contains("no column \"Base bytes\" (columns: column0, column1,")
            && err.contains("column19, and 999,980 more)"),
        "{err}"
    );
}
