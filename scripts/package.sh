#!/usr/bin/env bash
# Packages the library and the command for a JIT's build (issue 33; docs/packaging.md): for each
# RID, the JIT's archive (`--profile jit`) and the `jitarena` command (`--release`), in a layout that
# CMake's find_package and pkg-config find, written to dist/jitarena-<version>-<rid>.tar.gz
# (.zip for win-*) with its SHA-256 checksum beside it (<archive>.sha256).
#
#   scripts/package.sh [--out DIR] RID...     RIDs as .NET names them, or `host`: every RID
#                                             this machine builds
#   scripts/package.sh --list                 which RIDs this machine builds, and why not the rest
#
# RIDs: linux-x64 linux-x86 linux-arm64 linux-arm win-x64 win-x86 win-arm64 osx-x64 osx-arm64.
# A Linux x64 machine builds linux-x64, linux-x86 (the i686 target and gcc's multilib) and
# win-x64 (mingw-w64 for libjitarena.a and jitarena.exe, and the MSVC jitarena.lib compiled by
# clang-cl when clang and llvm-lib are here: compiled, not linked); linux-arm64 and linux-arm
# with their cross compilers (aarch64-linux-gnu-gcc, arm-linux-gnueabihf-gcc), an arm64 Linux
# machine linux-arm64 natively. A Windows machine with MSVC builds win-*, a Mac osx-*. Any other
# RID is refused before anything is built, saying what it needs. The release workflows
# (.github/workflows/release.yml, .azure/release.yml) build each RID on its own hosted agent.
#
# The layout, under jitarena-<version>-<rid>/:
#   include/jitarena.h, include/jitarena.hpp
#   lib/libjitarena.a (GCC, Clang, mingw), lib/jitarena.lib (MSVC, +crt-static)
#   bin/jitarena (bin/jitarena.exe)
#   lib/cmake/jitarena/jitarenaConfig.cmake, jitarenaConfigVersion.cmake: jitarena::jitarena
#   lib/pkgconfig/jitarena.pc
# Nothing inside names an absolute path: the CMake files find the prefix from their own place
# (${CMAKE_CURRENT_LIST_DIR}), the .pc file from ${pcfiledir}. The version is the library's
# (Cargo.toml's [package] version), and the files state the header's JITARENA_ABI_VERSION.
#
# Builds go to ${CARGO_TARGET_DIR:-target} as every other build of the checkout does (the host's
# archive to target/jit/, its command to target/release/), so a machine that built them already
# rebuilds nothing; the staged trees to <target>/package/. Needs bash, cargo, and python3 (or
# python) for the archives. On Debian as root, a missing mingw-w64 is installed with apt-get,
# as scripts/windows/check.sh installs it; missing rustup targets are added.
set -euo pipefail
if [ "${BASH_VERSINFO[0]}" -lt 4 ]; then
  echo "package: needs bash 4 or later, this is $BASH_VERSION (macOS: brew install bash)" >&2
  exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

ALL_RIDS=(linux-x64 linux-x86 linux-arm64 linux-arm win-x64 win-x86 win-arm64 osx-x64 osx-arm64)

die() {
  echo "package: $*" >&2
  exit 2
}

out=dist
list=false
rids=()
while [ $# -gt 0 ]; do
  case $1 in
    --out)
      [ $# -ge 2 ] || die "--out needs a directory"
      out=$2
      shift 2
      ;;
    --out=*)
      out=${1#--out=}
      shift
      ;;
    --list)
      list=true
      shift
      ;;
    -h | --help)
      sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
      exit 0
      ;;
    -*) die "unknown option $1 (scripts/package.sh --help)" ;;
    *)
      rids+=("$1")
      shift
      ;;
  esac
done
if ! $list && [ ${#rids[@]} = 0 ]; then
  die "no RID given: scripts/package.sh [--out DIR] RID... (${ALL_RIDS[*]}, or host); --list says which this machine builds"
fi

python=${PYTHON:-}
if [ -z "$python" ]; then
  for p in python3 python; do
    if command -v "$p" >/dev/null && "$p" -c "import sys; sys.exit(sys.version_info < (3, 6))" 2>/dev/null; then
      python=$p
      break
    fi
  done
fi

version=$(sed -n '/^\[package\]/,/^\[/ s/^version *= *"\([^"]*\)".*/\1/p' Cargo.toml | head -n1)
[[ $version =~ ^([0-9]+)\.[0-9]+\.[0-9]+ ]] || die "no version in Cargo.toml's [package] ($version)"
major=${BASH_REMATCH[1]}
abi=$(sed -n 's/^#define JITARENA_ABI_VERSION \([0-9][0-9]*\)u\{0,1\}[[:space:]]*$/\1/p' include/jitarena.h)
[ -n "$abi" ] || die "no JITARENA_ABI_VERSION in include/jitarena.h"

host_triple=$(rustc -vV | sed -n 's/^host: //p')
case $(uname -s) in
  Linux) host_os=linux ;;
  Darwin) host_os=osx ;;
  MINGW* | MSYS* | CYGWIN* | Windows_NT) host_os=win ;;
  *) host_os=other ;;
esac

# What a RID is: its Rust target, CMake system name and pointer size.
rid_info() {
  case $1 in
    linux-x64) triple=x86_64-unknown-linux-gnu system=Linux ptr=8 ;;
    linux-x86) triple=i686-unknown-linux-gnu system=Linux ptr=4 ;;
    linux-arm64) triple=aarch64-unknown-linux-gnu system=Linux ptr=8 ;;
    linux-arm) triple=armv7-unknown-linux-gnueabihf system=Linux ptr=4 ;;
    win-x64) triple=x86_64-pc-windows-msvc system=Windows ptr=8 ;;
    win-x86) triple=i686-pc-windows-msvc system=Windows ptr=4 ;;
    win-arm64) triple=aarch64-pc-windows-msvc system=Windows ptr=8 ;;
    osx-x64) triple=x86_64-apple-darwin system=Darwin ptr=8 ;;
    osx-arm64) triple=aarch64-apple-darwin system=Darwin ptr=8 ;;
    *) return 1 ;;
  esac
}

# Whether this machine builds RID $1: sets reason, empty or what it lacks (and where the RID is
# built).
# Sets how: native, cross-gcc (a Linux cross compiler), mingw (win-x64 from Linux) or msvc.
why_not() {
  local rid=$1 cc
  reason=""
  rid_info "$rid"
  how=native
  case $host_os/$rid in
    linux/linux-*)
      if [ "$triple" = "$host_triple" ]; then
        return 0
      fi
      case $host_triple/$rid in
        x86_64-unknown-linux-gnu/linux-x86)
          how=multilib
          if ! printf 'int main(void){return 0;}\n' | ${CC:-cc} -m32 -x c - -o /dev/null 2>/dev/null; then
            reason="needs a C compiler that builds -m32 (Debian: gcc-multilib)"
          fi
          return 0
          ;;
      esac
      case $rid in
        linux-arm64) cc=aarch64-linux-gnu-gcc ;;
        linux-arm) cc=arm-linux-gnueabihf-gcc ;;
        *) cc=i686-linux-gnu-gcc ;;
      esac
      how=cross-gcc
      command -v "$cc" >/dev/null ||
        reason="needs an $rid machine or the cross compiler $cc (Debian: gcc-${cc%-gcc}; deb-style names), as the release workflow has"
      ;;
    linux/win-x64)
      how=mingw
      [ "$host_triple" = x86_64-unknown-linux-gnu ] || reason="needs an x64 Linux or a Windows machine"
      ;;
    linux/win-*) reason="needs Windows with MSVC (the release workflow's windows agent): no mingw-w64 command for $triple here" ;;
    win/win-*) how=msvc ;;
    osx/osx-*) ;;
    */osx-*) reason="needs a Mac (Apple's linker and SDK; the release workflow's macos agent)" ;;
    */win-*) reason="needs Windows with MSVC (the release workflow's windows agent)" ;;
    *) reason="needs a $rid machine (the release workflow builds it on its own agent)" ;;
  esac
}

if $list; then
  for rid in "${ALL_RIDS[@]}"; do
    why_not "$rid"
    if [ -z "$reason" ]; then
      echo "$rid: built here ($how)"
    else
      echo "$rid: not built here: $reason"
    fi
  done
  exit 0
fi

# The RIDs asked for: each known and buildable here, or nothing is built.
wanted=()
for rid in "${rids[@]}"; do
  if [ "$rid" = host ]; then
    for r in "${ALL_RIDS[@]}"; do
      why_not "$r"
      if [ -z "$reason" ]; then
        wanted+=("$r")
      fi
    done
    continue
  fi
  rid_info "$rid" || die "unknown RID '$rid' (RIDs: ${ALL_RIDS[*]}, or host)"
  why_not "$rid"
  [ -z "$reason" ] || die "refusing $rid: this machine ($host_triple) cannot build it: $reason. scripts/package.sh --list says what it builds"
  wanted+=("$rid")
done
[ ${#wanted[@]} -gt 0 ] || die "this machine ($host_triple) builds none of the RIDs"
[ -n "$python" ] || die "python3 (or python) is needed to write the archives"

# The archives' file times: the commit's, so that the same commit packs the same bytes.
if [ -z "${SOURCE_DATE_EPOCH:-}" ]; then
  SOURCE_DATE_EPOCH=$(git -C "$root" log -1 --format=%ct 2>/dev/null || true)
  export SOURCE_DATE_EPOCH
fi

target_dir=${CARGO_TARGET_DIR:-target}
mkdir -p "$target_dir" "$out"
target_dir=$(cd "$target_dir" && pwd)
out=$(cd "$out" && pwd)

# ---- tools this machine may lack (as scripts/windows/check.sh installs them) -----------------
need_rustup_target() {
  [ "$1" = "$host_triple" ] && return 0
  if ! rustup target list --installed | grep -qx "$1"; then
    echo "package: rustup target add $1"
    rustup target add "$1" >/dev/null || die "rustup target add $1 failed"
  fi
}

need_mingw() {
  command -v x86_64-w64-mingw32-gcc >/dev/null && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "package: installing gcc-mingw-w64-x86-64"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq || die "apt-get update failed"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      gcc-mingw-w64-x86-64 >/dev/null || die "apt-get install gcc-mingw-w64-x86-64 failed"
  fi
  command -v x86_64-w64-mingw32-gcc >/dev/null ||
    die "win-x64 needs mingw-w64's x86_64-w64-mingw32-gcc (Debian: gcc-mingw-w64-x86-64)"
}

# ---- builds ------------------------------------------------------------------------------
# The environment of a target's builds: +crt-static for Windows (a JIT built with /MT; the
# command then needs no C runtime DLL), cross compilers for Linux cross builds, clang-cl for the
# MSVC archive built from Linux. The same variables as scripts/windows/check.sh, so that the
# builds it made are reused.
target_env() {
  local t=$1 v=${1//-/_}
  envs=()
  envs_cc=""
  case $t in
    *-windows-*) envs+=("CARGO_TARGET_${v^^}_RUSTFLAGS=-C target-feature=+crt-static") ;;
  esac
  case $how/$t in
    mingw/*-msvc)
      envs+=("CC_$v=$root/scripts/windows/clang-cl" "AR_$v=llvm-lib" "CFLAGS_$v=--target=$t")
      ;;
    cross-gcc/*)
      local cc
      case $t in
        aarch64-*) cc=aarch64-linux-gnu-gcc ;;
        armv7-*) cc=arm-linux-gnueabihf-gcc ;;
        *) cc=i686-linux-gnu-gcc ;;
      esac
      envs+=("CC_$v=$cc" "AR_$v=${cc%gcc}ar" "CARGO_TARGET_${v^^}_LINKER=$cc")
      envs_cc=$cc
      ;;
  esac
}

# cargo's --target and output directory for a target: the host's builds go where a plain
# `cargo build` puts them.
target_args() {
  if [ "$1" = "$host_triple" ]; then
    targs=()
    tdir=$target_dir
  else
    targs=(--target "$1")
    tdir=$target_dir/$1
  fi
}

# Builds the JIT's archive for target $1; sets lib (its path) and native (the system libraries
# rustc says it needs, as rustc prints them).
build_archive() {
  local t=$1 log
  target_env "$t"
  target_args "$t"
  echo "package: cargo rustc --profile jit -p jitarena --lib --crate-type staticlib ${targs[*]} (${envs[*]:-no extra environment})"
  if ! log=$(env "${envs[@]}" cargo rustc --profile jit -p jitarena --lib --crate-type staticlib \
    "${targs[@]}" -- --print native-static-libs 2>&1); then
    echo "$log" >&2
    die "building the archive for $t failed"
  fi
  native=$(sed -n 's/^note: native-static-libs: //p' <<<"$log" | tail -n1)
  [ -n "$native" ] || {
    echo "$log" >&2
    die "rustc named no native-static-libs for $t"
  }
  case $t in
    *-msvc) lib=$tdir/jit/jitarena.lib ;;
    *) lib=$tdir/jit/libjitarena.a ;;
  esac
  [ -s "$lib" ] || die "$lib is missing after the build"
}

# Builds the command, jitarena, for target $1; sets command (its path).
build_command() {
  local t=$1
  target_env "$t"
  target_args "$t"
  echo "package: cargo build --release -p jitarena-tools --bin jitarena ${targs[*]}"
  env "${envs[@]}" cargo build --quiet --release -p jitarena-tools --bin jitarena "${targs[@]}" ||
    die "building the command (jitarena) for $t failed"
  command=$tdir/release/jitarena
  case $t in *-windows-*) command+=.exe ;; esac
  [ -s "$command" ] || die "$command is missing after the build"
}

# rustc's native-static-libs as link items, one a line: the C runtime left out (every C
# compiler links it on its own: -lc and libgcc's -lgcc_s on Linux, the CRT of /MT that
# /defaultlib:libcmt names on MSVC), -lNAME and NAME.lib as NAME, "-framework NAME" kept whole.
link_items() {
  local words=($1) i=0 w
  while [ $i -lt ${#words[@]} ]; do
    w=${words[$i]}
    i=$((i + 1))
    case $w in
      -framework)
        echo "-framework ${words[$i]}"
        i=$((i + 1))
        ;;
      -lc | -lgcc_s | /defaultlib:* | -defaultlib:*) ;;
      -l*) echo "${w#-l}" ;;
      *.lib) echo "${w%.lib}" ;;
      *) echo "$w" ;;
    esac
  done
}

cmake_list() {
  local IFS=';'
  echo "$*"
}

# Fills a template: @NAME@ with the value of the variable t_NAME.
fill() {
  "$python" - "$1" "$2" <<'EOF'
import os, re, sys
src, dst = sys.argv[1], sys.argv[2]
text = open(src, encoding="utf-8").read()
def value(m):
    name = "t_" + m.group(1)
    if name not in os.environ:
        sys.exit(f"package: {src}: no value for @{m.group(1)}@")
    return os.environ[name]
open(dst, "w", encoding="utf-8", newline="\n").write(re.sub(r"@([A-Z_]+)@", value, text))
EOF
}

# ---- one package -------------------------------------------------------------------------
summary=()
package() {
  local rid=$1 name stage archive gnu_lib="" msvc_lib="" gnu_libs=() msvc_libs=() cmd_name
  local gnu_native="" msvc_native=""
  why_not "$rid"
  name=jitarena-$version-$rid
  echo "package: $rid ($triple, $how)"
  need_rustup_target "$triple"

  case $how in
    mingw)
      # The GNU archive and the command from mingw-w64; the MSVC archive compiled by clang-cl
      # when it is here (a JIT built by MSVC links it; nothing links it here).
      need_mingw
      need_rustup_target x86_64-pc-windows-gnu
      build_archive x86_64-pc-windows-gnu
      gnu_lib=$lib gnu_native=$native
      mapfile -t gnu_libs < <(link_items "$native")
      if command -v clang >/dev/null && command -v llvm-lib >/dev/null; then
        build_archive "$triple"
        msvc_lib=$lib msvc_native=$native
        mapfile -t msvc_libs < <(link_items "$native")
      else
        echo "package: win-x64: no clang and llvm-lib here: the package has no jitarena.lib (MSVC)"
      fi
      build_command x86_64-pc-windows-gnu
      ;;
    msvc)
      build_archive "$triple"
      msvc_lib=$lib msvc_native=$native
      mapfile -t msvc_libs < <(link_items "$native")
      build_command "$triple"
      ;;
    *)
      build_archive "$triple"
      gnu_lib=$lib gnu_native=$native
      mapfile -t gnu_libs < <(link_items "$native")
      build_command "$triple"
      ;;
  esac

  stage=$target_dir/package/$rid/$name
  rm -rf "$target_dir/package/$rid"
  mkdir -p "$stage/include" "$stage/lib/cmake/jitarena" "$stage/lib/pkgconfig" "$stage/bin"
  cp include/jitarena.h include/jitarena.hpp "$stage/include/"
  [ -z "$gnu_lib" ] || cp "$gnu_lib" "$stage/lib/libjitarena.a"
  [ -z "$msvc_lib" ] || cp "$msvc_lib" "$stage/lib/jitarena.lib"
  cmd_name=jitarena
  case $rid in win-*) cmd_name=jitarena.exe ;; esac
  cp "$command" "$stage/bin/$cmd_name"
  chmod 755 "$stage/bin/$cmd_name"
  # The command without its debug information (the release profile's debug = 1): a quarter of
  # its size. The archive keeps its own, for the JIT's debugger; the JIT's build strips it.
  local strip_tool=""
  case $how/$rid in
    msvc/*) ;; # MSVC's debug information is in a .pdb, not in the .exe
    mingw/*) strip_tool=x86_64-w64-mingw32-strip ;;
    cross-gcc/*) strip_tool=${envs_cc%gcc}strip ;;
    *) strip_tool=strip ;;
  esac
  if [ -n "$strip_tool" ] && command -v "$strip_tool" >/dev/null; then
    "$strip_tool" --strip-debug "$stage/bin/$cmd_name" 2>/dev/null || strip -S "$stage/bin/$cmd_name"
  elif [ -n "$strip_tool" ]; then
    echo "package: no $strip_tool here: bin/$cmd_name keeps its debug information"
  fi

  local pc_libs=() item
  if [ -n "$gnu_lib" ]; then
    for item in "${gnu_libs[@]}"; do
      case $item in -framework*) pc_libs+=("$item") ;; *) pc_libs+=("-l$item") ;; esac
    done
  else
    for item in "${msvc_libs[@]}"; do pc_libs+=("$item.lib"); done
  fi
  export t_VERSION=$version t_VERSION_MAJOR=$major t_ABI_VERSION=$abi t_RID=$rid \
    t_RUST_TARGET=$triple t_CMAKE_SYSTEM=$system t_POINTER_SIZE=$ptr t_COMMAND=$cmd_name \
    t_GNU_LIB=${gnu_lib:+libjitarena.a} t_MSVC_LIB=${msvc_lib:+jitarena.lib} \
    t_GNU_SYSTEM_LIBS="$(cmake_list "${gnu_libs[@]}")" \
    t_MSVC_SYSTEM_LIBS="$(cmake_list "${msvc_libs[@]}")" t_PC_SYSTEM_LIBS="${pc_libs[*]}"
  if [ -z "$gnu_lib" ]; then
    t_RUST_TARGET=$triple
  elif [ -n "$msvc_lib" ]; then
    t_RUST_TARGET="$triple (jitarena.lib), x86_64-pc-windows-gnu (libjitarena.a, bin)"
  elif [ "$how" = mingw ]; then
    t_RUST_TARGET=x86_64-pc-windows-gnu
  fi
  fill packaging/jitarenaConfig.cmake.in "$stage/lib/cmake/jitarena/jitarenaConfig.cmake"
  fill packaging/jitarenaConfigVersion.cmake.in "$stage/lib/cmake/jitarena/jitarenaConfigVersion.cmake"
  fill packaging/jitarena.pc.in "$stage/lib/pkgconfig/jitarena.pc"

  # Relocatable: no text file names where it was built.
  local f
  for f in "$stage"/lib/cmake/jitarena/* "$stage"/lib/pkgconfig/*; do
    if grep -qF -e "$root" -e "$target_dir" -e "$stage" "$f"; then
      die "$f names a path of this machine"
    fi
  done

  case $rid in
    win-*) archive=$out/$name.zip ;;
    *) archive=$out/$name.tar.gz ;;
  esac
  "$python" - "$target_dir/package/$rid" "$name" "$archive" <<'EOF'
import hashlib, os, sys, tarfile, time, zipfile
base, name, archive = sys.argv[1:4]
# The same bytes for the same files: entries in name order, owner root, times fixed.
mtime = int(os.environ.get("SOURCE_DATE_EPOCH") or time.time())
entries = []
for dirpath, dirnames, filenames in os.walk(os.path.join(base, name)):
    dirnames.sort()
    rel = os.path.relpath(dirpath, base).replace(os.sep, "/")
    entries.append((rel, None))
    entries.extend((rel + "/" + f, os.path.join(dirpath, f)) for f in sorted(filenames))
tmp = archive + ".tmp"
if archive.endswith(".zip"):
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        stamp = time.gmtime(max(mtime, 315532800))[:6]
        for rel, path in entries:
            info = zipfile.ZipInfo(rel + ("/" if path is None else ""), stamp)
            mode = 0o755 if path is None or "/bin/" in rel else 0o644
            info.external_attr = ((0o040000 if path is None else 0o100000) | mode) << 16
            if path is None:
                z.writestr(info, b"")
            else:
                info.compress_type = zipfile.ZIP_DEFLATED
                with open(path, "rb") as f:
                    z.writestr(info, f.read())
else:
    import gzip
    with open(tmp, "wb") as raw, gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=mtime) as gz:
        with tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
            for rel, path in entries:
                info = tarfile.TarInfo(rel)
                info.mtime, info.uid, info.gid, info.uname, info.gname = mtime, 0, 0, "", ""
                if path is None:
                    info.type, info.mode = tarfile.DIRTYPE, 0o755
                    tar.addfile(info)
                else:
                    info.size = os.path.getsize(path)
                    info.mode = 0o755 if "/bin/" in rel else 0o644
                    with open(path, "rb") as f:
                        tar.addfile(info, f)
os.replace(tmp, archive)
digest = hashlib.sha256(open(archive, "rb").read()).hexdigest()
with open(archive + ".sha256", "w", newline="\n") as f:
    f.write(f"{digest}  {os.path.basename(archive)}\n")
EOF
  local size
  size=$(wc -c <"$archive" | tr -d ' ')
  summary+=("  $rid: $archive ($size bytes; sha256 $(cut -d' ' -f1 "$archive.sha256"))")
  summary+=("    lib/${gnu_lib:+libjitarena.a}${gnu_lib:+${msvc_lib:+ lib/}}${msvc_lib:+jitarena.lib}, bin/$cmd_name, include/, lib/cmake/jitarena/, lib/pkgconfig/")
  [ -z "$gnu_lib" ] || summary+=("    system libraries (libjitarena.a): ${gnu_libs[*]:-none} (rustc: $gnu_native)")
  [ -z "$msvc_lib" ] || summary+=("    system libraries (jitarena.lib): ${msvc_libs[*]:-none} (rustc: $msvc_native)")
}

for rid in "${wanted[@]}"; do
  package "$rid"
done
echo "package: jitarena $version (header ABI $abi): built ${wanted[*]}"
for line in "${summary[@]}"; do
  echo "$line"
done
not_built=()
for rid in "${ALL_RIDS[@]}"; do
  [[ " ${wanted[*]} " == *" $rid "* ]] || not_built+=("$rid")
done
[ ${#not_built[@]} = 0 ] || echo "package: not built by this run: ${not_built[*]}"
