# Shared setup of the benchmark scripts in bench/ (sourced, not run).
# It builds runner, the no-op agent and the tree generator into $BIN, and
# defines repo(), which makes a repository whose prompt is about 20 KB.
# RUNNER=/path/to/runner measures that binary instead of this checkout's
# (to compare two versions with the same scripts).

set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=$(mktemp -d "${TMPDIR:-/tmp}/runner-bench-bin.XXXXXX")
trap 'rm -rf "$BIN"' EXIT
(cd "$ROOT" && go build -o "$BIN/runner" ./cmd/runner && go build -o "$BIN/noopagent" ./bench/noopagent &&
	go build -o "$BIN/gentree" ./bench/gentree)
if [ -n "${RUNNER:-}" ]; then
	cp "$RUNNER" "$BIN/runner"
fi

# repo DIR NODES [EXTRA_LOOP_CONFIG]: a repository in DIR with a tree of
# NODES nodes, the no-op agent, no guards, and about 10 KB of assumptions.
repo() {
	mkdir -p "$1/.runner/state"
	"$BIN/gentree" "$2" "$1/.runner/tree.json"
	printf '[executor]\npreset = "command"\ncommand = ["%s"]\n\n[loop]\nmax_iterations = 1000000\n%s\n' \
		"$BIN/noopagent" "${3:-}" > "$1/.runner/config.toml"
	{
		printf '# Assumptions\n\n'
		i=0
		while [ $i -lt 120 ]; do
			echo "- [iteration $i, node n$i] assumption number $i about the project and its layout"
			i=$((i + 1))
		done
	} > "$1/.runner/state/assumptions.md"
}

# sleep_agent FILE: an agent that sleeps $BENCH_SLEEP seconds, writes
# the task's file and answers done; its start and end (date +%s%N) go to
# $BENCH_MARKS/<task>.start and .end, outside the repository (the agent
# inherits its runner's or worker's environment).
sleep_agent() {
	cat > "$1" <<'EOT'
#!/bin/sh
date +%s%N > "$BENCH_MARKS/$RUNNER_NODE_ID.start"
sleep "$BENCH_SLEEP"
echo "$RUNNER_NODE_ID" > "$RUNNER_NODE_ID.txt"
printf '{"status": "done", "summary": "wrote %s.txt"}\n' "$RUNNER_NODE_ID" > "$RUNNER_OUTPUT_FILE"
date +%s%N > "$BENCH_MARKS/$RUNNER_NODE_ID.end"
EOT
	chmod +x "$1"
}

machine() {
	echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(free -g | awk '/Mem/ {print $2}') GB RAM"
	echo "kernel:  $(uname -r); file system of $1: $(df -T "$1" | awk 'NR == 2 {print $2}') ($(findmnt -no OPTIONS -T "$1"))"
	echo "load:    $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min)"
}
