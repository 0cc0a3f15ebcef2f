#!/bin/bash
# Spend caps (README "Cost", SPEC §24) with the real codex and claude CLIs,
# offline, against the scripted mock model of shared/tools/mockllm: each
# scenario runs runner in a scratch git repository whose agent is scripted
# to run many shell commands, every model response reporting the same
# usage, and checks
#   - from the mock's request log, which model turns were asked for (none
#     after the one that reached the cap);
#   - from the runner's files, the stop it recorded (meta.json outcome
#     cost_cap and the cap hit, the task's status, the exit code).
# Scenarios: a task cap and the run cap, in tokens and in price, on each
# CLI; the ladder's rung per attempt (codex, then claude); the command
# preset (claude as a plain command), capped at the end of its run, with
# the notice at the run's start. It prints PASS/FAIL per scenario and
# exits 1 on any failure.
#
#	bench/realcli-caps.sh [MOCKLLM_DIR]
#
# MOCKLLM_DIR (the argument, or the variable) is the mock model's folder
# (default /work/shared/tools/mockllm). The CLIs are found as its README
# says: /tmp/agentclis/node_modules/.bin/{codex,claude}, or
# MOCKLLM_REAL_CODEX / MOCKLLM_REAL_CLAUDE. REALCLI_KEEP=1 keeps the work
# folder (the repositories, the runner's and the CLIs' output, each codex
# session log, the mock's request logs); REALCLI_ONLY=NAME runs the
# scenarios whose name contains NAME; REALCLI_FIXTURES=DIR writes there
# what the live usage readers parse, as the tests of internal/exec read it
# from testdata/real: Claude's stream-json of the command scenario (its
# assistant and result events) and Codex's session log of codex-task-cost
# (its function calls and usage lines), named by CLI version. Needs
# python3, git and jq.
. "$(dirname "$0")/lib.sh"
set +e
MOCK=${1:-${MOCKLLM_DIR:-/work/shared/tools/mockllm}}
MOCK=$(cd "$MOCK" 2>/dev/null && pwd) || { echo "realcli-caps: no mockllm folder at ${1:-${MOCKLLM_DIR:-/work/shared/tools/mockllm}}" >&2; exit 2; }
export MOCKLLM_REAL_CODEX=${MOCKLLM_REAL_CODEX:-/tmp/agentclis/node_modules/.bin/codex}
export MOCKLLM_REAL_CLAUDE=${MOCKLLM_REAL_CLAUDE:-/tmp/agentclis/node_modules/.bin/claude}
for f in "$MOCK/mockllm.py" "$MOCK/shims/codex" "$MOCK/shims/claude"; do
	[ -f "$f" ] || { echo "realcli-caps: $f is missing: is $MOCK the mockllm folder?" >&2; exit 2; }
done
for b in "$MOCKLLM_REAL_CODEX" "$MOCKLLM_REAL_CLAUDE"; do
	if [ ! -x "$b" ]; then
		echo "realcli-caps: $b is not installed; install the CLIs with" >&2
		echo "  mkdir -p /tmp/agentclis && cd /tmp/agentclis && npm install --no-audit --no-fund @openai/codex@0.169.0 @anthropic-ai/claude-code@2.1.328" >&2
		echo "or name them with MOCKLLM_REAL_CODEX / MOCKLLM_REAL_CLAUDE" >&2
		exit 2
	fi
done
for p in python3 git jq timeout; do
	command -v $p > /dev/null || { echo "realcli-caps: $p is not installed" >&2; exit 2; }
done

W=$(mktemp -d "${TMPDIR:-/tmp}/runner-realcli.XXXXXX")
SERVERS=""
cleanup() {
	for pid in $SERVERS; do
		kill "$pid" 2> /dev/null && wait "$pid" 2> /dev/null
	done
	if [ "${REALCLI_KEEP:-0}" = 1 ]; then
		echo "work folder kept: $W"
	else
		rm -rf "$W"
	fi
	rm -rf "$BIN"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "codex:  $("$MOCKLLM_REAL_CODEX" --version 2> /dev/null)"
echo "claude: $("$MOCKLLM_REAL_CLAUDE" --version 2> /dev/null)"
echo "work:   $W"

# A codex that keeps its session log: the runner gives each run a fresh
# CODEX_HOME and removes it afterwards, so this copies the log out
# (to a folder of the room's sandbox.writable) once codex has ended,
# stopped by the runner or not, to $REALCLI_SESSIONS.
mkdir -p "$W/keep"
cat > "$BIN/codex" << EOT
#!/bin/sh
trap : TERM INT
"$MOCK/shims/codex" "\$@"
rc=\$?
d=\$(mktemp -d "\$REALCLI_SESSIONS/codex-sessions.XXXXXX") && cp -r "\$CODEX_HOME/sessions/." "\$d/" 2> /dev/null
exit \$rc
EOT
chmod +x "$BIN/codex"

# turns N: N shell commands t1..tN, one per model turn. Each takes a
# second, as an agent's commands do: the runner stops the agent within
# milliseconds of the usage report that reaches a cap, and the command
# that response asked for runs meanwhile, so the next request does not
# come even on a loaded machine.
turns() {
	i=1
	sep=""
	while [ "$i" -le "$1" ]; do
		printf '%s"printf %s > t%s.txt; sleep 1"' "$sep" "$i" "$i"
		sep=", "
		i=$((i + 1))
	done
}

# Every model response of a scenario reports 1000 input tokens (400 of
# them cached) and 100 output: 1100 tokens a turn, and with the price
# below (10, 1 and 50 USD per million) $0.0114 a turn.
USAGE='{"input_tokens": 1000, "cached_input_tokens": 400, "output_tokens": 100}'
PRICE='price = { input_per_mtok = 10.0, cached_input_per_mtok = 1.0, output_per_mtok = 50.0 }'
DONE='"{\"status\":\"done\",\"summary\":\"scripted\"}"'

# mock NAME SCENARIO_JSON: starts a mock model for scenario NAME; sets URL.
mock() {
	mkdir -p "$W/$1"
	printf '%s\n' "$2" > "$W/$1/scenario.json"
	python3 "$MOCK/mockllm.py" --port 0 --port-file "$W/$1/port" --scenario "$W/$1/scenario.json" \
		--log "$W/$1/mockllm.jsonl" --exit-with-parent --max-lifetime 900 > "$W/$1/mockllm.out" 2>&1 &
	SERVERS="$SERVERS $!"
	for _ in $(seq 100); do
		[ -s "$W/$1/port" ] && break
		sleep 0.1
	done
	export MOCKLLM_URL="http://127.0.0.1:$(cat "$W/$1/port")"
}

# repo NAME CONFIG TREE: the scratch repository of scenario NAME.
repo() {
	R="$W/$1/repo"
	mkdir -p "$R/.runner"
	printf '%s\n' "$2" > "$R/.runner/config.toml"
	printf '%s\n' "$3" > "$R/.runner/tree.json"
	printf '.runner/runs/\n.runner/context/\n.runner/state/\n.runner/lock\n' > "$R/.gitignore"
	git -C "$R" init -q -b main && git -C "$R" add -A &&
		git -C "$R" -c user.name=Person -c user.email=p@example.com commit -qm 'the project'
}

# run: runner run in the scenario's repository, bounded; sets RC.
run() {
	export REALCLI_SESSIONS="$W/keep/$S"
	mkdir -p "$REALCLI_SESSIONS"
	(cd "$R" && timeout -k 10 420 "$BIN/runner" run > "$R/../run.out" 2> "$R/../run.err")
	RC=$?
}

# requests PATH: the model requests of the log whose path starts with PATH.
requests() { jq -c "select(.path | startswith(\"$1\")) | select(.plan != null)" "$W/$S/mockllm.jsonl"; }
# max_step PATH: the furthest turn asked for (0 is the first).
max_step() { requests "$1" | jq -s 'map(.step) | max // -1'; }
meta() { jq -r "$2" "$R/.runner/runs/$1/meta.json" 2> /dev/null; }
# status ID: the status of task ID in tree.json (open when it has none).
status() { jq -r "..|objects|select(.id==\"$1\")|.status // \"open\"" "$R/.runner/tree.json" | head -1; }
reason() { jq -r "..|objects|select(.id==\"$1\")|.blocked_reason // \"\"" "$R/.runner/tree.json" | head -1; }

PASSED=0
FAILED=0
S=""
WHY=""
want() { [ -z "$WHY" ] && ! eval "$1" && WHY="$2"; }
verdict() {
	if [ -z "$WHY" ]; then
		PASSED=$((PASSED + 1))
		echo "PASS $S: $1"
	else
		FAILED=$((FAILED + 1))
		echo "FAIL $S: $WHY"
		sed 's/^/    run: /' "$W/$S/run.out" | tail -5
		sed 's/^/    err: /' "$W/$S/run.err" | tail -5
	fi
}
begin() {
	S=$1
	WHY=""
	case $S in *"${REALCLI_ONLY:-}"*) return 0 ;; esac
	return 1
}

executor() { # executor PRESET: the [executor] lines of a preset
	case $1 in
	codex) printf 'preset = "codex"\nbin = "%s"\nargs = ["--sandbox", "danger-full-access"]\n' "$BIN/codex" ;;
	claude) printf 'preset = "claude"\nbin = "%s"\nargs = ["--dangerously-skip-permissions"]\n' "$MOCK/shims/claude" ;;
	esac
	printf 'timeout = "5m"\nidle_timeout = "3m"\nkill_grace = "5s"\n%s\n' "$PRICE"
}
TREE1='{"version": 1, "root": {"id": "app", "title": "App", "children": [{"id": "a", "title": "A"}]}}'
TREE2='{"version": 1, "root": {"id": "app", "title": "App", "children": [{"id": "a", "title": "A"}, {"id": "b", "title": "B"}]}}'
LONG="{\"scenarios\": [{\"name\": \"long\", \"match\": \".\", \"shell\": [$(turns 12)], \"final\": $DONE, \"usage\": $USAGE}]}"

# cap PRESET SCOPE UNIT SETTING VALUE: a cap reached at the third of
# twelve turns (3300 tokens, $0.0342). A task cap blocks the task (exit 3),
# the run's stops the run (exit 4) with the task still open.
cap() {
	begin "$1-$2-$3" || return 0
	key=$4
	case $1 in codex) api=/v1/responses ;; claude) api=/v1/messages ;; esac
	mock "$S" "$LONG"
	repo "$S" "[executor]
name = \"$1\"
$(executor "$1")
[loop]
${4#loop.} = $5
max_attempts = 3
[sandbox]
writable = [\"$W/keep\"]" "$TREE2"
	run
	used=$(meta 000001 '.cost_cap.used')
	if [ "$2" = task ]; then
		want '[ "$RC" = 3 ]' "exit $RC, want 3 (the task blocked)"
		want '[ "$(status a)" = blocked ]' "task a is $(status a), want blocked"
		want 'reason a | grep -q "^cost cap: "' "task a's blocked_reason \"$(reason a)\" does not say cost cap"
	else
		want '[ "$RC" = 4 ]' "exit $RC, want 4 (the run stopped at its cap)"
		want '[ "$(status a)" = open ]' "task a is $(status a), want open"
		want 'grep -q "reached $key" "$W/$S/run.err"' "stderr does not say the run reached $key"
		want '[ ! -e "$R/.runner/runs/000002" ]' "a second iteration ran after the run's cap"
	fi
	want '[ "$(meta 000001 .outcome)" = cost_cap ]' "meta.json outcome $(meta 000001 .outcome), want cost_cap"
	want '[ "$(meta 000001 .cost_cap.key)" = "$key" ]' "meta.json cost_cap.key $(meta 000001 .cost_cap.key), want $key"
	if [ "$3" = tokens ]; then
		want '[ "$used" = 3300 ]' "cost_cap.used $used, want 3300 tokens (three turns of 1100)"
	else
		want 'awk "BEGIN {exit !($used > 0.03419 && $used < 0.03421)}"' "cost_cap.used $used, want \$0.0342 (three turns of \$0.0114)"
	fi
	want '[ "$(max_step $api)" = 2 ]' "the furthest model turn asked for is $(($(max_step $api) + 1)), want 3 of 12"
	want '[ -e "$R/.runner/runs/000001/meta.json" ]' "no meta.json"
	caps=$(cd "$R" && "$BIN/runner" status --json | jq -c ".caps[] | select(.key == \"$key\") | .used")
	want '[ "$caps" = "$used" ]' "runner status says $key used ${caps:-nothing}, meta.json $used"
	verdict "stopped at turn $(($(max_step $api) + 1)) of 12 ($(requests $api | wc -l) model requests), $key used $used, exit $RC"
}

cap claude task tokens loop.task_max_tokens 3000
cap codex task cost loop.task_max_cost_usd 0.03
cap claude run cost loop.max_cost_usd 0.03
cap codex run tokens loop.max_tokens 3000

# The ladder: attempt 1 on small (codex) writes a state the guard
# refuses, attempt 2 on large (claude) the right one.
if begin ladder; then
	mock "$S" '{"scenarios": [{"name": "fix", "match": ".", "attempts": [
		{"shell": ["printf bad > state.txt"], "final": '"$DONE"'},
		{"shell": ["printf good > state.txt"], "final": '"$DONE"'}]}]}'
	repo "$S" "[executor]
name = \"small\"
$(executor codex)
[[fallback]]
name = \"large\"
$(executor claude)
[[guard]]
name = \"state\"
run = \"! grep -qs bad state.txt\"
[loop]
escalate = [\"small\", \"large\"]
max_attempts = 3
task_max_tokens = 100000
[sandbox]
writable = [\"$W/keep\"]" "$TREE1"
	run
	want '[ "$RC" = 0 ] && [ "$(status a)" = done ]' "exit $RC and task a $(status a), want 0 and done"
	want '[ "$(meta 000001 .rung.n)/$(meta 000001 .rung.executor)/$(meta 000001 .executor)" = 1/small/small ]' "attempt 1's rung: $(meta 000001 .rung)"
	want '[ "$(meta 000002 .rung.n)/$(meta 000002 .rung.executor)/$(meta 000002 .executor)" = 2/large/large ]' "attempt 2's rung: $(meta 000002 .rung)"
	want '[ "$(meta 000001 .outcome)" != done ] && [ "$(meta 000002 .outcome)" = done ]' "outcomes $(meta 000001 .outcome), $(meta 000002 .outcome); want not done, then done"
	want '[ "$(requests /v1/responses | jq -s "map(.plan.attempt) | unique | @csv")" = "\"1\"" ]' "codex's requests were not all attempt 1"
	want '[ "$(requests /v1/messages | jq -s "map(.plan.attempt) | unique | @csv")" = "\"2\"" ]' "claude's requests were not all attempt 2"
	want 'grep -q "on small (rung 1 of 2)" "$W/$S/run.out" && grep -q "on large (rung 2 of 2)" "$W/$S/run.out"' "the progress lines do not name the rungs"
	verdict "attempt 1 on $(meta 000001 .rung.executor) (rung $(meta 000001 .rung.n) of 2, $(meta 000001 .outcome)), attempt 2 on $(meta 000002 .rung.executor) (rung $(meta 000002 .rung.n) of 2, $(meta 000002 .outcome)), exit $RC"
fi

# The command preset (claude as a plain command) reports nothing while it
# works: the run says so at its start, the agent runs its six turns to
# the end, and the run's cap stops the run after it (exit 4), task b
# never started.
if begin command; then
	mock "$S" "{\"scenarios\": [{\"name\": \"six\", \"match\": \".\", \"shell\": [$(turns 6)], \"final\": $DONE, \"usage\": $USAGE}]}"
	repo "$S" "[executor]
preset = \"command\"
command = [\"$MOCK/shims/claude\", \"-p\", \"--output-format\", \"stream-json\", \"--verbose\", \"--dangerously-skip-permissions\"]
timeout = \"5m\"
[loop]
max_tokens = 3000" "$TREE2"
	run
	want '[ "$RC" = 4 ]' "exit $RC, want 4 (the run stopped at its cap)"
	want 'grep -q "command: applied at the end of each of its runs" "$W/$S/run.err"' "no start notice that the cap applies at the end"
	want '[ "$(max_step /v1/messages)" = 6 ]' "the furthest model turn asked for is $(($(max_step /v1/messages) + 1)), want all 7 (six commands and the final message)"
	want '[ -e "$R/.runner/runs/000001/meta.json" ] && [ ! -e "$R/.runner/runs/000002" ]' "want one iteration, task b never started"
	want '[ "$(status a)/$(status b)" = done/open ]' "tasks a and b are $(status a) and $(status b), want done and open"
	want '[ "$(meta 000001 ".usage.input_tokens + .usage.output_tokens")" = 7700 ]' "meta.json usage $(meta 000001 .usage), want 7700 tokens (seven turns of 1100)"
	want 'grep -q "reached loop.max_tokens" "$W/$S/run.err"' "stderr does not say the run reached loop.max_tokens"
	verdict "ran all $(($(max_step /v1/messages) + 1)) turns, then the run stopped: $(grep -o 'reached loop.max_tokens[^;]*' "$W/$S/run.err" | head -1); exit $RC"
fi

# fixture SRC DEST TYPES...: the lines of SRC whose event type (for a
# codex session log: the payload's, under event_msg and response_item) is
# one of TYPES, unchanged.
fixture() {
	python3 - "$@" << 'EOT'
import json, sys
src, dest, types = sys.argv[1], sys.argv[2], sys.argv[3:]
kept = []
for line in open(src, encoding="utf-8"):
    try:
        ev = json.loads(line)
    except ValueError:
        continue
    t = ev.get("type")
    if t in ("event_msg", "response_item"):
        t = (ev.get("payload") or {}).get("type")
    if t in types:
        kept.append(line if line.endswith("\n") else line + "\n")
open(dest, "w", encoding="utf-8").writelines(kept)
print("fixture: %s, %d lines" % (dest, len(kept)))
EOT
}
if [ -n "${REALCLI_FIXTURES:-}" ]; then
	mkdir -p "$REALCLI_FIXTURES"
	cv=$("$MOCKLLM_REAL_CLAUDE" --version | cut -d' ' -f1)
	xv=$("$MOCKLLM_REAL_CODEX" --version | sed 's/^codex-cli //')
	log="$W/command/repo/.runner/runs/000001/executor.log"
	[ -f "$log" ] && fixture "$log" "$REALCLI_FIXTURES/claude-$cv-usage.stdout" assistant result
	rollout=$(find "$W/keep/codex-task-cost" -name 'rollout-*.jsonl' 2> /dev/null | head -1)
	[ -n "$rollout" ] && fixture "$rollout" "$REALCLI_FIXTURES/codex-$xv-rollout-usage.jsonl" function_call token_usage_record token_count
fi

echo "passed: $PASSED  failed: $FAILED"
[ "$FAILED" = 0 ]
