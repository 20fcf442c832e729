#!/usr/bin/env bash
# Merges the replay shards a CI matrix uploaded into one log per collection and side, in the
# layout `jitarena memdiff --base-root OUT/base --diff-root OUT/diff` reads:
#
#   merge_shards.sh SHARDS_DIR OUT_DIR COUNT [PLATFORM]
#
# SHARDS_DIR holds one directory per downloaded artifact, each with base/COLLECTION/SHARD.jas and
# diff/COLLECTION/SHARD.jas, or, with PLATFORM, PLATFORM/base/COLLECTION/SHARD.jas and
# PLATFORM/diff/COLLECTION/SHARD.jas: a pipeline that replays on several platforms names the
# platform inside each artifact, so that one platform's shards are found by name, whatever else
# was downloaded beside them (Azure downloads every artifact of the run). Writes
# OUT_DIR/base/COLLECTION/COLLECTION.jas and the same under OUT_DIR/diff. Every collection must have exactly the shards 0..COUNT-1 on each side: a missing
# one (a replay job that uploaded nothing) or a stray one fails the merge, after every collection
# is merged, instead of silently shrinking the collection on both sides (which memdiff's coverage
# check, comparing the two sides, cannot see). Needs `jitarena` on PATH.
set -euo pipefail
shopt -s nullglob

# A platform is one directory name: not empty, no slash, not . or ..
if [ $# -lt 3 ] || [ $# -gt 4 ] || ! [[ $3 =~ ^[1-9][0-9]*$ ]] ||
  { [ $# -eq 4 ] && [[ -z $4 || $4 == */* || $4 == . || $4 == .. ]]; }; then
  echo "usage: merge_shards.sh SHARDS_DIR OUT_DIR COUNT [PLATFORM]" >&2
  exit 2
fi
in=$1 out=$2 count=$3
# Where each artifact keeps its sides: directly, or under the platform's name.
sub=${4:+$4/}

names=()
for dir in "$in"/*/"$sub"base/*/ "$in"/*/"$sub"diff/*/; do
  names+=("$(basename "$dir")")
done
if [ ${#names[@]} -eq 0 ]; then
  echo "merge_shards: $in holds no shards (expected $in/ARTIFACT/${sub}base/COLLECTION/SHARD.jas)" >&2
  exit 2
fi
mapfile -t collections < <(printf '%s\n' "${names[@]}" | sort -u)

bad=0
for c in "${collections[@]}"; do
  for side in base diff; do
    logs=()
    for ((s = 0; s < count; s++)); do
      found=("$in"/*/"$sub$side/$c/$s.jas")
      if [ ${#found[@]} -eq 1 ]; then
        logs+=("${found[0]}")
      elif [ ${#found[@]} -eq 0 ]; then
        echo "merge_shards: collection $c: no $side log for shard $s of $count" >&2
        bad=1
      else
        echo "merge_shards: collection $c: shard $s's $side log is in ${#found[@]} artifacts: ${found[*]}" >&2
        bad=1
      fi
    done
    all=("$in"/*/"$sub$side/$c"/*)
    if [ ${#all[@]} -ne ${#logs[@]} ]; then
      echo "merge_shards: collection $c: $side has ${#all[@]} files where $count shards 0..$((count - 1)) were expected: ${all[*]}" >&2
      bad=1
    fi
    mkdir -p "$out/$side/$c"
    if [ ${#logs[@]} -gt 0 ]; then
      jitarena merge -o "$out/$side/$c/$c.jas" "${logs[@]}"
    fi
  done
done
echo "merge_shards: ${4:+platform $4: }${#collections[@]} collections (${collections[*]}), $count shards each, into $out/base and $out/diff"
exit $bad
