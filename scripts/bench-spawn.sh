#!/bin/sh
# spawn's hot path: 1 GiB of agent NDJSON from a fake agent through spawn to
# /dev/null, side by side with cat in the same run; the latency spawn adds
# to a line; peak memory with a 64 MiB line. Prints a markdown section.
#
#   scripts/bench-spawn.sh > section.md
#
# Environment: SIZE (default 1GiB), RUNS (default 5), WORK (scratch
# directory, default $TMPDIR/agentjq-bench-spawn; needs about SIZE).
set -eu
. "$(dirname "$0")/bench-lib.sh"
bench_init spawn 1GiB 5

stream="$work/stream.ndjson"
bench_stream "$stream" -control=false
agent="$work/agent.sh"
fake_agent "$agent" "$stream"
# One 64 MiB line (an assistant text block), then a result.
big="$work/bigline.sh"
go run ./internal/tools/streamgen -bigline 64MiB >"$work/bigline.ndjson"
fake_agent "$big" "$work/bigline.ndjson"

in_turn cat "\"$agent\" | cat" spawn "$work/agentjq" spawn --bin "$agent" -p go
cat_s=$(field 1 "$work/cat" | median)
spawn_s=$(field 1 "$work/spawn" | median)
bytes=$(wc -c <"$stream")
ratio=$(ratio "$spawn_s" "$cat_s")
mem=$(secs "$work/agentjq" spawn --bin "$big" -p go | cut -d' ' -f3)
lat=$(go test ./internal/bridge -run '^$' -bench 'LineLatency|PipeLatency' -benchtime 3x 2>/dev/null | awk '/^Benchmark/ {print $1, $5, $7}')
lat_spawn=$(echo "$lat" | awk '/LineLatency/ {print $2}')
lat_pipe=$(echo "$lat" | awk '/PipeLatency/ {print $2}')

cat <<MD
## spawn

Measured $(date -u +%Y-%m-%d) on $(nproc) cores, load average $(load) at the end. Medians of $runs runs.

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
