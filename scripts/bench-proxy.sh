#!/bin/sh
# agentjq proxy's two costs: 1 GiB of agent NDJSON through the proxy to
# /dev/null, side by side with cat in the same run; the latency the proxy
# adds to a control request's round trip. Prints a markdown section.
#
#   scripts/bench-proxy.sh > section.md
#
# Environment: SIZE (default 1GiB), RUNS (default 3), WORK (scratch
# directory, default $TMPDIR/agentjq-bench-proxy; needs about SIZE).
set -eu
. "$(dirname "$0")/bench-lib.sh"
bench_init proxy 1GiB 3

stream="$work/stream.ndjson"
bench_stream "$stream" -control=false
agent="$work/agent.sh"
fake_agent "$agent" "$stream"

in_turn cat "\"$agent\" | cat" proxy "$work/agentjq" proxy --bin "$agent" -- --output-format stream-json
cat_s=$(cut -d' ' -f1 "$work/cat" | median)
proxy_s=$(cut -d' ' -f1 "$work/proxy" | median)
cat_cpu=$(cut -d' ' -f2 "$work/cat" | median)
proxy_cpu=$(cut -d' ' -f2 "$work/proxy" | median)
bytes=$(wc -c <"$stream")
ratio=$(ratio "$proxy_s" "$cat_s")
rtt=$(go test ./internal/bridge -run '^$' -bench 'ProxyRoundTrip|DirectRoundTrip' -benchtime 3x 2>/dev/null | awk '/^Benchmark/ {print $1, $5}')
rtt_proxy=$(echo "$rtt" | awk '/ProxyRoundTrip/ {print $2}')
rtt_direct=$(echo "$rtt" | awk '/DirectRoundTrip/ {print $2}')

cat <<MD
## proxy

Measured $(date -u +%Y-%m-%d) on $(nproc) cores, load average $(load) at the end. Medians of $runs runs.

| what | target | result |
|---|---|---|
| $bytes bytes of agent NDJSON through agentjq proxy, wall time | within 1.5x of cat | proxy ${proxy_s} s, cat ${cat_s} s: **${ratio}x** |
| the same, CPU time (user+sys) | - | proxy ${proxy_cpu} s, cat ${cat_cpu} s |
| control request round trip (agent → client → agent), median | under 1 ms added | proxy ${rtt_proxy} µs, direct ${rtt_direct} µs: **$(awk -v a="$rtt_proxy" -v b="$rtt_direct" 'BEGIN {printf "%.1f", a - b}') µs added** |

Commands:

    go run ./internal/tools/streamgen -size $size -control=false > stream.ndjson
    printf '#!/bin/sh\\ncat >/dev/null &\\nexec cat stream.ndjson\\n' > agent.sh
    /usr/bin/time -f '%e' sh -c './agent.sh </dev/null | cat' > /dev/null
    /usr/bin/time -f '%e' agentjq proxy --bin ./agent.sh -- --output-format stream-json < /dev/null > /dev/null
    go test ./internal/bridge -run '^\$' -bench 'ProxyRoundTrip|DirectRoundTrip' -benchtime 3x

The round-trip benchmark has a fake agent send 2,000 can_use_tool requests
one after the other, each timed until its answer arrives, to a client that
answers at once: through a proxied session (the approval chain decides
nothing, so each request goes to the client and back), and, for the
baseline, with the client on the agent's own pipes.
MD
