#!/bin/sh
# Recording overhead: a SIZE session through `agentjq spawn --record`
# versus plain `agentjq spawn`, alternating, RUNS times each; prints a
# markdown section with the commands and the medians.
#
#   scripts/bench-record.sh > section.md   (make bench puts it in BENCHMARKS.md)
#
# Besides the recorded runs it times `spawn > FILE`: no recording at all,
# only the kernel storing the same bytes in a file. That is the floor under
# any recording of the session to disk on this machine.
#
# Environment: SIZE (default 200MiB, the size the target is for), RUNS (default 5), WORK (scratch
# directory, default $TMPDIR/agentjq-bench-record; needs about 2.2x SIZE).
# BENCH_PAUSE_PAGE_REPORTING=1 (root only): a VM whose balloon driver
# reports free pages to the host (Linux page_reporting) pays a host page
# fault for nearly every page the page cache takes, which makes writing a
# file several times dearer than on hardware and the timings erratic; with
# this set, reporting is paused for the runs and restored afterwards.
set -eu
. "$(dirname "$0")/bench-lib.sh"
bench_init record 200MiB 5

# The fake agent writes the stream beside it (as the commands below show).
agent="$work/agent.sh"
stream="$agent.ndjson"
bench_stream "$stream" -control=false
fake_agent "$agent" '$0.ndjson'
bytes=$(wc -c <"$stream")
lines=$(wc -l <"$stream")
cat "$stream" >/dev/null # warm the page cache

# Free page reporting (see above).
knob=/sys/module/page_reporting/parameters/page_reporting_order
reporting="not present"
if [ -r "$knob" ]; then
	reporting="active (order $(cat "$knob"))"
	if [ "${BENCH_PAUSE_PAGE_REPORTING:-}" = 1 ]; then
		old=$(cat "$knob")
		echo 11 >"$knob" # above MAX_PAGE_ORDER: no free block qualifies
		trap 'echo "$old" >"$knob"' EXIT
		trap 'exit 1' INT TERM
		reporting="paused for the runs (BENCH_PAUSE_PAGE_REPORTING=1; order $old restored after)"
		# Pages reported before the pause are still cold on the host:
		# touch a few GiB of page cache once, for every variant alike.
		for _ in 1 2 3; do
			cat "$stream" >"$work/warm"
			rm -f "$work/warm"
		done
	fi
fi

spawn="$work/agentjq spawn --bin $agent -p x"
# name|command|stdout: the variants, run in turn.
variants="plain|$spawn|/dev/null
tofile|$spawn|$work/session.out
record|$spawn --record $work/session.rec|/dev/null
noredact|$spawn --record $work/session.rec --no-redact|/dev/null
devnull|$spawn --record /dev/null|/dev/null"

for v in plain tofile record noredact devnull; do : >"$work/$v.times"; done
load_before=$(load)
# settle: before each run, write back what the last one left dirty, so that
# no run pays for the one before it.
settle() { sync; sleep 1; }
recbytes=0
i=0
while [ "$i" -lt "$runs" ]; do
	echo "$variants" | while IFS='|' read -r name cmd out; do
		rm -f "$work/session.rec" "$work/session.out"
		settle
		timed "$out" $cmd >>"$work/$name.times" || :
		if [ "$name" = record ]; then wc -c <"$work/session.rec" >"$work/recbytes"; fi
	done
	i=$((i + 1))
done
rm -f "$work/session.rec" "$work/session.out"
recbytes=$(cat "$work/recbytes")
load_after=$(load)

# A variant's times are lines of "wall cpu rss" (timed).
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.1f%%", (b / a - 1) * 100 }'; }
pw=$(field 1 "$work/plain.times" | median)
fw=$(field 1 "$work/tofile.times" | median)
row() { # name label
	w=$(field 1 "$work/$1.times" | median)
	vs=""
	[ "$1" = plain ] || vs=$(pct "$pw" "$w")
	vf=""
	case $1 in record | noredact) vf=$(pct "$fw" "$w") ;; esac
	echo "| $2 | ${w} s | $vs | $vf | $(field 2 "$work/$1.times" | median) s | $(field 3 "$work/$1.times" | median) KiB |"
}

cat <<EOF

## Recording overhead: spawn --record versus spawn ($(date -u +%Y-%m-%d), scripts/bench-record.sh)

Target: \`spawn --record\` of the 200 MiB bench stream within 1.5x of \`spawn > file\` (SIZE=200MiB).

\`\`\`sh
go run ./internal/tools/streamgen -size $size -control=false > agent.sh.ndjson   # $bytes bytes, $lines lines
printf '#!/bin/sh\\ncat >/dev/null &\\nexec cat "\$0.ndjson"\\n' > agent.sh       # the fake agent
agentjq spawn --bin ./agent.sh -p x > /dev/null                          # plain
agentjq spawn --bin ./agent.sh -p x > session.out                        # no recording: the kernel storing the bytes
agentjq spawn --bin ./agent.sh -p x --record session.rec > /dev/null     # recorded (default redaction)
agentjq spawn --bin ./agent.sh -p x --record session.rec --no-redact > /dev/null
agentjq spawn --bin ./agent.sh -p x --record /dev/null > /dev/null
\`\`\`

The five commands in turn, $runs times, timed with GNU time, with \`sync; sleep 1\`
before each; medians (all runs: $work/*.times). Load average before/after:
$load_before / $load_after ($(nproc) CPUs). Free page reporting: $reporting.

| | wall | vs spawn | vs spawn > file | CPU (user+sys) | peak RSS |
|---|---|---|---|---|---|
$(row plain "spawn")
$(row tofile "spawn > file (no recording)")
$(row record "spawn --record")
$(row noredact "spawn --record --no-redact")
$(row devnull "spawn --record /dev/null")

The recording is $recbytes bytes for a $bytes-byte session. \`spawn > file\`
records nothing: it is the kernel's cost of putting the session's bytes in
a file, the floor under any recording of it to disk. The last row records
with the default redaction into /dev/null: agentjq's own cost (redaction,
framing, the writer) without that floor.
EOF
if [ "$reporting" != "not present" ]; then
	cat <<'EOF'

This machine is a VM whose balloon driver reports free memory to its host
(Linux page_reporting): a page the page cache takes is then, most of the
time, one the host must fault in again, so storing a file costs several
times what it does on hardware (BENCH_PAUSE_PAGE_REPORTING=1 pauses it).
EOF
fi
