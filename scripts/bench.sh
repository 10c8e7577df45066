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
echo "What the engine holds while it writes: the live heap's growth over the run (held-MiB) for"
echo "range(2000000) in each mode, and for one 28 MB value. Target: under 4 MiB (the tests check"
echo "the outputs are written as they come; these figures are benchmarks)."
echo
echo '```'
go test ./filter -run '^$' -bench 'Heap$' -benchtime 1x 2>/dev/null | grep '^Benchmark'
echo '```'
echo
echo "    go test ./filter -run '^\$' -bench 'Heap\$' -benchtime 1x"
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
go test ./approve -run '^$' -bench 'Cap$' -benchtime 3x 2>/dev/null |
	awk '/^BenchmarkCoProcessLineCap-/ {print "| allocated while a co-process approver writes a 40 MB line without a newline (capped at 16 MiB) | a few times the cap | " $5 " MiB |"}
	     /^BenchmarkHookOutputCap-/ {print "| allocated while a hook approver writes 100 MB (capped at 16 MiB) | a few times the cap | " $5 " MiB |"}'
cat <<'MD'

Commands:

    go test ./approve -run '^$' -bench 'BenchmarkRulesDecision$|BenchmarkJQPolicy' -benchtime 20000x
    go test ./approve -run '^$' -bench 'CoProcess10k' -benchtime 3x
    go test ./approve -run '^$' -bench 'Cap$' -benchtime 3x

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
echo
WORK="$work/sandbox" scripts/bench-sandbox.sh
echo
WORK="$work/transcripts" scripts/bench-transcripts.sh
echo

# #11 asks for the lines of non-test Go before and after it; ae2f5c2 is
# the last commit before its first change.
echo "## Size of the code"
echo
lines_at() {
	git ls-tree -r --name-only "$1" | grep '\.go$' | grep -v '_test\.go$' | grep -v "${2:-^$}" |
		while read -r f; do git show "$1:$f"; done | wc -l
}
asm_at() {
	git ls-tree -r --name-only "$1" | grep '\.s$' | while read -r f; do git show "$1:$f"; done | wc -l
}
if git cat-file -e ae2f5c2^{commit} 2>/dev/null; then
	head=$(git rev-parse --short HEAD)
	echo "Lines of non-test Go (and of assembly), counted with \`git show REV:FILE | wc -l\` over the"
	echo "tracked files. The test doubles (apistub, fakeagent, livetest, mcptest, streamgen) were"
	echo "in internal/ before #11 and are in internal/testkit since."
	echo
	echo "| commit | non-test Go | without the test doubles | assembly |"
	echo "|---|---|---|---|"
	echo "| ae2f5c2 (before #11) | $(lines_at ae2f5c2) | $(lines_at ae2f5c2 '^internal/\(apistub\|fakeagent\|livetest\|mcptest\|streamgen\)/') | $(asm_at ae2f5c2) |"
	echo "| $head (now) | $(lines_at HEAD) | $(lines_at HEAD '^internal/testkit/') | $(asm_at HEAD) |"
else
	echo "(the history before #11 is not in this clone)"
fi
