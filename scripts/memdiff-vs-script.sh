#!/usr/bin/env bash
# How long memdiff takes on two generated logs of N methods each, beside the time plain scripts
# take just to sum the same data from each side's CSV dump: awk splitting on commas (fast, but
# wrong where a quoted method name holds a comma) and Python's csv module (right).
#
#   scripts/memdiff-vs-script.sh [METHODS]      # default 1000000
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000000}
target=${CARGO_TARGET_DIR:-target}
out=$target/memdiff-vs-script
mkdir -p "$out"
cargo build --release --quiet --bin jitarena
j=$target/release/jitarena
[ -f "$out/base-$n.jas" ] || "$j" gen --methods "$n" --seed 1 --log "$out/base-$n.jas" 2>/dev/null
[ -f "$out/diff-$n.jas" ] || "$j" gen --methods "$n" --seed 1 --scale LSRA=10 --log "$out/diff-$n.jas" 2>/dev/null
for side in base diff; do
  [ -f "$out/$side-$n.csv" ] || "$j" dump "$out/$side-$n.jas" --format csv > "$out/$side-$n.csv"
done
seconds() { local start end; start=$(date +%s.%N); "$@" >/dev/null; end=$(date +%s.%N); awk -v s="$start" -v e="$end" 'BEGIN { printf "%.2f", e - s }'; }
sum_awk() {
  for side in base diff; do
    awk -F, 'NR > 1 { for (i = 4; i <= NF; i++) s[i] += $i } END { for (i in s) t += s[i]; print t }' "$out/$side-$n.csv"
  done
}
sum_python() {
  for side in base diff; do
    python3 -c '
import csv, sys
rows = csv.reader(open(sys.argv[1], newline=""))
header = next(rows)
sums = [0] * len(header)
for row in rows:
    for i in range(3, len(row)):
        sums[i] += int(row[i])
print(sum(sums))' "$out/$side-$n.csv"
  done
}
echo "methods per side: $n ($(du -h "$out/base-$n.jas" | cut -f1) log, $(du -h "$out/base-$n.csv" | cut -f1) CSV)"
echo "jitarena memdiff, both sides, full report:  $(seconds "$j" memdiff "$out/base-$n.jas" "$out/diff-$n.jas" -q) s"
# Wall time on a shared machine follows its load; CPU time (user + system) and peak memory less.
/usr/bin/time -f "  (CPU time %U s user + %S s system, peak resident %M KB)" \
  "$j" memdiff "$out/base-$n.jas" "$out/diff-$n.jas" -q >/dev/null || true
/usr/bin/time -f "jitarena stats of the base: %e s (CPU %U s user + %S s system)" \
  "$j" stats "$out/base-$n.jas" >/dev/null
/usr/bin/time -f "jitarena merge of both: %e s (CPU %U s user + %S s system)" \
  "$j" merge -o "$out/merged-$n.jas" "$out/base-$n.jas" "$out/diff-$n.jas" >/dev/null
rm -f "$out/merged-$n.jas"
cat "$out/base-$n.jas" "$out/diff-$n.jas" >/dev/null # once into the page cache
/usr/bin/time -f "cat of both (the disk speed of this machine, from the page cache): %e s" \
  cat "$out/base-$n.jas" "$out/diff-$n.jas" >/dev/null
# merge makes its output durable (fsync) before renaming it into place: its disk speed is this.
/usr/bin/time -f "cat of both into a file, then sync of it (merge's disk speed): %e s" \
  sh -c 'cat "$1" "$2" > "$3" && sync "$3"' sh "$out/base-$n.jas" "$out/diff-$n.jas" "$out/cat-$n.jas"
rm -f "$out/cat-$n.jas"
echo "awk -F, summing both CSV dumps (no quoting): $(seconds sum_awk) s"
echo "python3 csv, summing both CSV dumps:        $(seconds sum_python) s"
