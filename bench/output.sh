#!/bin/sh
# What a flood of agent output costs the runner: one `runner run --once`
# whose agent (bench/fakeagent) prints BYTES of output, and the runner's
# own peak memory (VmHWM of its process, polled from /proc; the agent is
# not counted), its wall time and the size of every file of the run
# folder. MODE is the preset: command (64-byte text lines), codex or
# claude (about 1 KiB JSON event lines). LIMIT is executor.output_limit.
#
#	bench/output.sh [MODE] [BYTES] [LIMIT]   (defaults codex, 314572800, 8MiB)
. "$(dirname "$0")/lib.sh"
MODE=${1:-codex}
BYTES=${2:-314572800}
LIMIT=${3:-8MiB}
(cd "$ROOT" && go build -o "$BIN/fakeagent" ./bench/fakeagent)
D=$(mktemp -d "${TMPDIR:-/tmp}/runner-bench.XXXXXX")
trap 'rm -rf "$BIN" "$D"' EXIT
mkdir -p "$D/.runner"
printf '{"version": 1, "root": {"id": "job", "title": "Job", "children": [{"id": "only", "title": "Only"}]}}\n' > "$D/.runner/tree.json"
filler=json_filler
[ "$MODE" = command ] && filler=filler
printf '{"default": {"%s": %s, "usage": {"input_tokens": 1, "output_tokens": 1}, "message": {"status": "done", "summary": "printed"}}}\n' \
	"$filler" "$BYTES" > "$D/agent.json"
if [ "$MODE" = command ]; then
	exe="command = [\"$BIN/fakeagent\"]"
else
	exe="bin = \"$BIN/fakeagent\""
fi
printf '[executor]\npreset = "%s"\n%s\noutput_limit = "%s"\nenv = { FAKEAGENT_MODE = "%s", FAKEAGENT_SCRIPT = "%s" }\n' \
	"$MODE" "$exe" "$LIMIT" "$([ "$MODE" = command ] || echo "$MODE")" "$D/agent.json" > "$D/.runner/config.toml"
machine "$D"
cd "$D"
start=$(date +%s.%N)
"$BIN/runner" run --once > run.out 2>&1 &
pid=$!
peak=0
while kb=$(awk '/^VmHWM/ {print $2}' "/proc/$pid/status" 2>/dev/null) && [ -n "$kb" ]; do
	[ "$kb" -gt "$peak" ] && peak=$kb
	sleep 0.02
done
wait $pid || { cat run.out; exit 1; }
end=$(date +%s.%N)
echo "agent:   preset $MODE printing $BYTES bytes; output_limit $LIMIT"
echo "runner:  peak memory (VmHWM) $((peak / 1024)) MiB; $(echo "$end - $start" | bc) s for the iteration"
ls -l .runner/runs/000001 | awk 'NR > 1 {printf "         %10d  %s\n", $5, $9}'
