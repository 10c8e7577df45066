#!/bin/sh
# Replay of a 1 GiB recording to /dev/null, side by side with cat on the
# same file. Prints a markdown section.
#
#   scripts/bench-replay.sh > section.md
#
# Environment: SIZE (default 1GiB), RUNS (default 5), WORK (scratch
# directory, default $TMPDIR/agentjq-bench-replay; needs about 2.2x SIZE).
set -eu
. "$(dirname "$0")/bench-lib.sh"
bench_init replay 1GiB 5

rec="$work/session.rec"
if stale "$rec" "$size"; then
	echo "recording a $size stream" >&2
	go run ./internal/tools/streamgen -size "$size" | "$work/agentjq" record --tee --no-redact -o "$rec" >/dev/null
	made "$rec" "$size"
fi
cat "$rec" >/dev/null # warm the page cache

in_turn cat "cat '$rec'" replay "$work/agentjq" replay "$rec"
c=$(field 1 "$work/cat" | median)
r=$(field 1 "$work/replay" | median)
cat <<MD
## replay

Measured $(date -u +%Y-%m-%d), load average $(load), medians of $runs runs.

| what | target | result |
|---|---|---|
| replay of a $(wc -c <"$rec")-byte recording to /dev/null | within 2x of cat | replay ${r} s, cat ${c} s: **$(ratio "$r" "$c")x** |

Commands:

    go run ./internal/tools/streamgen -size $size | agentjq record --tee --no-redact -o session.rec > /dev/null
    /usr/bin/time -f %e cat session.rec > /dev/null
    /usr/bin/time -f %e agentjq replay session.rec > /dev/null

MD
