#!/bin/sh
# The cost of the sandbox, live: claude runs a session of CALLS Bash calls
# (each "true") against the scripted Messages API, with the sandbox
# agentjq derives and with --no-sandbox, in turn, RUNS times each. What
# the sandbox adds a call is the difference of the medians over CALLS
# (the session's start, the same both ways, cancels out). Prints a
# Markdown section for BENCHMARKS.md. Needs the claude CLI in
# ~/.cache/agentjq (make claude), bubblewrap and socat.
set -eu
. "$(dirname "$0")/bench-lib.sh"
bench_init sandbox 0 "${RUNS:-7}"
calls=${CALLS:-20}
version=${CLAUDE_VERSION:-$(awk '/^[0-9]/ {v = $1} END {print v}' internal/protocol/cli-versions.txt)}
claude=$HOME/.cache/agentjq/claude-$version/node_modules/.bin/claude
[ -x "$claude" ] || { echo "bench-sandbox: $claude is missing (make claude)" >&2; exit 1; }
go build -o "$work/apistub" ./internal/testkit/apistub/cmd/apistub
port=$((20000 + $$ % 20000))
"$work/apistub" -addr "127.0.0.1:$port" >/dev/null 2>&1 &
stub=$!
trap 'kill $stub 2>/dev/null' EXIT
sleep 0.5
project=$work/project
rm -rf "$project" "$work/home"
mkdir -p "$project" "$work/home"
git -C "$project" init -q
policy=$work/policy.json
echo '{"allow":["Bash(true)"]}' >"$policy"
prompt=$(i=0; while [ "$i" -lt "$calls" ]; do echo 'TOOL Bash {"command":"true"}'; i=$((i + 1)); done)
printf '%s\n' "$prompt" >"$work/prompt"
session=$work/session
cat >"$session" <<SH
#!/bin/sh
exec env -i PATH="$PATH" HOME="$work/home" TMPDIR="${TMPDIR:-/tmp}" ANTHROPIC_BASE_URL="http://127.0.0.1:$port" \\
	ANTHROPIC_API_KEY=sk-ant-bench CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_TELEMETRY=1 DISABLE_AUTOUPDATER=1 \\
	"$work/agentjq" spawn --bin "$claude" -C "$project" --no-prompt --policy "$policy" --timeout 5m -p "\$(cat "$work/prompt")" "\$@"
SH
chmod +x "$session"
: >"$work/on"
: >"$work/off"
: >"$work/bare"
bare='{"sandbox":{"enabled":true,"failIfUnavailable":true,"allowUnsandboxedCommands":false,"autoAllowBashIfSandboxed":false}}'
i=0
while [ "$i" -lt "$runs" ]; do
	secs "$session" >>"$work/on"
	secs "$session" --no-sandbox >>"$work/off"
	secs "$session" --no-sandbox -- --settings "$bare" >>"$work/bare"
	i=$((i + 1))
done
on=$(field 1 "$work/on" | median)
off=$(field 1 "$work/off" | median)
bareon=$(field 1 "$work/bare" | median)
echo "## The sandbox"
echo
echo "Measured $(date -u +%Y-%m-%d), load average $(load), claude $version. A session of $calls Bash"
echo "calls (\`true\`) against the scripted API, with the sandbox and with --no-sandbox, in turn,"
echo "$runs runs each. Target: the sandbox adds under 50 ms a call."
echo
echo "| | median wall | runs |"
echo "|---|---|---|"
echo "| sandboxed | $on s | $(field 1 "$work/on" | tr '\n' ' ')|"
echo "| claude's own sandbox, its defaults only | $bareon s | $(field 1 "$work/bare" | tr '\n' ' ')|"
echo "| --no-sandbox | $off s | $(field 1 "$work/off" | tr '\n' ' ')|"
echo "| added a call, agentjq's sandbox | $(awk -v a="$on" -v b="$off" -v n="$calls" 'BEGIN {printf "%.1f ms", (a - b) * 1000 / n}') | |"
echo "| added a call, claude's defaults only | $(awk -v a="$bareon" -v b="$off" -v n="$calls" 'BEGIN {printf "%.1f ms", (a - b) * 1000 / n}') | |"
echo
echo "    RUNS=$runs CALLS=$calls scripts/bench-sandbox.sh"
