#!/bin/sh
# The benchmarks of redaction and of the front ends (serve, acp, the
# PreToolUse guard), as Markdown sections for BENCHMARKS.md (make bench).
# Each prints the figures the Go tests and benchmarks measure, with the
# command that measured them.
set -eu
. "$(dirname "$0")/bench-lib.sh"

echo "## Redaction"
echo
echo "Measured $(date -u +%Y-%m-%d), load average $(load). Target (#23): 400 MB/s or more on one core."
echo "\"trusted\" is the recorder's path: the bridge has scanned every agent line, and each comes"
echo "with what the scan learnt (one JSON object; whether an escape hides text, protocol.Known)."
echo "\"line\" is Redactor.Line, which scans first. The stream is 16 MiB of internal/testkit/streamgen."
echo
echo '```'
go test ./redact -run '^$' -bench RedactStream -cpu 1 -count 5 2>/dev/null | grep '^Benchmark'
echo '```'
echo
echo "    go test ./redact -run '^\$' -bench RedactStream -cpu 1 -count 5"
echo

echo "## The PreToolUse guard"
echo
echo "Measured $(date -u +%Y-%m-%d), load average $(load). One answer of agentjq's guard hook (the"
echo "whole chain over a Bash call, the hook's JSON in and out). Target: the guard adds under"
echo "5 ms per tool call. BenchmarkLiveGuard (the real claude, offline, needs AGENTJQ_LIVE_CLAUDE) times"
echo "agentjq's share of the live hook round trip and the end-to-end difference."
echo
echo '```'
go test ./hooks -run '^$' -bench GuardAnswer -benchtime 2000x 2>/dev/null | grep '^Benchmark'
echo '```'
echo
echo "    go test ./hooks -run '^\$' -bench GuardAnswer -benchtime 2000x"
echo
if [ -n "${AGENTJQ_LIVE_CLAUDE:-}" ]; then
	echo "Live, claude $("$AGENTJQ_LIVE_CLAUDE" --version 2>/dev/null | awk '{print $1}') offline against the scripted API: 20 echo calls a session, 3 sessions"
	echo "with the guard and 3 without."
	echo
	echo '```'
	go test ./cmd -run '^$' -bench LiveGuard -benchtime 3x -count=1 2>/dev/null | grep '^Benchmark' || true
	echo '```'
	echo
	echo "    AGENTJQ_LIVE_CLAUDE=... go test ./cmd -run '^\$' -bench LiveGuard -benchtime 3x -count=1"
	echo
fi

echo "## serve"
echo
echo "Measured $(date -u +%Y-%m-%d), load average $(load). The fake agent's ticker under a real daemon"
echo "session (bridge.Run, the recording written before each event is sent), JSON-RPC over a socket"
echo "pair. Targets: delivery under 2 ms median (median-µs); 1,000 events/s to 10 clients with flat"
echo "memory: heap-growth-MiB, the daemon's heap once every client had every event less what it held"
echo "at the start, near 0 (the tests check every event arrives; these figures are benchmarks)."
echo
echo '```'
go test ./daemon -run '^$' -bench 'DeliveryLatency|TenClients' -benchtime 1x -count=1 2>/dev/null | grep -E '^Benchmark|heap in use' || true
echo '```'
echo
echo "    go test ./daemon -run '^\$' -bench 'DeliveryLatency|TenClients' -benchtime 1x -count=1"
echo
echo "Queues (#24): three subscribers of one session of 12,000 agent lines written 500 µs apart"
echo "(24,003 events): two that read, pausing 400 µs and 600 µs before each message, and one"
echo "that stops reading at once. Targets: the readers keep every event (dropped 0) however far"
echo "they fall behind during the run; the stalled one is dropped after the stall bound (10 s)"
echo "and gets system.disconnect once it reads again (notice 1)."
echo
echo '```'
go test ./daemon -run '^$' -bench QueueReaders -benchtime 1x -count=1 2>/dev/null | awk '/^Benchmark/ {print $1; for (i = 3; i < NF; i += 2) printf "    %-28s %s\n", $(i+1), $i}' || true
echo '```'
echo
echo "    go test ./daemon -run '^\$' -bench QueueReaders -benchtime 1x -count=1"
echo

echo "## acp"
echo
echo "Measured $(date -u +%Y-%m-%d), load average $(load). From the agent writing a partial text delta"
echo "to the ACP client reading its agent_message_chunk, through the bridge, the mapper and the"
echo "JSON-RPC encoding. Target: under 1 ms median."
echo
echo '```'
go test ./acp -run '^$' -bench 'DeltaToChunk|MapDelta' -benchtime 5x -count=1 2>/dev/null | grep '^Benchmark' || true
echo '```'
echo
echo "    go test ./acp -run '^\$' -bench 'DeltaToChunk|MapDelta' -benchtime 5x -count=1"
