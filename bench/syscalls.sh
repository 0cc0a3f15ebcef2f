#!/bin/sh
# Counts what one iteration does to the file system: fsyncs, renames,
# files created, folders created, files removed, per iteration, over N
# iterations of the setup of iteration.sh (strace must be installed).
# With "guards", a guard (`true`) runs after each agent.
#
#	bench/syscalls.sh [N] [guards]
. "$(dirname "$0")/lib.sh"
N=${1:-100}
D=$(mktemp -d "${TMPDIR:-/tmp}/runner-bench.XXXXXX")
trap 'rm -rf "$BIN" "$D"' EXIT
repo "$D" 1000
if [ "${2:-}" = guards ]; then
	printf '\n[[guard]]\nname = "ok"\nrun = "true"\n' >> "$D/.runner/config.toml"
fi
cd "$D"
"$BIN/runner" run --max-iterations 1 > /dev/null 2>&1 || true
strace -f -qq -e trace=fsync,fdatasync,rename,renameat,renameat2,openat,mkdir,mkdirat,unlink,unlinkat \
	-o "$D/trace" "$BIN/runner" run --max-iterations "$N" > /dev/null 2>&1 || true
# Only the runner's own calls: drop what the agent and guards do after exec.
awk -v n="$N" '
	/execve/ { next }
	/fsync\(|fdatasync\(/ { fsync++ }
	/rename/ && !/= -1/ { rename++ }
	/openat\(.*O_CREAT/ && !/= -1/ && !/journal\.jsonl|assumptions\.md|questions\.md|\/lock"/ { create++ }
	/mkdir/ && !/= -1/ { mkdir++ }
	/unlink/ && !/= -1/ { unlink++ }
	END { printf "per iteration: %.1f fsync, %.1f rename, %.1f files created, %.1f folders created, %.1f removed\n",
		fsync / n, rename / n, create / n, mkdir / n, unlink / n }' "$D/trace"
