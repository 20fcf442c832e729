#!/usr/bin/env bash
# Uses a package as a JIT's build does (issue 33; docs/packaging.md): unpacks ARCHIVE (a
# jitarena-<version>-<rid>.tar.gz or .zip of scripts/package.sh) into a temporary prefix,
# configures tests/package against it with CMAKE_PREFIX_PATH alone (its find_package asks for
# 0.1 and it links jitarena::jitarena), builds and runs it (a method allocated, counted and recorded
# in a stats log), and reads the log with the package's own bin/jitarena stats. The release
# workflows run it on each RID's agent; tools/tests/package.rs checks more here, with no cargo
# on PATH.
#
#   scripts/package_check.sh ARCHIVE [CMAKE_ARG...]   e.g. -DCMAKE_CXX_FLAGS=-m32 for linux-x86,
#                                                     -A Win32 for win-x86
# ARCHIVE may be given as several names of which one exists (a glob that matches nothing is
# passed on as it is): the first that exists is taken.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 1 ] || {
  echo "usage: scripts/package_check.sh ARCHIVE [CMAKE_ARG...]" >&2
  exit 2
}
archive=""
while [ $# -gt 0 ] && [[ $1 != -* ]]; do
  [ -n "$archive" ] || [ ! -f "$1" ] || archive=$1
  shift
done
[ -n "$archive" ] || {
  echo "package_check: no archive found among the names given" >&2
  exit 2
}
python=$(command -v python3 || command -v python) || {
  echo "package_check: python3 (or python) is needed to unpack" >&2
  exit 2
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$python" - "$archive" "$work/prefix" <<'PY'
import sys, tarfile, zipfile
archive, dest = sys.argv[1:3]
if archive.endswith(".zip"):
    zipfile.ZipFile(archive).extractall(dest)
else:
    with tarfile.open(archive) as t:
        t.extractall(dest)
PY
pkg=$(echo "$work"/prefix/jitarena-*)
[ -d "$pkg" ] || {
  echo "package_check: $archive holds no jitarena-<version>-<rid>/ directory" >&2
  exit 1
}
command=$pkg/bin/jitarena
[ -f "$command" ] || command=$pkg/bin/jitarena.exe
chmod +x "$command" 2>/dev/null || true

cmake -S "$root/tests/package" -B "$work/build" -DCMAKE_PREFIX_PATH="$pkg" \
  -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build "$work/build" --config Release
program=$(find "$work/build" -type f \( -name package_user -o -name package_user.exe \) | head -n1)
[ -n "$program" ] || {
  echo "package_check: the build made no package_user" >&2
  exit 1
}
"$program" "$work/method.jas"
"$command" stats "$work/method.jas" | tee "$work/stats.txt"
grep -q "ASTNode" "$work/stats.txt" && grep -q "Package:User(int)" "$work/stats.txt" || {
  echo "package_check: jitarena stats does not show the method's kinds" >&2
  exit 1
}
echo "package_check: $(basename "$archive"): found by CMake, linked, ran, read by its own jitarena"
