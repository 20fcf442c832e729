#!/usr/bin/env bash
# Many threads compiling methods at once (BENCHMARKS.md, "Many threads"): benches/c/threads.c
# built against libjitarena.a as a JIT links it (profile jit) and as the plain arena
# (-DPLAIN_ARENA), the same methods through both at 1, 2, 4, 8 and 16 threads, in methods per
# second. Each program prints the median of its REPS timed repetitions (CLOCK_MONOTONIC around
# the parallel section, after one repetition not timed); the two builds run in turn, PAIRS
# times at each thread count, the first of each pair alternating, and the table gives the
# median of each build's figures and the median of the pairs' ratios (jitarena / plain: 1.00
# is as fast as the plain arena, below it slower). The last column is the same ratio of
# throughput taken from CPU time instead of the clock (the plain arena's CPU seconds per method
# over jitarena's, all threads' CPU time counted): what the methods cost, which other work on
# the machine moves much less than it moves the wall clock.
#
#   scripts/threads.sh      # PAIRS (7), METHODS (10000 in all, split over the threads), REPS
#                           # (3), COUNTS ("1 2 4 8 16"), CC and CARGO_TARGET_DIR are honoured
#
# A second table runs LIFE_METHODS (500000) methods that are only their arena's life (created,
# one allocation, ended, destroyed): the per-method path alone, where the threads meet on
# jitarena's process-wide locks most often.
#
# The stats log and the trace are kept off (JITARENA_LOG and JITARENA_TRACE unset): the
# methods' ends feed nothing, as in a throughput run.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
target=${CARGO_TARGET_DIR:-target}
pairs=${PAIRS:-7}
methods_mix=${METHODS:-10000}
methods_life=${LIFE_METHODS:-500000}
reps=${REPS:-3}
counts=${COUNTS:-1 2 4 8 16}
cc=${CC:-cc}

cargo build --profile jit -p jitarena --lib --quiet
out=$target/threads
mkdir -p "$out"
flags=(-O2 -g -std=c99 -Wall -Wextra -Werror -fPIE -pie -Iinclude)
$cc "${flags[@]}" benches/c/threads.c "$target/jit/libjitarena.a" \
    -lpthread -ldl -lm -lrt -o "$out/threads"
$cc "${flags[@]}" -DPLAIN_ARENA benches/c/threads.c -lpthread -ldl -lm -lrt \
    -o "$out/threads_plain"

# One run: its median methods per second in `rate` and CPU microseconds per method in `cpu`,
# after checking that it did the work the other build did (the same allocations and marks).
run() {
    local program=$1 n=$2 mode=$3 line
    line=$(env -u JITARENA_LOG -u JITARENA_TRACE "$program" "$n" "$methods" "$reps" "$mode" |
        tail -n 1)
    case $line in
        "threads $n methods $methods allocations "*) ;;
        *) echo "unexpected output of $program $n: $line" >&2; exit 1 ;;
    esac
    local work=${line#*allocations }
    work=${work%% pages*}
    if [[ -n ${plan:-} && $work != "$plan" ]]; then
        echo "$program $n did other work ($work) than the other build ($plan)" >&2
        exit 1
    fi
    plan=$work
    rate=${line##*median_methods_per_s }
    rate=${rate%% *}
    cpu=${line##*median_cpu_us_per_method }
    cpu=${cpu%% *}
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (v[int((NR + 1) / 2)] + v[int(NR / 2) + 1]) / 2 }'; }

# The table of one mode (`mix`: the methods of jit_shape.c; `life`: each method only its
# arena's life, the per-method path alone) over the thread counts.
table() {
    local mode=$1 n p a b ca cb mp mo mr mc per_core
    methods=$2
    echo "| threads | threads a core | plain arena, methods/s | jitarena, methods/s | jitarena / plain | CPU per method, plain / jitarena |"
    echo "| ---: | ---: | ---: | ---: | ---: | ---: |"
    for n in $counts; do
        plan=
        plains=() ours=() ratios=() cpu_ratios=()
        for ((p = 0; p < pairs; p++)); do
            if ((p % 2 == 0)); then
                run "$out/threads_plain" "$n" "$mode"; a=$rate ca=$cpu
                run "$out/threads" "$n" "$mode"; b=$rate cb=$cpu
            else
                run "$out/threads" "$n" "$mode"; b=$rate cb=$cpu
                run "$out/threads_plain" "$n" "$mode"; a=$rate ca=$cpu
            fi
            plains+=("$a") ours+=("$b")
            ratios+=("$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.4f", b / a }')")
            cpu_ratios+=("$(awk -v a="$ca" -v b="$cb" 'BEGIN { printf "%.4f", a / b }')")
        done
        mp=$(printf '%s\n' "${plains[@]}" | median)
        mo=$(printf '%s\n' "${ours[@]}" | median)
        mr=$(printf '%s\n' "${ratios[@]}" | median)
        mc=$(printf '%s\n' "${cpu_ratios[@]}" | median)
        per_core=$(awk -v n="$n" -v c="$cores" 'BEGIN { printf "%g", n / c }')
        printf '| %d | %s | %.0f | %.0f | %.3f | %.3f |\n' "$n" "$per_core" "$mp" "$mo" "$mr" "$mc"
    done
}

cores=$(nproc)
load_before=$(cut -d' ' -f1 /proc/loadavg)
echo "The JIT's methods ($methods_mix in all at each thread count):"
echo
table mix "$methods_mix"
echo
echo "Each method only its arena's life: created, one allocation, ended, destroyed ($methods_life in all):"
echo
table life "$methods_life"
echo
echo "Method i on thread i mod N; the median of $reps repetitions a run, $pairs runs of each" \
    "build in turn; $cores cores (more threads than cores oversubscribe them); load average" \
    "$load_before before the runs; $((SECONDS - started)) s"
