#!/bin/sh
# `runner next` on a large tree: hyperfine for the time, /usr/bin/time for
# the peak memory (maximum resident set size). The tree has N nodes
# (default 100000) with nine tenths of its leaves done, so that selection
# walks most of it; see bench/gentree.
#
#	bench/next.sh [N]
. "$(dirname "$0")/lib.sh"
N=${1:-100000}
D=$(mktemp -d "${TMPDIR:-/tmp}/runner-bench.XXXXXX")
trap 'rm -rf "$BIN" "$D"' EXIT
repo "$D" 1
"$BIN/gentree" -done 0.9 "$N" "$D/.runner/tree.json"
machine "$D"
echo "tree:    $N nodes, $(du -h "$D/.runner/tree.json" | cut -f1)"
cd "$D"
"$BIN/runner" next
hyperfine -N --warmup 2 --runs 20 --export-markdown "$D/next.md" "$BIN/runner next" > /dev/null
sed "s|$BIN/||g" "$D/next.md"
peak=0
for i in 1 2 3 4 5; do
	kb=$(/usr/bin/time -f %M "$BIN/runner" next 2>&1 > /dev/null | tail -1)
	[ "$kb" -gt "$peak" ] && peak=$kb
done
echo "peak memory (max RSS of 5 runs): $((peak / 1024)) MB"
