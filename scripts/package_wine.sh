#!/usr/bin/env bash
# The win-x64 package as a mingw-w64 build of a JIT takes it, run under Wine (issue 33;
# docs/packaging.md). Unpacks ARCHIVE (jitarena-<version>-win-x64.zip, from scripts/package.sh
# win-x64 on Linux) into a temporary prefix; configures tests/package for Windows with
# mingw-w64's g++ and CMAKE_PREFIX_PATH alone (find_package takes the package's libjitarena.a
# and the system libraries it names); builds it with -static (no mingw DLLs); runs it under Wine
# (a method allocated, counted and recorded in a stats log); reads the log with the package's
# own jitarena.exe under Wine and requires the report of LINUX_JITARENA (a Linux build of the
# command) on the same log, byte for byte.
#
#   scripts/package_wine.sh ARCHIVE LINUX_JITARENA
#
# Wine as scripts/windows/check.sh sets it up (docs/windows.md, "Wine notes"): its prefix,
# ${CARGO_TARGET_DIR:-target}/windows/wineprefix, booted once and kept (the same marker), and the
# bcryptprimitives shim (Wine 8 has no ProcessPrng, which the Rust standard library imports).
# On Debian as root it installs g++-mingw-w64-x86-64, wine and wine64 when missing.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
fail() {
  echo "package_wine: FAILED: $*" >&2
  exit 1
}
[ $# = 2 ] || {
  echo "usage: scripts/package_wine.sh ARCHIVE LINUX_JITARENA" >&2
  exit 2
}
archive=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
linux_jitarena=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
[ -s "$archive" ] || fail "$archive is missing"
[ -x "$linux_jitarena" ] || fail "$linux_jitarena is not a program"

missing=()
for pkg in g++-mingw-w64-x86-64 wine wine64; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "package_wine: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq || fail "apt-get update"
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
    fail "apt-get install ${missing[*]}"
fi
for tool in x86_64-w64-mingw32-g++ x86_64-w64-mingw32-gcc wine wineboot wineserver cmake python3; do
  command -v "$tool" >/dev/null || fail "$tool not found"
done

target_dir=${CARGO_TARGET_DIR:-$root/target}
mkdir -p "$target_dir/windows"
target_dir=$(cd "$target_dir" && pwd)
work=$target_dir/package-wine
rm -rf "$work"
mkdir -p "$work"
cd "$work"

python3 -m zipfile -e "$archive" prefix
pkg=$(echo prefix/jitarena-*-win-x64)
[ -f "$pkg/lib/libjitarena.a" ] && [ -f "$pkg/bin/jitarena.exe" ] ||
  fail "$archive holds no lib/libjitarena.a and bin/jitarena.exe"
pkg=$work/$pkg

echo "package_wine: tests/package with mingw-w64, found by CMake"
cmake -S "$root/tests/package" -B build -DCMAKE_SYSTEM_NAME=Windows \
  -DCMAKE_CXX_COMPILER=x86_64-w64-mingw32-g++ -DCMAKE_EXE_LINKER_FLAGS=-static \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$pkg" >configure.log 2>&1 ||
  fail "configure: $(tail -20 configure.log)"
grep -q -- "-- jitarena .* for win-x64: " configure.log || fail "find_package said nothing: $(cat configure.log)"
cmake --build build >build.log 2>&1 || fail "build: $(tail -30 build.log)"
[ -s build/package_user.exe ] || fail "no build/package_user.exe"

# The shim, next to each program that links the Rust standard library.
x86_64-w64-mingw32-gcc -std=c99 -O2 -Wall -Wextra -Werror -shared -s -o bcryptprimitives.dll \
  "$root/scripts/windows/bcryptprimitives.c" -ladvapi32
cp bcryptprimitives.dll build/
cp bcryptprimitives.dll "$pkg/bin/"

export WINEPREFIX="$target_dir/windows/wineprefix" WINEARCH=win64 WINEDEBUG=-all,err+module,err+seh
export WINEDLLOVERRIDES="mscoree,mshtml=;winemenubuilder.exe=d;bcryptprimitives=n"
export LC_ALL=C.UTF-8
if [ ! -f "$WINEPREFIX/.jitarena-booted" ]; then
  echo "package_wine: wineboot -i ($WINEPREFIX)"
  rm -rf "$WINEPREFIX"
  wineboot -i >wineboot.log 2>&1 || fail "wineboot -i: $(tail -20 wineboot.log)"
  wineserver -w
  touch "$WINEPREFIX/.jitarena-booted"
fi
wineserver -p 2>/dev/null || true
trap 'wineserver -k >/dev/null 2>&1 || true' EXIT

echo "package_wine: package_user.exe and the package's jitarena.exe under Wine"
rc=0
wine build/package_user.exe method.jas >user.out 2>&1 || rc=$?
[ "$rc" = 0 ] || fail "package_user.exe exited $rc: $(cat user.out)"
grep -q "^ASTNode 2400 bytes 100 allocations" user.out || fail "package_user.exe: $(cat user.out)"
[ -s method.jas ] || fail "package_user.exe wrote no log"
rc=0
wine "$pkg/bin/jitarena.exe" stats method.jas >wine.txt 2>wine.err || rc=$?
[ "$rc" = 0 ] || fail "jitarena.exe stats exited $rc: $(cat wine.err)"
"$linux_jitarena" stats method.jas >linux.txt
cmp -s linux.txt wine.txt || fail "jitarena.exe stats differs from the Linux one: $(diff linux.txt wine.txt | head -20)"
grep -q "Package:User(int)" wine.txt || fail "jitarena.exe stats: $(cat wine.txt)"
echo "package_wine: $(basename "$archive"): found by CMake (mingw-w64), linked, ran under Wine; its jitarena.exe reads the log as the Linux one does"
