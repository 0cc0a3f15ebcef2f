#!/bin/sh
# Workers on Temporal (SPEC §22): eight independent tasks, an agent that
# sleeps S seconds, writes <task>.txt and says done, a no-op guard, run by
# a coordinator through a Temporal dev server on this machine: once with
# one worker, then with two (each --slots 1, engine.parallel = 8), every
# input and output signed with an engine key (engine.key_file). It
# prints both wall times, their ratio (target: two workers take at most
# 0.6 of one worker's time; the ideal is 0.5), and per task the dispatch
# overhead on each side of the agent:
#   submit  the iteration begun on the coordinator (meta.json's
#           started_at: the prompt is built, the checkpoint pushed, the
#           workflow submitted) → the agent started on a worker;
#   land    the agent's exit on the worker → the task recorded on the
#           coordinator (finished_at: the work pushed and fetched, the
#           guards' results sent back, the commit on the run branch);
#   wait    of submit, the time the task waited for a free worker (the
#           previous agent's exit on the worker that took it), so that
#           submit - wait is the overhead itself.
#
#	[TEMPORAL=path] [KEEP=1] bench/engine.sh [S]   (default 5; needs git and jq)
. "$(dirname "$0")/lib.sh"
S=${1:-5}
TASKS=8
if [ -z "${TEMPORAL:-}" ]; then
	TEMPORAL=$(command -v temporal || echo "$(go env GOPATH)/bin/temporal")
fi
[ -x "$TEMPORAL" ] || { echo "no temporal CLI: go install github.com/temporalio/cli/cmd/temporal@v1.5.1"; exit 1; }
D=$(mktemp -d "${TMPDIR:-/tmp}/runner-bench.XXXXXX")
PORT=$((20000 + $(od -An -N2 -tu2 /dev/urandom) % 20000))
WORKERS=
cleanup() {
	[ -n "$WORKERS" ] && kill $WORKERS 2>/dev/null
	[ -n "${SERVER:-}" ] && kill "$SERVER" 2>/dev/null && wait "$SERVER" 2>/dev/null
	rm -rf "$BIN"
	if [ -n "${KEEP:-}" ]; then echo "kept: $D"; else rm -rf "$D"; fi
}
trap cleanup EXIT
"$TEMPORAL" server start-dev --headless --ip 127.0.0.1 --port "$PORT" --http-port $((PORT + 1)) --metrics-port $((PORT + 2)) \
	--db-filename "$D/temporal.db" --log-level error > "$D/server.log" 2>&1 &
SERVER=$!
i=0
until "$TEMPORAL" operator cluster health --address "127.0.0.1:$PORT" > /dev/null 2>&1; do
	i=$((i + 1)); [ $i -lt 300 ] || { echo "the dev server did not start:"; cat "$D/server.log"; exit 1; }
	sleep 0.2
done

sleep_agent "$D/agent.sh"
(umask 077 && head -c 32 /dev/urandom | base64 > "$D/engine.key")
T=$D/template
mkdir -p "$T/.runner"
printf '.runner/runs/\n.runner/context/\n.runner/state/\n.runner/lock\n' > "$T/.gitignore"
{
	printf '{"version": 1, "root": {"id": "job", "title": "Job", "children": [\n'
	i=1
	while [ $i -le $TASKS ]; do
		printf '  {"id": "t%d", "title": "Write t%d.txt"}%s\n' $i $i "$([ $i -lt $TASKS ] && echo ,)"
		i=$((i + 1))
	done
	printf ']}}\n'
} > "$T/.runner/tree.json"
(cd "$T" && git init -q -b main && git config user.name Bench && git config user.email bench@example.com &&
	git add -A && git commit -qm 'the project')

machine "$D"
echo "temporal: $("$TEMPORAL" --version); $TASKS independent tasks; agent sleeps ${S} s; guard \`true\`"

# run NAME WORKERS: a fresh coordinator repository and remote, WORKERS
# workers, runner run; $D/NAME/wall gets the wall time in ms.
run() {
	W=$D/$1
	mkdir -p "$W/marks"
	cp -a "$T" "$W/repo"
	git init -q --bare "$W/remote.git"
	printf '[executor]\npreset = "command"\ncommand = ["%s"]\ntimeout = "10m"\n\n[loop]\nmax_iterations = 100\n\n[verify]\npreflight = false\n\n[[guard]]\nname = "noop"\nrun = "true"\n\n[engine]\naddress = "127.0.0.1:%s"\ntask_queue = "%s"\nremote = "%s"\nparallel = 8\nkey_file = "%s"\n' \
		"$D/agent.sh" "$PORT" "$1" "$W/remote.git" "$D/engine.key" > "$W/repo/.runner/config.toml"
	k=1
	WORKERS=
	while [ $k -le "$2" ]; do
		BENCH_MARKS=$W/marks BENCH_SLEEP=$S RUNNER_SANDBOX_WRITABLE=$W/marks "$BIN/runner" --dir "$W/w$k" worker \
			--address "127.0.0.1:$PORT" --task-queue "$1" --name "w$k" --key-file "$D/engine.key" > "$W/w$k.log" 2>&1 &
		WORKERS="$WORKERS $!"
		k=$((k + 1))
	done
	t0=$(date +%s%N)
	(cd "$W/repo" && "$BIN/runner" run > "$W/out" 2>&1) || { echo "runner run failed:"; cat "$W/out"; exit 1; }
	t1=$(date +%s%N)
	kill -INT $WORKERS 2>/dev/null
	for pid in $WORKERS; do wait "$pid" 2>/dev/null; done
	WORKERS=
	echo $(((t1 - t0) / 1000000)) > "$W/wall"
	done=$(git -C "$W/repo" ls-tree --name-only runner/job | grep -c '^t[0-9]*\.txt$' || true)
	[ "$done" -eq $TASKS ] || { echo "$done of $TASKS tasks on the run branch:"; cat "$W/out"; exit 1; }
}

# report NAME: per task, submit (begun → agent started), wait (of it, for
# a free worker), land (agent exit → recorded), in ms.
report() {
	W=$D/$1
	for m in "$W"/repo/.runner/runs/*/meta.json; do
		node=$(jq -r .node "$m")
		echo "$node $(jq -r .worker "$m") $(date -d "$(jq -r .started_at "$m")" +%s%N) $(cat "$W/marks/$node.start") $(cat "$W/marks/$node.end") $(date -d "$(jq -r .finished_at "$m")" +%s%N)"
	done | sort -k4n | awk '
		{ w = $2; free = last[w] > $3 ? last[w] : $3; sub_ = ($4 - $3) / 1e6; wait = (free - $3) / 1e6; land = ($6 - $5) / 1e6
		  last[w] = $5; ss += sub_ - wait; sl += land; n++
		  printf "    %-3s %-8s submit %6.0f ms (wait %6.0f ms)  land %5.0f ms\n", $1, substr(w, length(w)), sub_, wait, land }
		END { printf "    mean overhead: submit %.0f ms (waits for a worker aside), land %.0f ms\n", ss / n, sl / n }'
}

run one 1
run two 2
a=$(cat "$D/one/wall")
b=$(cat "$D/two/wall")
echo "one worker: $a ms; two workers: $b ms; ratio $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", b / a }') (target <= 0.6; ideal 0.5)"
echo "  one worker:"
report one
echo "  two workers:"
report two
echo "load:    $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min) at the end"
