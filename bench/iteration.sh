#!/bin/sh
# Per-iteration overhead of `runner run` against a bare shell loop, both
# measured in the same run by hyperfine: `runner run --max-iterations N`
# on a 1,000-node tree with the no-op agent (prompt of about 20 KB, no
# guards), and a shell loop piping a copy of that prompt into the same
# agent N times. The repository's .runner/ (the tree, and the run state
# where the runner keeps the tasks' statuses) is put back as it was before
# every timed run, so each run does N full iterations. The overhead is the
# difference of the two means divided by N.
#
#	bench/iteration.sh [N] [RUNS]     (defaults 200 and 10; TMPDIR picks
#	                                   the file system)
#
# With BENCH_GIT=1 the repository is a git repository with a commit: the
# agent then works in a linked worktree, confined (SPEC §19), and each
# iteration also pays the git checkpoint. RUNNER_SANDBOX_WITHOUT (see
# internal/proc) leaves layers of the agent's room out, to measure one.
. "$(dirname "$0")/lib.sh"
N=${1:-200}
RUNS=${2:-10}
D=$(mktemp -d "${TMPDIR:-/tmp}/runner-bench.XXXXXX")
trap 'rm -rf "$BIN" "$D" "$D.pristine" "$D.runner-worktrees"' EXIT
repo "$D" 1000
machine "$D"
cd "$D"
if [ "${BENCH_GIT:-}" = 1 ]; then
	printf '.runner/runs/\n.runner/context/\n.runner/state/\n.runner/lock\n.runner/tree.json\n' > .gitignore
	git init -q && git add -A && git -c user.name=bench -c user.email=b@example.com commit -qm bench
	echo "git:     the agent works in a worktree, confined (RUNNER_SANDBOX_WITHOUT=${RUNNER_SANDBOX_WITHOUT:-})"
fi
cp -a .runner "$D.pristine"
"$BIN/runner" run --max-iterations 1 > /dev/null 2>&1 || true
cp .runner/runs/000001/prompt.md prompt.md
printf 'rm -rf "%s/.runner" && cp -a "%s.pristine" "%s/.runner"\n' "$D" "$D" "$D" > prepare.sh
cat > loop.sh <<EOT
i=0
while [ \$i -lt $N ]; do
	"$BIN/noopagent" < prompt.md > /dev/null
	i=\$((i + 1))
done
EOT
echo "prompt:  $(wc -c < prompt.md) bytes; $N iterations per timed run, $RUNS runs"
hyperfine -N -i --runs "$RUNS" --export-csv times.csv --export-markdown times.md \
	--prepare "sh $D/prepare.sh" \
	-n "runner run --max-iterations $N" "$BIN/runner run --max-iterations $N" \
	-n "shell loop of $N agents" "sh loop.sh" > /dev/null 2>&1
cat times.md
awk -F, -v n="$N" 'NR == 2 { r = $2; rs = $3 } NR == 3 { s = $2; ss = $3 }
	END {
		printf "runner: %.2f ms per iteration (%.0f iterations/s)\n", 1000 * r / n, n / r
		printf "shell:  %.2f ms per iteration\n", 1000 * s / n
		printf "overhead: %.2f ms per iteration (± %.2f ms, from the standard deviations)\n", 1000 * (r - s) / n, 1000 * (rs + ss) / n
	}' times.csv
