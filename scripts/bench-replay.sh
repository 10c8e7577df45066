#!/bin/sh
# Replay of a 1 GiB recording to /dev/null, side by side with cat on the
# same file. Prints a markdown section.
#
#   scripts/bench-replay.sh > section.md
#
# Environment: SIZE (default 1GiB), RUNS (default 5), WORK (scratch
# directory, default $TMPDIR/agentjq-bench-replay; needs about 2.2x SIZE).
set -eu

size=${SIZE:-1GiB}
runs=${RUNS:-5}
work=${WORK:-${TMPDIR:-/tmp}/agentjq-bench-replay}
mkdir -p "$work"
command -v /usr/bin/time >/dev/null || { echo "bench-replay: /usr/bin/time (GNU time) is needed" >&2; exit 1; }

echo "building agentjq" >&2
CGO_ENABLED=0 go build -trimpath -o "$work/agentjq" .
rec="$work/session.rec"
if [ ! -s "$rec" ]; then
	echo "recording a $size stream" >&2
	go run ./internal/tools/streamgen -size "$size" | "$work/agentjq" record --tee --no-redact -o "$rec" >/dev/null
fi
cat "$rec" >/dev/null # warm the page cache

secs() { /usr/bin/time -f '%e' -o "$work/time" "$@" >/dev/null 2>&1 || true; tail -n 1 "$work/time"; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
: >"$work/cat"
: >"$work/replay"
i=0
while [ $i -lt "$runs" ]; do
	secs cat "$rec" >>"$work/cat"
	secs "$work/agentjq" replay "$rec" >>"$work/replay"
	i=$((i + 1))
done
c=$(median <"$work/cat")
r=$(median <"$work/replay")
cat <<MD
## replay

Measured $(date -u +%Y-%m-%d), load average $(cut -d' ' -f1-3 /proc/loadavg), medians of $runs runs.

| what | target | result |
|---|---|---|
| replay of a $(wc -c <"$rec")-byte recording to /dev/null | within 2x of cat | replay ${r} s, cat ${c} s: **$(awk -v a="$r" -v b="$c" 'BEGIN {printf "%.2f", a / b}')x** |

Commands:

    go run ./internal/tools/streamgen -size $size | agentjq record --tee --no-redact -o session.rec > /dev/null
    /usr/bin/time -f %e cat session.rec > /dev/null
    /usr/bin/time -f %e agentjq replay session.rec > /dev/null

MD
