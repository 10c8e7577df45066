#!/bin/sh
# make bench: runs every benchmark the issues set targets for and prints
# BENCHMARKS.md on stdout (BENCH_PAUSE_PAGE_REPORTING=1 make bench: see
# below). Needs GNU time, jq (Debian's), Go, and about
# 3 GiB of scratch space (WORK, default $TMPDIR/agentjq-bench-all).
set -eu
. "$(dirname "$0")/bench-lib.sh"
work=${WORK:-${TMPDIR:-/tmp}/agentjq-bench-all}
mkdir -p "$work"

cat <<MD
# Benchmarks

Every number here comes from \`make bench\` (scripts/bench.sh and the
scripts it runs), on the project's 2-core machine. Wall times are medians;
the load average says how quiet the machine was. Regenerate with
\`make bench\`.

MD

WORK="$work/spawn" scripts/bench-spawn.sh
echo
WORK="$work/proxy" scripts/bench-proxy.sh

WORK="$work/filter" scripts/bench-filter.sh "$work/filter.md" >&2
cat "$work/filter.md"
echo

echo "## approve"
echo
echo "Measured $(date -u +%Y-%m-%d), load average $(load)."
echo
echo "| benchmark | target | result |"
echo "|---|---|---|"
go test ./approve -run '^$' -bench 'BenchmarkRulesDecision$|BenchmarkJQPolicy' -benchtime 20000x 2>/dev/null |
	awk '/^BenchmarkRulesDecision-/ {print "| a rules decision (whole chain, Bash compound command parsed) | under 50 µs median (#12; 20 µs before the Bash analysis grew) | " $5 " µs median |"}
	     /^BenchmarkJQPolicy-/ {print "| a jq policy decision (whole chain, input rewritten) | under 200 µs median | " $5 " µs median |"}'
go test ./approve -run '^$' -bench 'CoProcess10k' -benchtime 3x 2>/dev/null |
	awk '/^BenchmarkCoProcess10k-/ {print "| 10,000 requests through `agentjq approve` as a co-process, one at a time | under 1 s | " $5 " s |"}'
cat <<'MD'

Commands:

    go test ./approve -run '^$' -bench 'BenchmarkRulesDecision$|BenchmarkJQPolicy' -benchtime 20000x
    go test ./approve -run '^$' -bench 'CoProcess10k' -benchtime 3x

MD

# The recording benchmark writes a 1 GiB file per run: as the machine is,
# and, with BENCH_PAUSE_PAGE_REPORTING=1 (root, a VM with free page
# reporting; see scripts/bench-record.sh), again with reporting paused.
BENCH_PAUSE_PAGE_REPORTING= WORK="$work/record" scripts/bench-record.sh
if [ "${BENCH_PAUSE_PAGE_REPORTING:-}" = 1 ]; then
	echo
	WORK="$work/record" scripts/bench-record.sh | sed 's/^## Recording overhead: \(.*\)$/## Recording overhead, free page reporting paused: \1/'
fi
echo
WORK="$work/replay" scripts/bench-replay.sh
echo
scripts/bench-fronts.sh
