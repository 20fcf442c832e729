#!/usr/bin/env bash
# Counts instructions with valgrind's callgrind (exact and repeatable on a noisy machine):
# instructions per allocation of the header's inline path with counters and without
# (JITARENA_NO_COUNTERS), on one million JIT-like allocations (benches/c/alloc_loop.c), in three
# forms: fixed-kind call sites, uint32 kinds from a table (jitarena_alloc clamps them), and
# allocator objects holding a kind slot loaded at run time (jitarena_alloc_slot); then the cost
# of kinds_by_phase, and of jitarena_method_done with and without a log (benches/c/method_done.c).
#
#   scripts/callgrind.sh    # prints tables; exit 1 if counting costs more than 3 instructions
#                           # per allocation at fixed-kind call sites or with run-time slots, or
#                           # jitarena_method_done with no log more than 300 per method
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "callgrind.sh: valgrind is not installed" >&2; exit 2; }
tgt=${CARGO_TARGET_DIR:-target}
cargo build --profile jit -p jitarena --lib --quiet
out=$tgt/callgrind
mkdir -p "$out"
cc=${CC:-cc}
lib=$tgt/jit/libjitarena.a # the archive a JIT links
for variant in counted uncounted; do
  flags=""
  [ "$variant" = uncounted ] && flags="-DJITARENA_NO_COUNTERS"
  $cc -O2 -std=c99 -Wall -Iinclude $flags benches/c/alloc_loop.c "$lib" \
      -lpthread -ldl -lm -lrt -o "$out/alloc_loop_$variant"
done

# Instructions executed under the functions named by --toggle-collect (inclusive), from a
# callgrind output file.
total() { callgrind_annotate "$1" 2>/dev/null | awk '/PROGRAM TOTALS/ && !n { gsub(",", "", $1); print $1; n = 1 }'; }
count() { # variant mode function [kbp]
  local file="$out/cg.$1.$2${4:+.$4}"
  valgrind --tool=callgrind --callgrind-out-file="$file" --toggle-collect="$3" \
      "$out/alloc_loop_$1" "$2" ${4:-} >/dev/null 2>&1
  total "$file"
}
over() { awk -v x="$1" -v max="$2" 'BEGIN { exit !(x > max) }'; }

printf '%-44s %10s %10s %10s\n' "loop (1,000,000 allocations)" "counted" "uncounted" "counting"
status=0
for mode in sites table slot; do
  c=$(count counted $mode run_$mode)
  u=$(count uncounted $mode run_$mode)
  diff=$(awk -v c="$c" -v u="$u" 'BEGIN { printf "%.2f", (c-u)/1e6 }')
  case $mode in
    sites) label="fixed-kind call sites (JIT-like)" ;;
    table) label="uint32 kind from a table (jitarena_alloc)" ;;
    slot) label="run-time slot (allocator object)" ;;
  esac
  printf '%-44s %10.2f %10.2f %10s\n' "$label" "$(awk -v c="$c" 'BEGIN { print c/1e6 }')" \
      "$(awk -v u="$u" 'BEGIN { print u/1e6 }')" "$diff"
  if [ "$mode" != table ] && over "$diff" 3.0; then
    echo "callgrind.sh: counting in mode $mode costs $diff instructions per allocation, over 3.0" >&2
    status=1
  fi
done
echo "(instructions per allocation, inline path plus its share of the slow path and resets)"

# kinds_by_phase: the same loop with the field on costs the same (the inline path never looks
# at it); the difference is the resets' share (clearing the table, per method).
echo
printf '%-44s %10s %10s\n' "loop with kinds_by_phase" "off" "on"
for mode in sites slot; do
  off=$(total "$out/cg.counted.$mode")
  on=$(count counted $mode run_$mode kbp)
  printf '%-44s %10.3f %10.3f\n' "$mode (instructions per allocation)" \
      "$(awk -v x="$off" 'BEGIN { print x/1e6 }')" "$(awk -v x="$on" 'BEGIN { print x/1e6 }')"
done

# jitarena_method_done: instructions per call with no log and with a log open (callgrind does
# not count the kernel's work in write(2); the program prints wall time per call for that),
# with kinds_by_phase off and on; and the phase marks' out-of-line part per jitarena_set_phase
# (jitarena_phase_mark_slow: none without kinds_by_phase, whose marks stay inline, 10
# instructions each as tests/whole_cost.rs measures them; every mark with it).
$cc -O2 -std=c99 -Wall -Iinclude benches/c/method_done.c "$lib" \
    -lpthread -ldl -lm -lrt -o "$out/method_done"
echo
printf '%-44s %14s %14s %14s\n' "20,000 methods (55 kinds, 10 phases)" "method_done" "mark, slow" "wall (ns)"
for mode in nolog log nolog-kbp log-kbp; do
  for fn in jitarena_method_done jitarena_phase_mark_slow; do
    file="$out/cg.method_done.$mode.$fn"
    valgrind --tool=callgrind --callgrind-out-file="$file" --toggle-collect=$fn \
        "$out/method_done" $mode "$out/method_done.jas" >/dev/null 2>&1
  done
  ins=$(awk -v i="$(total "$out/cg.method_done.$mode.jitarena_method_done")" 'BEGIN { printf "%.0f", i / 20000 }')
  phase=$(awk -v i="$(total "$out/cg.method_done.$mode.jitarena_phase_mark_slow")" 'BEGIN { printf "%.0f", i / 200000 }')
  wall=$("$out/method_done" $mode "$out/method_done.jas" | awk '{ print $2 }')
  printf '%-44s %14s %14s %14s\n' "$mode" "$ins" "$phase" "$wall"
  if [ "$mode" = nolog ] && over "$ins" 300; then
    echo "callgrind.sh: jitarena_method_done with no log costs $ins instructions, over 300" >&2
    status=1
  fi
done
ls -l "$out/method_done.jas" | awk '{ printf "log: %d bytes for 20,000 records, %.1f bytes per record\n", $5, ($5 - 12) / 20000 }'

# A whole replay of a generated workload (300 JIT-like methods) by `jitarena replay`: counters
# and a log record per method, against no counters and no log, the whole process (the replay
# harness inlines the arena's part, which tests/whole_cost.rs measures in the JIT's shape).
cargo build --release --quiet -p jitarena-tools --bin jitarena
jitarena=$tgt/release/jitarena
"$jitarena" gen --seed 1 --methods 300 --trace "$out/replay.jat" 2>/dev/null
valgrind --tool=callgrind --callgrind-out-file="$out/cg.replay.counted" \
    "$jitarena" replay "$out/replay.jat" -o "$out/replay.jas" >/dev/null 2>&1
valgrind --tool=callgrind --callgrind-out-file="$out/cg.replay.uncounted" \
    "$jitarena" replay "$out/replay.jat" --no-counters >/dev/null 2>&1
echo
printf '%-44s %16s %16s %9s\n' "replay of 300 generated methods" "counted + log" "uncounted" "overhead"
c=$(total "$out/cg.replay.counted"); u=$(total "$out/cg.replay.uncounted")
printf '%-44s %16s %16s %8s%%\n' "whole process (trace decoding included)" "$c" "$u" \
    "$(awk -v c="$c" -v u="$u" 'BEGIN { printf "%.2f", (c - u) * 100 / u }')"
exit $status
