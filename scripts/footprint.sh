#!/usr/bin/env bash
# The text that libjitarena.a as a JIT links it (profile jit: release, no unwinding) adds to a C program calling every entry point of
# include/jitarena.h (tests/c/every_entry.c), linked with -Wl,--gc-sections, against an empty
# C program (tests/c/empty.c), as `size` counts text; then the sections and the symbols by the
# crate they come from. Exit 1 over the budget held by tests/footprint.rs (BUDGET).
#
#   scripts/footprint.sh              # CARGO_TARGET_DIR is honoured; CC picks the C compiler
#   scripts/footprint.sh --per-entry  # also: each entry point alone, and whether it links
#                                     # Rust's panic handler (which entry brought it back)
set -euo pipefail
cd "$(dirname "$0")/.."
target=${CARGO_TARGET_DIR:-target}
cargo build --profile jit -p jitarena --lib --quiet
out=$target/footprint
mkdir -p "$out"
cc=${CC:-cc}
flags=(-O2 -std=c99 -Wall -Wl,--gc-sections -Iinclude)
$cc "${flags[@]}" tests/c/every_entry.c "$target/jit/libjitarena.a" \
    -lpthread -ldl -lm -lrt -o "$out/every_entry"
$cc "${flags[@]}" tests/c/empty.c -o "$out/empty"
"$out/every_entry" "$out/every_entry.jas" "$out/every_entry.jat" >/dev/null

text() { size "$1" | awk 'NR == 2 { print $1 }'; }
added=$(( $(text "$out/every_entry") - $(text "$out/empty") ))
budget=$(sed -n 's/^const BUDGET: u64 = \([0-9_]*\);/\1/p' tests/footprint.rs | tr -d _)
echo "text added by libjitarena.a: $added bytes (budget $budget)"

echo
echo "sections of every_entry counted as text (bytes):"
size -A "$out/every_entry" | awk '$1 ~ /^\.(text|rodata|eh_frame|eh_frame_hdr|gcc_except_table|rela\.dyn)$/ { printf "  %-18s %8d\n", $1, $2 }'

echo
echo "functions (.text) by origin, bytes (a name counts for the first of these crates it mentions):"
nm -C --size-sort -S -t d "$out/every_entry" | awk '$3 ~ /^[tTwW]$/' | awk '
  {
    size = $2 + 0; $1 = ""; $2 = ""; $3 = ""; name = $0
    origin = "other (C runtime, libc glue)"
    n = split("gimli addr2line rustc_demangle miniz_oxide adler2 backtrace crc32fast std_detect hashbrown jitarena core::fmt alloc:: std:: core::", keys, " ")
    for (i = 1; i <= n; i++) if (index(name, keys[i])) { origin = keys[i]; break }
    sum[origin] += size; total += size
  }
  END { for (o in sum) printf "%d\t%s\n", sum[o], o }' | sort -nr |
  awk -F'\t' '{ printf "  %-30s %8d\n", $2, $1; total += $1 } END { printf "  %-30s %8d\n", "total", total }'
if [ "${1:-}" = --per-entry ]; then
  echo
  echo "each entry point alone (a program that takes its address), text added and panic handler:"
  for entry in $(nm "$out/every_entry" | awk '$2 == "T" && $3 ~ /^jitarena_/ { print $3 }'); do
    printf 'extern void %s(void);\nint main(void) { void (*volatile f)(void) = %s; return f != 0; }\n' \
      "$entry" "$entry" > "$out/one.c"
    $cc "${flags[@]}" "$out/one.c" "$target/jit/libjitarena.a" -lpthread -ldl -lm -lrt -o "$out/one"
    nm "$out/one" > "$out/one.nm" # not piped into `grep -q`: a broken pipe would read as "-"
    handler=$(grep -q rust_begin_unwind "$out/one.nm" && echo "PANIC HANDLER" || echo "-")
    printf '  %-36s %8d  %s\n' "$entry" $(( $(text "$out/one") - $(text "$out/empty") )) "$handler"
  done
fi
[ "$added" -le "$budget" ] || { echo "footprint.sh: over the budget" >&2; exit 1; }
