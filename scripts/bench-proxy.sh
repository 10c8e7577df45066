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

size=${SIZE:-1GiB}
runs=${RUNS:-3}
work=${WORK:-${TMPDIR:-/tmp}/agentjq-bench-proxy}
mkdir -p "$work"
command -v /usr/bin/time >/dev/null || { echo "bench-proxy: /usr/bin/time (GNU time) is needed" >&2; exit 1; }

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

secs() { # command... : wall seconds and CPU seconds (user+sys) of one run
	/usr/bin/time -f '%e %U %S' -o "$work/time" "$@" >/dev/null 2>"$work/stderr" </dev/null || true
	tail -n 1 "$work/time" | awk '{printf "%s %.2f\n", $1, $2 + $3}'
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

: >"$work/cat"
: >"$work/proxy"
i=0
while [ $i -lt "$runs" ]; do
	secs sh -c "\"$agent\" </dev/null | cat" >>"$work/cat"
	secs "$work/agentjq" proxy --bin "$agent" -- --output-format stream-json >>"$work/proxy"
	i=$((i + 1))
done
cat_s=$(cut -d' ' -f1 "$work/cat" | median)
proxy_s=$(cut -d' ' -f1 "$work/proxy" | median)
cat_cpu=$(cut -d' ' -f2 "$work/cat" | median)
proxy_cpu=$(cut -d' ' -f2 "$work/proxy" | median)
bytes=$(wc -c <"$stream")
ratio=$(awk -v a="$proxy_s" -v b="$cat_s" 'BEGIN {printf "%.2f", a / b}')
rtt=$(go test ./internal/bridge -run '^$' -bench 'ProxyRoundTrip|DirectRoundTrip' -benchtime 3x 2>/dev/null | awk '/^Benchmark/ {print $1, $5}')
rtt_proxy=$(echo "$rtt" | awk '/ProxyRoundTrip/ {print $2}')
rtt_direct=$(echo "$rtt" | awk '/DirectRoundTrip/ {print $2}')

cat <<MD
## proxy

Measured $(date -u +%Y-%m-%d) on $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end. Medians of $runs runs.

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
