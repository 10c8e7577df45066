# The set-up the bench-*.sh scripts share; they source it:
#
#   . "$(dirname "$0")/bench-lib.sh"
#   bench_init NAME DEFAULT_SIZE DEFAULT_RUNS
#
# bench_init sets size, runs and work from SIZE, RUNS and WORK (default
# $TMPDIR/agentjq-bench-NAME), checks for GNU time and builds agentjq into
# $work/agentjq. Every timing goes through timed, so that all the scripts
# measure one way: GNU time's wall, user+sys and peak RSS of one run.

bench_init() {
	bench_name=$1
	size=${SIZE:-$2}
	runs=${RUNS:-$3}
	work=${WORK:-${TMPDIR:-/tmp}/agentjq-bench-$bench_name}
	mkdir -p "$work"
	command -v /usr/bin/time >/dev/null || {
		echo "bench-$bench_name: /usr/bin/time (GNU time) is needed" >&2
		exit 1
	}
	echo "building agentjq" >&2
	CGO_ENABLED=0 go build -trimpath -o "$work/agentjq" .
}

# stale FILE KEY: FILE is to be made again: it is missing or empty, or an
# earlier run made it with another KEY (a size, flags). made FILE KEY
# notes the KEY it was made with.
stale() { [ ! -s "$1" ] || [ "$(cat "$1.key" 2>/dev/null)" != "$2" ]; }
made() { echo "$2" >"$1.key"; }

# bench_stream FILE [STREAMGEN FLAGS...]: the generated stream of $size in
# FILE, made again only when the size or the flags changed.
bench_stream() {
	bench_file=$1
	shift
	if stale "$bench_file" "$size $*"; then
		echo "generating a $size stream" >&2
		go run ./internal/tools/streamgen -size "$size" "$@" >"$bench_file"
		made "$bench_file" "$size $*"
	fi
}

# fake_agent SCRIPT STREAM: an agent that drains its stdin and writes
# STREAM, a path (or '$0.ndjson', the script's own name with .ndjson), as
# bridge.BenchmarkPassThrough's does.
fake_agent() {
	printf '#!/bin/sh\ncat >/dev/null &\nexec cat "%s"\n' "$2" >"$1"
	chmod +x "$1"
}

# timed OUT COMMAND...: runs COMMAND once under GNU time, stdin from
# /dev/null, stdout to OUT, stderr to $work/stderr. Prints "wall cpu rss":
# seconds, user+sys seconds, peak RSS in KiB; fails as COMMAND did.
timed() {
	timed_out=$1
	shift
	timed_status=0
	/usr/bin/time -o "$work/time" -f '%e %U %S %M' "$@" </dev/null >"$timed_out" 2>"$work/stderr" || timed_status=$?
	# GNU time puts "Command exited with non-zero status" first.
	tail -n 1 "$work/time" | awk '{printf "%s %.2f %s\n", $1, $2 + $3, $4}'
	return "$timed_status"
}

# secs COMMAND...: timed to /dev/null. A run that fails is timed all the
# same (its stderr is in $work/stderr): a benchmark agent's exit status is
# not what is measured.
secs() { timed /dev/null "$@" || true; }

# in_turn BASE SCRIPT NAME COMMAND...: $runs runs each of the baseline
# (sh -c SCRIPT) and of COMMAND, one after the other, so that both see the
# machine alike; their "wall cpu rss" lines go to $work/BASE and
# $work/NAME.
in_turn() {
	in_turn_base=$1 in_turn_script=$2 in_turn_name=$3
	shift 3
	: >"$work/$in_turn_base"
	: >"$work/$in_turn_name"
	in_turn_i=0
	while [ "$in_turn_i" -lt "$runs" ]; do
		secs sh -c "$in_turn_script" >>"$work/$in_turn_base"
		secs "$@" >>"$work/$in_turn_name"
		in_turn_i=$((in_turn_i + 1))
	done
}

# median: the median of the numbers on stdin, one a line (of an even
# count, the lower middle one).
median() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

# field N FILE: column N of FILE's lines.
field() { awk -v c="$1" '{print $c}' "$2"; }

# ratio A B: A / B to two places, "-" when B is 0 (too fast to time).
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0) printf "%.2f", a / b; else printf "-"}'; }

# load: the load average (1, 5, 15 minutes).
load() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?"; }
