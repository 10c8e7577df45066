#!/bin/sh
# Recording overhead: a SIZE session through `agentjq spawn --record`
# versus plain `agentjq spawn`, alternating, RUNS times each; prints a
# markdown section with the commands and the medians.
#
#   scripts/bench-record.sh > section.md   (make bench puts it in BENCHMARKS.md)
#
# Environment: SIZE (default 1GiB), RUNS (default 3), WORK (scratch
# directory, default $TMPDIR/agentjq-bench-record; needs about 2.2x SIZE).
set -eu

size=${SIZE:-1GiB}
runs=${RUNS:-3}
work=${WORK:-${TMPDIR:-/tmp}/agentjq-bench-record}
mkdir -p "$work"
command -v /usr/bin/time >/dev/null || { echo "bench-record: /usr/bin/time (GNU time) is needed" >&2; exit 1; }

echo "building agentjq" >&2
CGO_ENABLED=0 go build -trimpath -o "$work/agentjq" .
stream="$work/agent.sh.ndjson"
if [ ! -s "$stream" ] || [ "$(cat "$work/size" 2>/dev/null)" != "$size" ]; then
	echo "generating a $size stream" >&2
	go run ./internal/tools/streamgen -size "$size" -control=false >"$stream"
	echo "$size" >"$work/size"
fi
# The fake agent: drains its stdin, writes the stream (as in
# bridge.BenchmarkPassThrough).
agent="$work/agent.sh"
printf '#!/bin/sh\ncat >/dev/null &\nexec cat "$0.ndjson"\n' >"$agent"
chmod +x "$agent"
bytes=$(wc -c <"$stream")
lines=$(wc -l <"$stream")
cat "$stream" >/dev/null # warm the page cache

plain="$work/agentjq spawn --bin $agent -p x"
record="$work/agentjq spawn --bin $agent -p x --record $work/session.rec"
noredact="$work/agentjq spawn --bin $agent -p x --record $work/session.rec --no-redact"
# The same recording thrown away: agentjq's own cost (redaction, framing,
# the writer) without the kernel's cost of storing a 1 GiB file.
devnull="$work/agentjq spawn --bin $agent -p x --record /dev/null"

: >"$work/plain.times"
: >"$work/record.times"
: >"$work/noredact.times"
: >"$work/devnull.times"
load_before=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?")
# settle: before each run, write back what the last one left dirty, so that
# no run pays for the one before it.
settle() { sync; sleep 1; }
i=0
while [ "$i" -lt "$runs" ]; do
	settle
	/usr/bin/time -o "$work/t" -f "%e %U %S %M" $plain >/dev/null 2>&1 || :
	tail -n 1 "$work/t" >>"$work/plain.times"
	rm -f "$work/session.rec"
	settle
	/usr/bin/time -o "$work/t" -f "%e %U %S %M" $record >/dev/null 2>&1 || :
	tail -n 1 "$work/t" >>"$work/record.times"
	recbytes=$(wc -c <"$work/session.rec")
	rm -f "$work/session.rec"
	settle
	/usr/bin/time -o "$work/t" -f "%e %U %S %M" $noredact >/dev/null 2>&1 || :
	tail -n 1 "$work/t" >>"$work/noredact.times"
	rm -f "$work/session.rec"
	settle
	/usr/bin/time -o "$work/t" -f "%e %U %S %M" $devnull >/dev/null 2>&1 || :
	tail -n 1 "$work/t" >>"$work/devnull.times"
	i=$((i + 1))
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?")

# median FILE COLUMN
median() { awk -v c="$2" '{print $c}' "$1" | sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
cpu() { awk '{print $2+$3}' "$1" | sort -n | awk '{v[NR]=$1} END {printf "%.2f", v[int((NR+1)/2)]}'; }
pw=$(median "$work/plain.times" 1)
rw=$(median "$work/record.times" 1)
pr=$(median "$work/plain.times" 4)
rr=$(median "$work/record.times" 4)
nw=$(median "$work/noredact.times" 1)
nr=$(median "$work/noredact.times" 4)
pc=$(cpu "$work/plain.times")
rc=$(cpu "$work/record.times")
nc=$(cpu "$work/noredact.times")
over=$(awk -v a="$pw" -v b="$rw" 'BEGIN { printf "%+.1f%%", (b / a - 1) * 100 }')
novr=$(awk -v a="$pw" -v b="$nw" 'BEGIN { printf "%+.1f%%", (b / a - 1) * 100 }')
dw=$(median "$work/devnull.times" 1)
dr=$(median "$work/devnull.times" 4)
dc=$(cpu "$work/devnull.times")
dovr=$(awk -v a="$pw" -v b="$dw" 'BEGIN { printf "%+.1f%%", (b / a - 1) * 100 }')

cat <<EOF

## Recording overhead: spawn --record versus spawn ($(date -u +%Y-%m-%d), scripts/bench-record.sh)

Target: \`spawn --record\` of a 1 GiB session under 15% slower than plain \`spawn\`.

\`\`\`sh
go run ./internal/tools/streamgen -size $size -control=false > agent.sh.ndjson   # $bytes bytes, $lines lines
printf '#!/bin/sh\\ncat >/dev/null &\\nexec cat "\$0.ndjson"\\n' > agent.sh       # the fake agent
agentjq spawn --bin ./agent.sh -p x > /dev/null                          # plain
agentjq spawn --bin ./agent.sh -p x --record session.rec > /dev/null     # recorded (default redaction)
agentjq spawn --bin ./agent.sh -p x --record session.rec --no-redact > /dev/null
agentjq spawn --bin ./agent.sh -p x --record /dev/null > /dev/null
\`\`\`

Interleaved (plain, recorded, recorded --no-redact), $runs runs each, timed with GNU time; medians (all runs: $work/*.times).
Load average before/after: $load_before / $load_after ($(nproc) CPUs, shared).

| | wall | vs spawn | CPU (user+sys) | peak RSS |
|---|---|---|---|---|
| spawn | ${pw} s | | ${pc} s | ${pr} KiB |
| spawn --record | ${rw} s | ${over} | ${rc} s | ${rr} KiB |
| spawn --record --no-redact | ${nw} s | ${novr} | ${nc} s | ${nr} KiB |
| spawn --record /dev/null | ${dw} s | ${dovr} | ${dc} s | ${dr} KiB |

The recording is $recbytes bytes for a $bytes-byte session. The last row
records with the default redaction into /dev/null: agentjq's own cost
(redaction, framing, the writer) without the kernel's cost of storing a
1 GiB file, which on this 2-core machine (both cores already busy with the
agent and spawn) is most of the difference.
EOF
