#!/bin/sh
# Peak RSS of agentjq reading a folder of Claude Code transcripts (#26):
# COUNT (default 2000) session files made from the 2.1.332 transcript
# fixtures (each a copy with a fresh session id, request snapshots of
# 40-60 KB included, as claude writes them), viewed with filter --view
# and run through daily_report, against the same with COUNT/10 files: the
# memory must not grow with the number of files. Prints a BENCHMARKS.md
# section.
set -eu
. "$(dirname "$0")/bench-lib.sh"
bench_init transcripts 0 1
count=${COUNT:-2000}
src=fixtures/transcripts/claude-code-2.1.332/projects/-home-user-project
make_dir() {
	dir=$work/projects-$1
	if stale "$dir/.made" "$1"; then
		echo "generating $1 transcripts" >&2
		rm -rf "$dir"
		mkdir -p "$dir"
		i=0
		while [ "$i" -lt "$1" ]; do
			for f in "$src"/*.jsonl; do
				[ "$i" -lt "$1" ] || break
				old=$(basename "$f" .jsonl)
				new=$(printf '%08d-0000-4000-8000-%012d' "$i" "$i")
				sed "s/$old/$new/g" "$f" >"$dir/$new.jsonl"
				i=$((i + 1))
			done
		done
		made "$dir/.made" "$1"
	fi
}
small=$((count / 10))
make_dir "$small"
make_dir "$count"
mib() { awk -v k="$1" 'BEGIN {printf "%.1f", k / 1024}'; }
row() {
	label=$1
	shift
	a=$(timed /dev/null "$work/agentjq" "$@" "$work/projects-$small")
	b=$(timed /dev/null "$work/agentjq" "$@" "$work/projects-$count")
	echo "| $label | $(mib "$(echo "$a" | cut -d' ' -f3)") MiB | $(mib "$(echo "$b" | cut -d' ' -f3)") MiB | $(echo "$b" | cut -d' ' -f1) s |"
}
mb=$(du -sm "$work/projects-$count" | cut -f1)
echo "## Transcripts (#26)"
echo
echo "Measured $(date -u +%Y-%m-%d) at $(git rev-parse --short HEAD), load average $(load): folders of $small and $count"
echo "session files ($mb MB for $count), copies of the 2.1.332 transcript fixtures. Target: viewing 2,000 files"
echo "stays under 50 MiB peak RSS."
echo
echo "| command | peak RSS, $small files | peak RSS, $count files | wall, $count files |"
echo "|---|---|---|---|"
row "filter --view DIR" filter --view
row "filter -n daily_report DIR" filter -n daily_report
echo
echo "Command: \`scripts/bench-transcripts.sh\` (COUNT=2000; make bench runs it)."
