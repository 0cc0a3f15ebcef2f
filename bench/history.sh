#!/bin/sh
# `runner status` and `runner show` after a long run: runner runs N
# iterations (default 2000) with the no-op agent on a 10,000-node tree,
# then hyperfine times status, status --json and show. Run it twice to
# compare: KEEP_RUNS=100 bench/history.sh sets loop.keep_runs. It also
# prints the disk space the run left in .runner/.
#
#	[KEEP_RUNS=K] bench/history.sh [N]
. "$(dirname "$0")/lib.sh"
N=${1:-2000}
D=$(mktemp -d "${TMPDIR:-/tmp}/runner-bench.XXXXXX")
trap 'rm -rf "$BIN" "$D"' EXIT
repo "$D" 10000 "${KEEP_RUNS:+keep_runs = $KEEP_RUNS}"
machine "$D"
cd "$D"
t0=$(date +%s%N)
"$BIN/runner" run --max-iterations "$N" > /dev/null 2>&1 || [ $? -eq 4 ]
t1=$(date +%s%N)
echo "ran $N iterations in $(( (t1 - t0) / 1000000 )) ms; keep_runs = ${KEEP_RUNS:-0}"
echo "run folders: $(ls .runner/runs | wc -l); .runner/runs: $(du -sh .runner/runs | cut -f1); journal: $(du -h .runner/state/journal.jsonl | cut -f1)"
hyperfine -N --warmup 3 --runs 30 --export-markdown "$D/status.md" \
	"$BIN/runner status" "$BIN/runner status --json" "$BIN/runner show" > /dev/null
sed "s|$BIN/||g" "$D/status.md"
