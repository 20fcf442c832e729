#!/usr/bin/env bash
# Windows, checked from Linux (issue 26; docs/windows.md). The .NET JIT's throughput diffs run
# on windows-x64, windows-x86 and linux-x64, with a JIT built by MSVC against the static CRT.
# This script, run by .ci/run as root on Debian 12:
#   1. type-checks the library for x86_64, i686 and aarch64 pc-windows-msvc with +crt-static,
#      build.rs's C driver compiled by clang in MSVC mode (no MSVC here), and checks that the
#      driver's objects are COFF for the target and ask for the static CRT (libcmt); then
#      compiles the JIT's archive, jitarena.lib, for each (not linked: no MSVC linker);
#   2. builds for x86_64-pc-windows-gnu (mingw-w64) with +crt-static: the JIT's archive
#      (--profile jit) and the `jitarena` command (--release);
#   3. runs under Wine 8 the C API tests (tests/c/api_test.c), a log-writing program
#      (tests/windows/write_log.c: %p, a path that is not ASCII, a reader while the log is
#      written, second writers refused with JITARENA_E_IO) and two JITs in one process
#      (tests/c/mini_jit.c as two DLLs, tests/windows/two_jits_host.c: %m);
#   4. reads those logs with the Linux `jitarena` and with `jitarena.exe` under Wine, and
#      requires byte-identical reports (stats, stats --json, dump csv and jsonl);
#   5. runs memdiff over three collections with both and requires the same exit code and
#      byte-identical JSON, markdown and console reports.
# It installs what it needs (apt packages, rustup targets) and fails on anything missing.
# Every part is timed; the times are printed at the end. Outputs go to
# ${CARGO_TARGET_DIR:-target}/windows/ (the Wine prefix too, booted once and kept).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"

target_dir=${CARGO_TARGET_DIR:-target}
mkdir -p "$target_dir"
target_dir=$(cd "$target_dir" && pwd)
out="$target_dir/windows"
bin="$out/bin"
gnu=x86_64-pc-windows-gnu
msvc_targets=(x86_64-pc-windows-msvc i686-pc-windows-msvc aarch64-pc-windows-msvc)

fail() {
  echo "windows: FAILED: $*" >&2
  exit 1
}

# Runs "$@" and records its wall time under the name $1 (the rest is the command).
timings=()
timed() {
  local name=$1 start end
  shift
  start=$EPOCHREALTIME
  "$@"
  end=$EPOCHREALTIME
  timings+=("$(awk -v n="$name" -v s="$start" -v e="$end" 'BEGIN { printf "  %-34s %6.1f s", n, e - s }')")
}
script_start=$EPOCHREALTIME

# A file that must exist and hold something.
need_file() {
  [ -s "$1" ] || fail "$1 is missing or empty${2:+ ($2)}"
}

# ---- install ----------------------------------------------------------------------------
# Without recommends: wine's pull in GStreamer, fonts, Vulkan and more, which the console
# programs run here never load.
install_packages() {
  local missing=() pkg tool
  for pkg in clang llvm gcc-mingw-w64-x86-64 wine wine64; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "windows: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq || fail "apt-get update"
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
      fail "apt-get install ${missing[*]}"
  fi
  for tool in clang llvm-lib llvm-readobj x86_64-w64-mingw32-gcc x86_64-w64-mingw32-objdump \
    wine wineboot wineserver; do
    command -v "$tool" >/dev/null || fail "$tool not found after installing the packages"
  done
}

rustup_targets() {
  local target installed
  installed=$(rustup target list --installed)
  for target in "${msvc_targets[@]}" "$gnu"; do
    if ! grep -qx "$target" <<<"$installed"; then
      rustup target add "$target" || fail "rustup target add $target"
    fi
  done
}

# ---- 1. MSVC targets: type-check, and the archive compiled (not linked) ----------------------
# cargo check compiles build.rs's C driver for real (only Rust is type-checked): the `cc`
# crate runs scripts/windows/clang-cl (clang --driver-mode=cl, its MSVC-compatible driver, as
# MSVC's cl.exe would be) with --target, and llvm-lib as lib.exe. Nothing is linked, so no
# MSVC libraries are needed. +crt-static goes through the per-target RUSTFLAGS variable (only
# the target's code, not the host's build script) and reaches the `cc` crate, which then
# compiles with -MT: the driver's objects must name libcmt (the static CRT), not msvcrt.
# Then the JIT's archive itself, jitarena.lib (--profile jit, the staticlib alone: a cdylib
# would need MSVC's linker), which also catches what only code generation sees; its
# native-static-libs must name the static CRT. It is neither linked nor run here.
check_msvc() {
  local target var lib out_dir format expected log
  for target in "${msvc_targets[@]}"; do
    var=${target//-/_}
    local vars=("CC_$var=$root/scripts/windows/clang-cl" "AR_$var=llvm-lib"
      "CFLAGS_$var=--target=$target"
      "CARGO_TARGET_${var^^}_RUSTFLAGS=-C target-feature=+crt-static")
    echo "windows: cargo check -p jitarena --lib --target $target (+crt-static)"
    out_dir=$(env "${vars[@]}" nice -n 10 cargo check --quiet -p jitarena --lib \
      --target "$target" --message-format=json-render-diagnostics |
      python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "build-script-executed" and \
            m["package_id"].rsplit("#", 1)[-1].startswith("jitarena@"):
        print(m["out_dir"])
') || fail "cargo check for $target"
    [ -n "$out_dir" ] || fail "$target: no build-script output directory for jitarena"
    case $target in
      x86_64-*) expected=COFF-x86-64 ;;
      i686-*) expected=COFF-i386 ;;
      aarch64-*) expected=COFF-ARM64 ;;
    esac
    for lib in jitarena_replay_counted jitarena_replay_uncounted jitarena_site; do
      need_file "$out_dir/$lib.lib" "build.rs's C driver for $target"
      format=$(llvm-readobj --coff-directives "$out_dir/$lib.lib")
      grep -q "^Format: $expected\$" <<<"$format" ||
        fail "$target: $lib.lib is not $expected: $(grep '^Format' <<<"$format")"
      grep -q "/DEFAULTLIB:libcmt.lib" <<<"$format" ||
        fail "$target: $lib.lib does not ask for the static CRT (libcmt): $(grep Directive <<<"$format")"
      if grep -qi "msvcrt" <<<"$format"; then
        fail "$target: $lib.lib asks for the dynamic CRT (msvcrt)"
      fi
    done

    echo "windows: cargo rustc --profile jit -p jitarena --lib --crate-type staticlib --target $target"
    if ! log=$(env "${vars[@]}" nice -n 10 cargo rustc --quiet --profile jit -p jitarena --lib \
      --crate-type staticlib --target "$target" -- --print native-static-libs 2>&1); then
      echo "$log" >&2
      fail "building jitarena.lib for $target"
    fi
    lib="$target_dir/$target/jit/jitarena.lib"
    need_file "$lib" "the JIT's archive for $target"
    grep -q "native-static-libs: .*/defaultlib:libcmt" <<<"$log" ||
      fail "$target: the archive's native libraries do not name the static CRT: $(grep native-static <<<"$log")"
    # Every member an object for the target, or an import stub (raw-dylib imports).
    format=$(llvm-readobj --file-headers "$lib" | grep '^Format:' | sort -u |
      grep -v '^Format: COFF-import-file$' || true)
    [ "$format" = "Format: $expected" ] || fail "$target: members of $lib: $format"
  done
}

# ---- 2. mingw-w64: build -------------------------------------------------------------------
build_gnu() {
  local var=${gnu//-/_}
  local flags=("CARGO_TARGET_${var^^}_RUSTFLAGS=-C target-feature=+crt-static")
  echo "windows: cargo build --profile jit -p jitarena --lib --target $gnu (+crt-static)"
  env "${flags[@]}" nice -n 10 cargo build --quiet --profile jit -p jitarena --lib --target "$gnu"
  echo "windows: cargo build --release --bin jitarena --target $gnu (+crt-static)"
  env "${flags[@]}" nice -n 10 cargo build --quiet --release -p jitarena-tools --bin jitarena \
    --target "$gnu"
  need_file "$target_dir/$gnu/jit/libjitarena.a"
  need_file "$target_dir/$gnu/release/jitarena.exe"
}

# The Linux command to compare with. .ci/run built it before (`cargo run --release -- demo`):
# then this is a no-op; run alone, it builds it.
build_linux() {
  nice -n 10 cargo build --quiet --release --bin jitarena
  need_file "$target_dir/release/jitarena"
}

# The C programs, with mingw, against the JIT's archive. -static: libgcc and winpthread
# linked in, so Wine needs no mingw DLLs. The libraries after the archive are what
# `cargo rustc --profile jit -p jitarena --lib --crate-type staticlib --target
# x86_64-pc-windows-gnu -- --print native-static-libs` names; ProcessPrng is imported by
# raw-dylib and needs no import library.
build_c() {
  local cc=x86_64-w64-mingw32-gcc archive="$target_dir/$gnu/jit/libjitarena.a"
  local libs=(-lkernel32 -lntdll -luserenv -lws2_32 -ldbghelp)
  local warn=(-std=c99 -O2 -Wall -Wextra -Werror -Iinclude -Itests/c)
  rm -rf "$bin"
  mkdir -p "$bin"
  "$cc" "${warn[@]}" -shared -s -o "$bin/bcryptprimitives.dll" \
    scripts/windows/bcryptprimitives.c -ladvapi32
  "$cc" "${warn[@]}" -o "$bin/api_test.exe" tests/c/api_test.c tests/c/no_counters.c \
    "$archive" "${libs[@]}" -static
  "$cc" "${warn[@]}" -municode -o "$bin/write_log.exe" tests/windows/write_log.c \
    "$archive" "${libs[@]}" -static
  # Two JITs, each a DLL with its own copy of the library (exporting only jit_compile).
  "$cc" "${warn[@]}" -shared -Wl,--exclude-libs,ALL -DHEAVY=0 -o "$bin/mini_base.dll" \
    tests/c/mini_jit.c "$archive" "${libs[@]}" -static
  "$cc" "${warn[@]}" -shared -Wl,--exclude-libs,ALL -DHEAVY=1 -o "$bin/mini_diff.dll" \
    tests/c/mini_jit.c "$archive" "${libs[@]}" -static
  "$cc" "${warn[@]}" -o "$bin/two_jits_host.exe" tests/windows/two_jits_host.c -static
  cp "$target_dir/$gnu/release/jitarena.exe" "$bin/"
  local f
  for f in bcryptprimitives.dll api_test.exe write_log.exe mini_base.dll mini_diff.dll \
    two_jits_host.exe jitarena.exe; do
    need_file "$bin/$f"
    x86_64-w64-mingw32-objdump -f "$bin/$f" | grep -q "file format pei-x86-64" ||
      fail "$bin/$f is not a 64-bit Windows PE file"
  done
}

# ---- Wine -------------------------------------------------------------------------------
# Quiet (WINEDEBUG=-all, but for the loader's errors and unhandled exceptions: a missing DLL
# or a crash is otherwise a bare exit status) and fast: no Mono or Gecko installer at boot (mscoree, mshtml off),
# no desktop menu entries. bcryptprimitives=n: the DLL next to the .exe, the shim of
# scripts/windows/bcryptprimitives.c: Wine 8 has none, and the Rust standard library imports
# ProcessPrng from it (without it every program here exits with status 53 before main).
# A UTF-8 Unix locale: Wine maps file names and arguments through it, and under C/POSIX it
# cannot name a file that is not ASCII (CreateDirectoryW fails).
export WINEPREFIX="$out/wineprefix" WINEARCH=win64 WINEDEBUG=-all,err+module,err+seh
export WINEDLLOVERRIDES="mscoree,mshtml=;winemenubuilder.exe=d;bcryptprimitives=n"
export LC_ALL=C.UTF-8

# Boots the prefix once (kept in the target directory; a marker says the boot finished), then
# keeps one wineserver up for all the runs, stopped when the script exits.
wine_boot() {
  if [ ! -f "$WINEPREFIX/.jitarena-booted" ]; then
    echo "windows: wineboot -i ($WINEPREFIX)"
    rm -rf "$WINEPREFIX"
    wineboot -i >"$out/wineboot.log" 2>&1 || fail "wineboot -i: $(tail -20 "$out/wineboot.log")"
    wineserver -w
    touch "$WINEPREFIX/.jitarena-booted"
  fi
  # A server already up for this prefix (a run before this one that was stopped) serves
  # as well: `wineserver -p` then says so and fails.
  wineserver -p 2>/dev/null || echo "windows: a wineserver already runs for $WINEPREFIX"
  trap 'wineserver -k >/dev/null 2>&1 || true' EXIT
}

# ---- 3 and 4. C programs under Wine; their logs read on both sides ---------------------------
linux_jitarena() { "$target_dir/release/jitarena" "$@"; }
wine_jitarena() { wine "$bin/jitarena.exe" "$@"; }

# Runs one report with the Linux and the Windows command, from the current directory, on the
# same relative paths, and requires the same exit code and byte-identical output. Line
# endings are not normalised: CRLF from the Windows build is reported as such.
same_report() {
  local name=$1 linux_rc=0 wine_rc=0
  shift
  linux_jitarena "$@" >"$name.linux" 2>"$name.linux.err" || linux_rc=$?
  wine_jitarena "$@" >"$name.wine" 2>"$name.wine.err" || wine_rc=$?
  [ "$linux_rc" = 0 ] || fail "jitarena $* (Linux) exited $linux_rc: $(head -5 "$name.linux.err")"
  [ "$wine_rc" = 0 ] || fail "jitarena.exe $* (Wine) exited $wine_rc: $(head -5 "$name.wine.err")"
  need_file "$name.linux"
  compare "$name.linux" "$name.wine" "jitarena $*"
}

compare() {
  local linux=$1 windows=$2 what=$3
  if ! cmp -s "$linux" "$windows"; then
    if cmp -s <(tr -d '\r' <"$linux") <(tr -d '\r' <"$windows"); then
      fail "$what: the Windows build writes CRLF line endings ($windows), the Linux one LF"
    fi
    diff "$linux" "$windows" | head -20 >&2 || true
    fail "$what: the Linux and Windows outputs differ ($linux, $windows)"
  fi
}

# `stats --json` of a log: "methods kind=bytes ...", for the two JITs' checks.
kinds_of() {
  linux_jitarena stats --json "$1" | python3 -c '
import json, sys
s = json.load(sys.stdin)
print(s["methods"], *sorted("%s=%d" % (k["name"], k["bytes"]) for k in s["kinds"]))'
}

run_c_programs() {
  local run="$out/run" rc
  rm -rf "$run"
  mkdir -p "$run"
  cd "$run"

  echo "windows: api_test.exe under Wine"
  rc=0
  wine "$bin/api_test.exe" >api_test.out 2>&1 || rc=$?
  [ "$rc" = 0 ] || fail "api_test.exe exited $rc: $(tail -5 api_test.out)"
  grep -Eq "^api_test: [0-9]+ passed, 0 failed" api_test.out || fail "api_test.exe: $(cat api_test.out)"
  tr -d '\r' <api_test.out

  echo "windows: write_log.exe under Wine"
  mkdir wl
  rc=0
  wine "$bin/write_log.exe" wl >write_log.out 2>&1 || rc=$?
  [ "$rc" = 0 ] || fail "write_log.exe exited $rc: $(tail -5 write_log.out)"
  grep -Eq "^write_log --second-writer: [0-9]+ passed, 0 failed" write_log.out ||
    fail "write_log.exe: the second writer's process did not report: $(cat write_log.out)"
  grep -Eq "^write_log: [0-9]+ passed, 0 failed" write_log.out || fail "write_log.exe: $(cat write_log.out)"
  tr -d '\r' <write_log.out
  # The non-ASCII directory, as Wine wrote it to the Linux file system (UTF-8), and the logs
  # named with the process id (%p) and the module (%m).
  # wl/jité-日本 in UTF-8 bytes (bash's \u escapes depend on the locale it was started in).
  local dir=$'wl/jit\xc3\xa9-\xe6\x97\xa5\xe6\x9c\xac' logs log module
  [ -d "$dir" ] || fail "write_log.exe: no directory $dir: $(ls wl)"
  logs=("$dir"/log-*.jas)
  [ ${#logs[@]} = 1 ] && [[ ${logs[0]} =~ /log-[0-9]+\.jas$ ]] || fail "write_log.exe: logs in $dir: ${logs[*]}"
  log=${logs[0]}
  logs=(wl/write_log-*.jas)
  [ ${#logs[@]} = 1 ] && [[ ${logs[0]} =~ /write_log-[0-9]+\.jas$ ]] || fail "write_log.exe: %m logs: ${logs[*]}"
  module=${logs[0]}
  need_file "$log"
  need_file "$module"

  echo "windows: the logs written under Wine, read by Linux jitarena and by jitarena.exe"
  same_report stats stats "$log" "$module"
  same_report stats-json stats --json "$log" "$module"
  same_report dump-csv dump --format csv "$log" "$module"
  same_report dump-jsonl dump --format jsonl "$log" "$module"
  [ "$(kinds_of "$log" | cut -d' ' -f1)" = 100 ] || fail "$log: not 100 methods: $(kinds_of "$log")"
  [ "$(kinds_of "$module" | cut -d' ' -f1)" = 10 ] || fail "$module: not 10 methods"

  echo "windows: two JITs (DLLs) in one process under Wine"
  mkdir -p tj/own tj/one
  rc=0
  wine "$bin/two_jits_host.exe" "$bin/mini_base.dll" "$bin/mini_diff.dll" \
    'tj\own\base.jas' 'tj\own\diff.jas' 40 >tj/own.out 2>&1 || rc=$?
  [ "$rc" = 0 ] || fail "two JITs, own logs: exited $rc: $(cat tj/own.out)"
  grep -q "^base 0, diff 0" tj/own.out || fail "two JITs, own logs: $(cat tj/own.out)"
  local base diff
  base=$(kinds_of tj/own/base.jas)
  diff=$(kinds_of tj/own/diff.jas)
  python3 - "$base" "$diff" <<'EOF' || fail "two JITs, own logs: base $base, diff $diff"
import sys
def parse(s):
    n, *kinds = s.split()
    return int(n), {k: int(v) for k, v in (kv.split("=") for kv in kinds)}
(nb, b), (nd, d) = parse(sys.argv[1]), parse(sys.argv[2])
assert nb == nd == 40, (nb, nd)
assert b["ASTNode"] == d["ASTNode"] and b["BasicBlock"] == d["BasicBlock"]
assert 2 * b["LSRA"] == d["LSRA"] > 0, "the diff JIT's LSRA is twice as heavy"
EOF
  # One JITARENA_LOG named by process only: the second copy is refused (JITARENA_E_IO, 7)
  # on every method, saying why; the first keeps all of its records.
  rc=0
  JITARENA_LOG='tj\one\jit-%p.jas' wine "$bin/two_jits_host.exe" "$bin/mini_base.dll" \
    "$bin/mini_diff.dll" - - 20 >tj/one.out 2>tj/one.err || rc=$?
  [ "$rc" = 1 ] || fail "two JITs, one file: exited $rc, not 1: $(cat tj/one.out tj/one.err)"
  grep -q "^base 0, diff 7" tj/one.out ||
    fail "two JITs, one file: expected base 0, diff 7 (JITARENA_E_IO): $(cat tj/one.out tj/one.err)"
  grep -q "another writer has this file open" tj/one.err || fail "two JITs, one file: $(cat tj/one.err)"
  logs=(tj/one/*)
  [ ${#logs[@]} = 1 ] && [[ ${logs[0]} =~ /jit-[0-9]+\.jas$ ]] || fail "two JITs, one file: ${logs[*]}"
  [ "$(kinds_of "${logs[0]}" | cut -d' ' -f1)" = 20 ] || fail "${logs[0]}: not the first JIT's 20 methods"
  # %m: each DLL's copy names its own file from one pattern, in a directory that is not
  # ASCII either (JITARENA_LOG, read from the UTF-16 environment).
  local mod=$'tj/m\xc3\xb6d'
  mkdir -p "$mod"
  rc=0
  JITARENA_LOG=$'tj\\m\xc3\xb6d\\%m-%p.jas' wine "$bin/two_jits_host.exe" "$bin/mini_base.dll" \
    "$bin/mini_diff.dll" - - 20 >tj/mod.out 2>&1 || rc=$?
  [ "$rc" = 0 ] || fail "two JITs, %m: exited $rc: $(cat tj/mod.out)"
  grep -q "^base 0, diff 0" tj/mod.out || fail "two JITs, %m: $(cat tj/mod.out)"
  logs=("$mod"/*)
  [ ${#logs[@]} = 2 ] && [[ ${logs[0]} =~ /mini_base-([0-9]+)\.jas$ ]] &&
    [ "${logs[1]}" = "$mod/mini_diff-${BASH_REMATCH[1]}.jas" ] || fail "two JITs, %m: ${logs[*]}"
  base=$(kinds_of "${logs[0]}")
  diff=$(kinds_of "${logs[1]}")
  [ "${base%% *}" = 20 ] && [ "${diff%% *}" = 20 ] && [ "$base" != "$diff" ] ||
    fail "two JITs, %m: base $base, diff $diff"
  cd "$root"
}

# ---- 5. memdiff over three collections ----------------------------------------------------
# c1 and c3 with LSRA 30% heavier in the diff (over --kind-fail-above 25%), c2 unchanged:
# exit 1 (FAIL). Both commands run from the same directory on the same relative roots, so
# no path can differ by its separator (the reports hold collection names, not paths).
run_memdiff() {
  local md="$out/md" c scale linux_rc=0 wine_rc=0
  rm -rf "$md"
  mkdir -p "$md"
  cd "$md"
  for c in 1 2 3; do
    mkdir -p "base/c$c" "diff/c$c"
    scale=()
    [ "$c" = 2 ] || scale=(--scale LSRA=30)
    linux_jitarena gen --seed "$c" --methods 300 --log "base/c$c/s.jas" >gen.out 2>&1 ||
      fail "jitarena gen: $(cat gen.out)"
    linux_jitarena gen --seed "$c" --methods 300 "${scale[@]}" --log "diff/c$c/s.jas" \
      >gen.out 2>&1 || fail "jitarena gen: $(cat gen.out)"
    need_file "base/c$c/s.jas"
    need_file "diff/c$c/s.jas"
  done
  # The Windows command writes the same log bytes.
  local rc=0
  wine_jitarena gen --seed 3 --methods 300 --scale LSRA=30 --log gen-wine.jas >gen.out 2>&1 ||
    rc=$?
  [ "$rc" = 0 ] || fail "jitarena.exe gen exited $rc: $(cat gen.out)"
  compare diff/c3/s.jas gen-wine.jas "jitarena gen --seed 3 --methods 300 --scale LSRA=30"
  rm gen-wine.jas

  echo "windows: memdiff over 3 collections, Linux and Wine"
  linux_jitarena memdiff --base-root base --diff-root diff --json linux.json --md linux.md \
    >linux.out 2>linux.err || linux_rc=$?
  wine_jitarena memdiff --base-root base --diff-root diff --json wine.json --md wine.md \
    >wine.out 2>wine.err || wine_rc=$?
  [ "$linux_rc" = 1 ] || fail "memdiff (Linux) exited $linux_rc, not 1 (FAIL): $(tail -3 linux.err linux.out)"
  [ "$wine_rc" = "$linux_rc" ] || fail "memdiff exited $linux_rc on Linux but $wine_rc under Wine: $(tail -3 wine.err)"
  need_file linux.json
  need_file linux.md
  python3 -c '
import json, sys
r = json.load(open("linux.json"))
got = {c["name"]: c["status"] for c in r["collections"]}
assert got == {"c1": "FAIL", "c2": "PASS", "c3": "FAIL"}, got
' || fail "memdiff (Linux): unexpected verdicts in linux.json"
  compare linux.json wine.json "memdiff --json"
  compare linux.md wine.md "memdiff --md"
  compare linux.out wine.out "memdiff's console report"
  cd "$root"
}

timed "install (apt)" install_packages
timed "rustup targets" rustup_targets
timed "check + archive, 3 MSVC targets" check_msvc
timed "build mingw: archive + jitarena.exe" build_gnu
timed "build Linux jitarena (reused)" build_linux
timed "compile C programs (mingw)" build_c
timed "wine boot (once) + server" wine_boot
timed "C programs under Wine + reports" run_c_programs
timed "memdiff under Wine" run_memdiff
echo "windows: all checks passed ($(wine --version), $(x86_64-w64-mingw32-gcc -dumpversion) mingw-w64 gcc)"
for line in "${timings[@]}"; do
  echo "$line"
done
awk -v s="$script_start" -v e="$EPOCHREALTIME" 'BEGIN { printf "  %-34s %6.1f s\n", "total", e - s }'
