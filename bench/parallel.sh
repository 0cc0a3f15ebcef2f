#!/bin/sh
# Parallel slots (SPEC §14): eight independent tasks (siblings, no
# depends_on), an agent that sleeps S seconds, writes <task>.txt and says
# done, a no-op guard (`true`), git checkpoints on, verify.preflight off.
# `runner run --parallel 1` and `runner run --parallel N` (default 4) run
# one after the other on fresh copies of the same repository, PAIRS times
# (default 1), and the script prints both wall times and their ratio
# (target: N = 4 takes at most 1/3 of N = 1; the physical bound is 1/4).
#
# FILES (default 0) adds that many tracked files of about 400 bytes (100
# folders), as the 10,000-file repository of the integration target
# (at most 100 ms per task, guards aside). Per task, from each run's
# meta.json and marks the agent writes outside the repository (its start
# and its exit, date +%s%N):
#   after   the agent's exit → the task recorded (meta.json's finished_at,
#           after its commit is on the run branch): the guards, the commit,
#           with slots the integration and the worktrees brought to the new
#           checkpoint, and any wait for another slot's turn;
#   queue   the same, counted only from when the task could go first: the
#           later of its agent's exit and the previous task's record. With
#           slots, integrations are one at a time, so this is the time the
#           run branch's single lane spends on each task;
#   guards  the guards' own time in it (meta.json's guards, and the run of
#           the guards on the integrated result: runs/N/integration/).
# It also prints how long the run took before its first agent started
# (opening the slots' worktrees) and after its last record. WARM=1 runs
# each copy once first, untimed, on eight other tasks whose agent does not
# sleep: the timed run then finds the slots' worktrees there, as every run
# after a repository's first does (without it, each timed run with slots
# creates its worktrees, a checkout of the whole repository each). TRACE=1 runs
# git with GIT_TRACE2_EVENT and prints the git time by subcommand; KEEP=1
# keeps the temporary folder (the runs' repositories, marks and traces).
#
#	[FILES=10000] [PAIRS=1] [WARM=1] [TRACE=1] [KEEP=1] bench/parallel.sh [S] [N]
#	                                   (defaults 2 and 4; needs git and jq)
. "$(dirname "$0")/lib.sh"
S=${1:-2}
N=${2:-4}
FILES=${FILES:-0}
PAIRS=${PAIRS:-1}
TASKS=8
D=$(mktemp -d "${TMPDIR:-/tmp}/runner-bench.XXXXXX")
if [ -n "${KEEP:-}" ]; then
	trap 'rm -rf "$BIN"; echo "kept: $D"' EXIT
else
	trap 'rm -rf "$BIN" "$D"' EXIT
fi

sleep_agent "$D/agent.sh"

# The repository every run starts from.
T=$D/template
mkdir -p "$T/.runner"
if [ "$FILES" -gt 0 ]; then
	(cd "$T" && awk -v n="$FILES" 'BEGIN {
		line = "the quick brown fox jumps over the lazy dog, and the runner measures what it costs\n"
		for (i = 0; i < n; i++) {
			d = sprintf("d%02d", i % 100)
			if (i < 100) system("mkdir -p " d)
			f = sprintf("%s/f%05d.txt", d, i)
			printf "file %d\n%s%s%s%s", i, line, line, line, line > f
			close(f)
		}
	}')
fi
printf '.runner/runs/\n.runner/context/\n.runner/state/\n.runner/lock\n' > "$T/.gitignore"
{
	printf '{"version": 1, "root": {"id": "job", "title": "Job", "children": [\n'
	if [ -n "${WARM:-}" ]; then
		i=1
		while [ $i -le $TASKS ]; do
			printf '  {"id": "w%d", "title": "Write w%d.txt"},\n' $i $i
			i=$((i + 1))
		done
	fi
	i=1
	while [ $i -le $TASKS ]; do
		printf '  {"id": "t%d", "title": "Write t%d.txt"}%s\n' $i $i "$([ $i -lt $TASKS ] && echo ,)"
		i=$((i + 1))
	done
	printf ']}}\n'
} > "$T/.runner/tree.json"
printf '[executor]\npreset = "command"\ncommand = ["%s"]\ntimeout = "10m"\n\n[loop]\nmax_iterations = 100\n\n[git]\ncheckpoint = true\n\n[verify]\npreflight = false\n\n[[guard]]\nname = "noop"\nrun = "true"\n' \
	"$D/agent.sh" > "$T/.runner/config.toml"
(cd "$T" && git init -q -b main && git config user.name Bench && git config user.email bench@example.com &&
	git add -A && git -c gc.auto=0 commit -qm 'the project' && git gc -q) # packed, as a real repository is, and no auto gc in the background

machine "$D"
echo "repo:    $(git -C "$T" ls-files | wc -l) tracked files; $TASKS independent tasks; agent sleeps ${S} s; guard \`true\`; git $(git --version | cut -d' ' -f3)"

# run NAME SLOTS: a fresh copy of the template in $D/NAME/repo, then
# runner run --parallel SLOTS in it, timed; $D/NAME/wall gets the wall time
# in ms, its start and its end (ns since the epoch).
run() {
	W=$D/$1
	rm -rf "$W" # the repository, its slots' worktrees beside it, the marks
	mkdir -p "$W/marks"
	cp -a "$T" "$W/repo"
	git -C "$W/repo" status --porcelain > /dev/null # refresh the copied index's file stats
	cd "$W/repo"
	if [ -n "${WARM:-}" ]; then
		BENCH_MARKS=$W/marks RUNNER_SANDBOX_WRITABLE=$W/marks BENCH_SLEEP=0 "$BIN/runner" run --parallel "$2" --max-iterations $TASKS > "$W/warm.out" 2>&1 ||
			[ $? -eq 4 ] || {
			echo "warm-up: runner run --parallel $2 failed:"
			cat "$W/warm.out"
			exit 1
		}
		git -C "$W/repo" status --porcelain > /dev/null
	fi
	t0=$(date +%s%N)
	if [ -n "${TRACE:-}" ]; then
		export GIT_TRACE2_EVENT="$W/trace2.json"
	fi
	BENCH_MARKS=$W/marks RUNNER_SANDBOX_WRITABLE=$W/marks BENCH_SLEEP=$S "$BIN/runner" run --parallel "$2" > "$W/out" 2>&1 || {
		echo "runner run --parallel $2 failed (exit $?):"
		cat "$W/out"
		exit 1
	}
	t1=$(date +%s%N)
	unset GIT_TRACE2_EVENT
	cd "$D"
	echo $(((t1 - t0) / 1000000)) "$t0" "$t1" > "$W/wall"
	done=$(git -C "$W/repo" ls-tree --name-only "runner/job" | grep -c '^t[0-9]*\.txt$' || true)
	if [ "$done" -ne $TASKS ]; then
		echo "runner run --parallel $2: $done of $TASKS task files on the run branch:"
		cat "$W/out"
		exit 1
	fi
}

# tasks NAME: one line per task, in the order they were recorded:
# task slot start end finished guards_ms (times in ns since the epoch).
tasks() {
	W=$D/$1
	for m in "$W"/repo/.runner/runs/*/meta.json; do
		node=$(jq -r .node "$m")
		case $node in t*) ;; *) continue ;; esac # not a warm-up task
		it=$(jq -r .iteration "$m")
		fin=$(date -d "$(jq -r .finished_at "$m")" +%s%N)
		g=$(jq '[.guards[]?.duration_ms] | add // 0' "$m")
		ig=$(dirname "$m")/integration/guard.log
		if [ -f "$ig" ]; then
			g=$((g + $(awk '/^=== guard .*, exit / { d = $(NF - 1); v = d + 0
				if (d ~ /ms$/) t += v; else if (d ~ /[0-9]s$/) t += v * 1000 }
				END { print int(t) }' "$ig")))
		fi
		echo "$node $(jq -r '.slot // 0' "$m") $(cat "$W/marks/$node.start") $(cat "$W/marks/$node.end") $fin $g $it $(jq -r .outcome "$m")"
	done | sort -k5n > "$W/tasks"
}

# report NAME: the per-task figures of a run.
report() {
	W=$D/$1
	read -r _ t0 t1 < "$W/wall"
	awk -v t0="$t0" -v t1="$t1" '
		{ task[NR] = $1; slot[NR] = $2; st[NR] = $3; en[NR] = $4; fin[NR] = $5; g[NR] = $6; out[NR] = $8 }
		END {
			first = st[1]; prev = 0
			for (i = 1; i <= NR; i++) if (st[i] < first) first = st[i]
			printf "    %-4s %4s %9s %9s %9s %9s %7s  %s\n", "task", "slot", "start", "agent", "after", "queue", "guards", "outcome"
			for (i = 1; i <= NR; i++) {
				a = (fin[i] - en[i]) / 1e6
				from = en[i] > prev ? en[i] : prev
				q = (fin[i] - from) / 1e6
				sa += a; sq += q; sg += g[i]
				printf "    %-4s %4s %7.0f ms %7.0f ms %7.0f ms %7.0f ms %4d ms  %s\n", task[i], slot[i], (st[i] - t0) / 1e6, (en[i] - st[i]) / 1e6, a, q, g[i], out[i]
				prev = fin[i]
			}
			printf "    mean after %.0f ms, queue %.0f ms, guards %.0f ms per task; before the first agent %.0f ms, after the last record %.0f ms\n",
				sa / NR, sq / NR, sg / NR, (first - t0) / 1e6, (t1 - fin[NR]) / 1e6
		}' "$W/tasks"
	if [ -f "$W/trace2.json" ]; then
		echo "    git, by subcommand (GIT_TRACE2_EVENT: each process's own elapsed time; summed, so overlapping runs add up):"
		jq -rs '
			([.[] | select(.event == "cmd_name")] | map({key: .sid, value: .name}) | from_entries) as $cmd
			| [.[] | select(.event == "exit" and (.sid | test("/") | not))] | group_by($cmd[.sid] // "?")
			| map({c: ($cmd[.[0].sid] // "?"), n: length, t: (map(.t_abs) | add)}) | sort_by(-.t)[]
			| "      \(.c): \(.n) runs, \(.t * 1000 | floor) ms"' "$W/trace2.json"
	fi
}

ROUNDS=$(((TASKS + N - 1) / N))
ratios=
p=1
while [ "$p" -le "$PAIRS" ]; do
	run n1 1
	tasks n1
	run "n$N" "$N"
	tasks "n$N"
	w1=$(cut -d' ' -f1 "$D/n1/wall")
	wn=$(cut -d' ' -f1 "$D/n$N/wall")
	ratio=$(awk -v a="$wn" -v b="$w1" 'BEGIN { printf "%.3f", a / b }')
	ratios="$ratios $ratio"
	echo "pair $p: --parallel 1: $w1 ms; --parallel $N: $wn ms; ratio N$N/N1 = $ratio (target <= 0.333; ideal $(awk -v r=$ROUNDS -v t=$TASKS 'BEGIN { printf "%.3f", r / t }'))"
	echo "  --parallel 1: $(awk -v w="$w1" -v s="$S" -v t=$TASKS 'BEGIN { printf "%.0f", (w - t * s * 1000) / t }') ms per task beyond the agent's ${S} s"
	report n1
	echo "  --parallel $N: $(awk -v w="$wn" -v s="$S" -v r=$ROUNDS 'BEGIN { printf "%.0f", w - r * s * 1000 }') ms beyond $ROUNDS rounds of ${S} s"
	report "n$N"
	p=$((p + 1))
done
[ "$PAIRS" -gt 1 ] && echo "ratios N$N/N1:$ratios"
echo "load:    $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min) at the end"
