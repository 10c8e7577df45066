#!/bin/sh
# spawn's hot path: 1 GiB of agent NDJSON from a fake agent through spawn to
# /dev/null, side by side with cat in the same run; the latency spawn adds
# to a line; peak memory with a 64 MiB line. Prints a markdown section.
#
#   scripts/bench-spawn.sh > section.md
#
# Environment: SIZE (default 1GiB), RUNS (default 3), WORK (scratch
# directory, default $TMPDIR/agentjq-bench-spawn; needs about SIZE).
set -eu

size=${SIZE:-1GiB}
runs=${RUNS:-3}
work=${WORK:-${TMPDIR:-/tmp}/agentjq-bench-spawn}
mkdir -p "$work"
command -v /usr/bin/time >/dev/null || { echo "bench-spawn: /usr/bin/time (GNU time) is needed" >&2; exit 1; }

echo "building agentjq" >&2
CGO_ENABLED=0 go build -trimpath -o "$work/agentjq" .
stream="$work/stream.ndjson"
if [ ! -s "$stream" ]; then
	echo "generating a $size stream" >&2
	go run ./internal/tools/streamgen -size "$size" -control=false >"$stream"
fi
# The fake agent drains its stdin and writes the stream.
agent="$work/agent.sh"
printf '#!/bin/sh\ncat >/dev/null &\nexec cat "%s"\n' "$stream" >"$agent"
chmod +x "$agent"
big="$work/bigline.sh"
# One 64 MiB line (an assistant text block), then a result.
go run ./internal/tools/streamgen -bigline 64MiB >"$work/bigline.ndjson"
printf '#!/bin/sh\ncat >/dev/null &\nexec cat "%s"\n' "$work/bigline.ndjson" >"$big"
chmod +x "$big"

secs() { # command... : wall seconds and max RSS (KiB) of one run
	/usr/bin/time -f '%e %M' -o "$work/time" "$@" >/dev/null 2>"$work/stderr" || true
	tail -n 1 "$work/time"
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

: >"$work/cat"
: >"$work/spawn"
i=0
while [ $i -lt "$runs" ]; do
	secs sh -c "\"$agent\" </dev/null | cat" | cut -d' ' -f1 >>"$work/cat"
	secs "$work/agentjq" spawn --bin "$agent" -p go | cut -d' ' -f1 >>"$work/spawn"
	i=$((i + 1))
done
cat_s=$(median <"$work/cat")
spawn_s=$(median <"$work/spawn")
bytes=$(wc -c <"$stream")
ratio=$(awk -v a="$spawn_s" -v b="$cat_s" 'BEGIN {printf "%.2f", a / b}')
mem=$(secs "$work/agentjq" spawn --bin "$big" -p go | cut -d' ' -f2)
lat=$(go test ./internal/bridge -run '^$' -bench 'LineLatency|PipeLatency' -benchtime 3x 2>/dev/null | awk '/^Benchmark/ {print $1, $5, $7}')
lat_spawn=$(echo "$lat" | awk '/LineLatency/ {print $2}')
lat_pipe=$(echo "$lat" | awk '/PipeLatency/ {print $2}')

cat <<MD
## spawn

Measured $(date -u +%Y-%m-%d) on $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end. Medians of $runs runs.

| what | target | result |
|---|---|---|
| $bytes bytes of agent NDJSON through spawn, wall time | within 1.5x of cat | spawn ${spawn_s} s, cat ${cat_s} s: **${ratio}x** |
| added latency per line, median | under 50 µs | spawn ${lat_spawn} µs, bare pipe ${lat_pipe} µs: **$(awk -v a="$lat_spawn" -v b="$lat_pipe" 'BEGIN {print a - b}') µs added** |
| peak memory with a 64 MiB line | under 2 x 64 MiB + 32 MiB = 160 MiB | **$((mem / 1024)) MiB** max RSS |

Commands:

    go run ./internal/tools/streamgen -size $size -control=false > stream.ndjson
    printf '#!/bin/sh\\ncat >/dev/null &\\nexec cat stream.ndjson\\n' > agent.sh
    /usr/bin/time -f '%e %M' sh -c './agent.sh </dev/null | cat' > /dev/null
    /usr/bin/time -f '%e %M' agentjq spawn --bin ./agent.sh -p go > /dev/null
    go test ./internal/bridge -run '^\$' -bench 'LineLatency|PipeLatency' -benchtime 3x
    go run ./internal/tools/streamgen -bigline 64MiB > bigline.ndjson   # then the same agent script over it

The latency benchmark has a fake agent write 2,000 time-stamped lines 0.5 ms
apart; the reader notes when each arrives, through spawn and, for the
baseline, straight from the agent's pipe.

MD
