#!/usr/bin/env bash
# Fuzzes jitarena's readers with cargo-fuzz (libFuzzer, AddressSanitizer, debug assertions):
# the stats-log reader, the binary and text trace readers, the CSV bridge, memdiff of two logs,
# merge (copying against decoding) and stats (two threads against one). Seeds are made by `jitarena gen` and `replay` (and a slice of a real trace) into
# fuzz/corpus/TARGET, which libFuzzer then grows.
#
#   scripts/fuzz.sh [SECONDS]     # each target for SECONDS (default 60); exit 1 on any crash,
#                                 # timeout (-timeout=10) or out-of-memory (-rss_limit_mb=2048)
#
# Needs the nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz --locked`). The fuzz
# builds go to fuzz/target; findings to fuzz/artifacts/TARGET; logs to fuzz/logs/TARGET.log.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
[[ $secs =~ ^[0-9]+$ ]] || { echo "fuzz.sh: SECONDS must be a whole number, not '$secs'" >&2; exit 2; }
cargo +nightly fuzz --version >/dev/null 2>&1 || {
  echo "fuzz.sh: needs cargo-fuzz on the nightly toolchain (cargo install cargo-fuzz --locked)" >&2
  exit 2
}
targets=(log_reader trace_binary trace_text csv_reader memdiff merge_copy stats_threads)

trap 'echo "fuzz.sh: line $LINENO failed" >&2' ERR

# Seed corpora, from the command line tool built as usual (CARGO_TARGET_DIR is honoured here).
# Its progress lines go to the log; errors stop the script.
jitarena() { cargo run --quiet --bin jitarena -- "$@" 2>>"$seeds/seeds.log"; }
seeds=fuzz/target/seeds
rm -rf "$seeds"
mkdir -p "$seeds"
for t in "${targets[@]}"; do mkdir -p "fuzz/corpus/$t"; done
jitarena gen --seed 1 --methods 4 --log "$seeds/base.jas" >/dev/null
jitarena gen --seed 1 --methods 4 --log "$seeds/diff.jas" --scale LSRA=30 >/dev/null
jitarena gen --seed 2 --methods 3 --trace "$seeds/a.jat" >/dev/null
jitarena gen --seed 3 --methods 1 --trace "$seeds/b.jat" >/dev/null
gzip -dc tools/tests/data/traces/png-cl0.104-speed.txt.gz | sed -n '1,200p' >"$seeds/real.txt"
jitarena replay "$seeds/a.jat" -o "$seeds/a.jas" >/dev/null
jitarena replay "$seeds/real.txt" -o "$seeds/real.jas" >/dev/null
jitarena dump "$seeds/b.jat" --format text | sed -n '1,200p' >"$seeds/b.txt"
cp "$seeds/base.jas" "$seeds/a.jas" "$seeds/real.jas" fuzz/corpus/log_reader/
# A JIT's traces of methods longer than its buffer, written in parts (docs/formats.md, "Methods
# in parts"): two threads' methods interleaved, and a method whose process ended before its end
# (its parts never closed). tests/c/trace_parts.c records them through the library's archive.
cargo build --quiet -p jitarena --lib
"${CC:-cc}" -O1 -Iinclude tests/c/trace_parts.c "${CARGO_TARGET_DIR:-target}/debug/libjitarena.a" \
  -lpthread -ldl -lm -o "$seeds/trace_parts"
JITARENA_TRACE="$seeds/two.jat" "$seeds/trace_parts" two 34000 >/dev/null
JITARENA_TRACE="$seeds/die.jat" "$seeds/trace_parts" die 34000 >/dev/null
cp "$seeds/a.jat" "$seeds/b.jat" "$seeds/two.jat" "$seeds/die.jat" fuzz/corpus/trace_binary/
cp "$seeds/b.txt" "$seeds/real.txt" fuzz/corpus/trace_text/
cat "$seeds/base.jas" "$seeds/diff.jas" >fuzz/corpus/memdiff/gen-base-diff
cat "$seeds/a.jas" "$seeds/real.jas" >fuzz/corpus/memdiff/replayed-a-real
cp fuzz/corpus/memdiff/gen-base-diff fuzz/corpus/memdiff/replayed-a-real fuzz/corpus/merge_copy/
cp fuzz/corpus/memdiff/gen-base-diff fuzz/corpus/memdiff/replayed-a-real fuzz/corpus/stats_threads/
# A per-method CSV as the .NET replay tool writes it, from the dumps of the two generated logs
# (same methods, in the same order): context, name, tier, base bytes, diff bytes.
row='s/^([^,]*),([^,]*),("[^"]*"|[^,]*),([0-9]+),.*/'
jitarena dump "$seeds/base.jas" --format csv | tail -n +2 | sed -E "${row}\1,\3,\2,\4/" >"$seeds/b.rows"
jitarena dump "$seeds/diff.jas" --format csv | tail -n +2 | sed -E "${row}\4/" >"$seeds/d.rows"
{
  echo "Context,Method full name,Tier,Base bytes,Diff bytes"
  paste -d, "$seeds/b.rows" "$seeds/d.rows"
  echo '999,"Only:InBase()",FullOpts,"1,234",'
  echo '1000,Only:InDiff(),MinOpts,,5_678'
} >fuzz/corpus/csv_reader/gen-base-diff.csv

# Fuzz builds go to fuzz/target, whatever CARGO_TARGET_DIR says.
unset CARGO_TARGET_DIR
cargo +nightly fuzz build
mkdir -p fuzz/logs
# glibc's thread-exit bookkeeping is not a leak (see the file).
export LSAN_OPTIONS="suppressions=$PWD/fuzz/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
# One target per core at a time (each libFuzzer process is single-threaded; their input files
# are named by process id): every target still gets SECONDS of its own.
jobs=$(nproc 2>/dev/null || echo 1)
fuzz_one() { # target: runs it, prints its line, leaves fuzz/logs/TARGET.status
  local t=$1
  mkdir -p "fuzz/artifacts/$t"
  # memdiff returns the first side's error at once and lets the other side's reader thread
  # stop on its own (so that an input that blocks cannot hold the error back): allocations of
  # that thread are still live when libFuzzer checks for leaks after the input. AddressSanitizer
  # still checks every access; the other targets keep the leak check.
  local leaks=1
  [ "$t" = memdiff ] && leaks=0
  if cargo +nightly fuzz run "$t" "fuzz/corpus/$t" -- -max_total_time="$secs" \
      -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 -detect_leaks="$leaks" \
      -artifact_prefix="fuzz/artifacts/$t/" >"fuzz/logs/$t.log" 2>&1; then
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "fuzz/logs/$t.log" | tail -n 1)
    echo "fuzz.sh: $t: ${execs:-?} executions, no crash, timeout or out-of-memory"
    echo ok >"fuzz/logs/$t.status"
  else
    echo "fuzz.sh: $t FAILED (fuzz/logs/$t.log; inputs in fuzz/artifacts/$t/):" >&2
    grep -E "ERROR|panicked|timeout|out-of-memory|Test unit written" "fuzz/logs/$t.log" | head -n 20 >&2 || true
    echo failed >"fuzz/logs/$t.status"
  fi
}
running=0
for t in "${targets[@]}"; do
  rm -f "fuzz/logs/$t.status"
  echo "fuzz.sh: $t for ${secs}s"
  fuzz_one "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then
    wait -n || true
    running=$((running - 1))
  fi
done
wait || true
failed=()
for t in "${targets[@]}"; do
  [ "$(cat "fuzz/logs/$t.status" 2>/dev/null)" = ok ] || failed+=("$t")
done
# The targets' input files (fuzz/src/lib.rs).
rm -f /dev/shm/jitarena-fuzz-* 2>/dev/null || true
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz.sh: failed: ${failed[*]}" >&2
  exit 1
fi
echo "fuzz.sh: ${#targets[@]} targets, ${secs}s each: no crash, timeout or out-of-memory"
