#!/usr/bin/env bash
# Counts instructions with valgrind's callgrind (exact and repeatable on a noisy machine):
# instructions per allocation of the header's inline path with counters and without
# (JITARENA_NO_COUNTERS), on one million JIT-like allocations (benches/c/alloc_loop.c).
#
#   scripts/callgrind.sh            # prints a table; exit 1 if counting costs more than 3
#                                   # instructions per allocation at fixed-kind call sites
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "callgrind.sh: valgrind is not installed" >&2; exit 2; }
cargo build --release -p jitarena --lib --quiet
out=target/callgrind
mkdir -p "$out"
cc=${CC:-cc}
for variant in counted uncounted; do
  flags=""
  [ "$variant" = uncounted ] && flags="-DJITARENA_NO_COUNTERS"
  $cc -O2 -std=c99 -Wall -Iinclude $flags benches/c/alloc_loop.c target/release/libjitarena.a \
      -lpthread -ldl -lm -lrt -o "$out/alloc_loop_$variant"
done

# Instructions executed inside one function (inclusive of what it calls), read from callgrind.
count() { # variant mode function
  local file="$out/cg.$1.$2"
  valgrind --tool=callgrind --callgrind-out-file="$file" --toggle-collect="$3" \
      "$out/alloc_loop_$1" "$2" >/dev/null 2>&1
  callgrind_annotate "$file" 2>/dev/null | awk '/PROGRAM TOTALS/ && !n { gsub(",", "", $1); print $1; n = 1 }'
}

printf '%-34s %14s %14s %10s\n' "loop (1,000,000 allocations)" "counted" "uncounted" "difference"
status=0
for mode in sites table; do
  c=$(count counted $mode run_$mode)
  u=$(count uncounted $mode run_$mode)
  line=$(awk -v c="$c" -v u="$u" 'BEGIN { printf "%14.2f %14.2f %10.2f", c/1e6, u/1e6, (c-u)/1e6 }')
  label="fixed-kind call sites (JIT-like)"
  [ "$mode" = table ] && label="kind from a table (run-time kind)"
  printf '%-34s %s\n' "$label" "$line"
  if [ "$mode" = sites ]; then
    awk -v c="$c" -v u="$u" 'BEGIN { exit !((c-u)/1e6 > 3) }' && status=1
  fi
done
echo "(instructions per allocation, inline path plus its share of the slow path and resets)"

# jitarena_method_done: instructions per call with no log and with a log open (callgrind does
# not count the kernel's work in write(2); the program prints wall time per call for that).
$cc -O2 -std=c99 -Wall -Iinclude benches/c/method_done.c target/release/libjitarena.a \
    -lpthread -ldl -lm -lrt -o "$out/method_done"
echo
printf '%-34s %14s %14s\n' "jitarena_method_done (20,000 methods)" "instructions" "wall (ns)"
for mode in nolog log; do
  file="$out/cg.method_done.$mode"
  valgrind --tool=callgrind --callgrind-out-file="$file" --toggle-collect=jitarena_method_done \
      "$out/method_done" $mode "$out/method_done.jas" >/dev/null 2>&1
  ins=$(callgrind_annotate "$file" 2>/dev/null | awk '/PROGRAM TOTALS/ && !n { gsub(",", "", $1); print $1; n = 1 }')
  wall=$("$out/method_done" $mode "$out/method_done.jas" | awk '{ print $2 }')
  printf '%-34s %14.0f %14s\n' "$mode" "$(awk -v i="$ins" 'BEGIN { print i / 20000 }')" "$wall"
done
ls -l "$out/method_done.jas" | awk '{ printf "log: %d bytes for 20,000 records, %.1f bytes per record\n", $5, ($5 - 12) / 20000 }'

# A whole replay of a generated workload (300 JIT-like methods) by `jitarena replay`: counters
# and a log record per method, against no counters and no log. "whole" counts the process;
# "arena" counts what a JIT would run per method: the inline path (the C driver), the counters
# gathered, the reset (Replayer::run) and the record (encoding and writing: LogWriter::write).
cargo build --release --quiet --bin jitarena
jitarena=target/release/jitarena
"$jitarena" gen --seed 1 --methods 300 --trace "$out/replay.jat" 2>/dev/null
total() { callgrind_annotate "$1" 2>/dev/null | awk '/PROGRAM TOTALS/ && !n { gsub(",", "", $1); print $1; n = 1 }'; }
arena_part() { # inclusive instructions of the functions a JIT would run
  callgrind_annotate --inclusive=yes "$1" 2>/dev/null | awk '
    /Replayer::run \[/ || /LogWriter<.*>::write \[/ {
      gsub(",", "", $1); sum += $1 }
    END { print sum + 0 }'
}
valgrind --tool=callgrind --callgrind-out-file="$out/cg.replay.counted" \
    "$jitarena" replay "$out/replay.jat" -o "$out/replay.jas" >/dev/null 2>&1
valgrind --tool=callgrind --callgrind-out-file="$out/cg.replay.uncounted" \
    "$jitarena" replay "$out/replay.jat" --no-counters >/dev/null 2>&1
echo
printf '%-44s %16s %16s %9s\n' "replay of 300 generated methods" "counted + log" "uncounted" "overhead"
for part in whole arena; do
  if [ $part = whole ]; then
    c=$(total "$out/cg.replay.counted"); u=$(total "$out/cg.replay.uncounted")
    label="whole process (trace decoding included)"
  else
    c=$(arena_part "$out/cg.replay.counted"); u=$(arena_part "$out/cg.replay.uncounted")
    label="inline path + counters + record"
  fi
  printf '%-44s %16s %16s %8s%%\n' "$label" "$c" "$u" "$(awk -v c="$c" -v u="$u" 'BEGIN { printf "%.2f", (c - u) * 100 / u }')"
done
exit $status
