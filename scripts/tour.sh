#!/bin/sh
# make tour, or scripts/tour.sh [COMMAND [ARG...]]: the README's tour,
# offline. Builds agentjq from this checkout, starts the project's scripted
# Messages API (internal/testkit/apistub) on a free loopback port, prints
# the environment that points claude at it, and runs COMMAND there, or a
# shell when none is given. When the command or the shell ends, so does the
# scripted API, and the temporary HOME is removed. claude is the one on
# PATH, else the newest `make claude` installed into ~/.cache/agentjq.
set -eu
repo=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/agentjq-tour.XXXXXX")
apistub_pid=
cleanup() {
	exec 3>&- 2>/dev/null || true
	[ -z "$apistub_pid" ] || { kill "$apistub_pid" 2>/dev/null; wait "$apistub_pid" 2>/dev/null; } || true
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p "$tmp/bin" "$tmp/home"
(cd "$repo" && go build -o "$tmp/bin/agentjq" . && go build -o "$tmp/apistub" ./internal/testkit/apistub/cmd/apistub)

claude=$(command -v claude 2>/dev/null || true)
if [ -z "$claude" ]; then
	claude=$(ls -d "$HOME"/.cache/agentjq/claude-*/node_modules/.bin/claude 2>/dev/null | sort -V | tail -n 1)
fi
if [ -z "$claude" ]; then
	echo "agentjq tour: no claude CLI: install one with make claude (it goes into ~/.cache/agentjq)" >&2
	exit 127
fi
ln -s "$claude" "$tmp/bin/claude"

# The scripted API reads a pipe this script holds open: it ends with the
# script, however the script ends.
mkfifo "$tmp/alive"
"$tmp/apistub" -addr 127.0.0.1:0 -exit-on-eof < "$tmp/alive" 2> "$tmp/apistub.log" &
apistub_pid=$!
exec 3> "$tmp/alive"
url=
i=0
while [ -z "$url" ] && [ $i -lt 100 ]; do
	url=$(sed -n 's/^apistub: serving on //p' "$tmp/apistub.log")
	[ -n "$url" ] || { i=$((i + 1)); sleep 0.1; }
done
if [ -z "$url" ]; then
	echo "agentjq tour: the scripted API did not start:" >&2
	cat "$tmp/apistub.log" >&2
	exit 1
fi

export ANTHROPIC_BASE_URL="$url" ANTHROPIC_API_KEY=sk-ant-tour \
	CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_TELEMETRY=1 DISABLE_AUTOUPDATER=1 \
	DISABLE_ERROR_REPORTING=1 HOME="$tmp/home" PATH="$tmp/bin:$PATH"
{
	echo "agentjq tour: claude $("$claude" --version 2>/dev/null | awk '{print $1}') talks to the scripted model at $url, in this environment:"
	for v in ANTHROPIC_BASE_URL ANTHROPIC_API_KEY CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC DISABLE_TELEMETRY DISABLE_AUTOUPDATER DISABLE_ERROR_REPORTING HOME PATH; do
		eval "echo \"  export $v='\$$v'\""
	done
	[ $# -gt 0 ] || echo "agentjq tour: a shell there; the README's tour commands work as shown. exit to end the tour."
} >&2

status=0
if [ $# -gt 0 ]; then
	"$@" 3>&- || status=$?
else
	"${SHELL:-/bin/sh}" 3>&- || status=$?
fi
exit $status
