#!/bin/sh
# A Claude Code PreToolUse hook that agentjq can use unchanged:
#   agentjq spawn --approver ./hook.sh --approver-format hook
# Input: hook JSON on stdin. Output: hookSpecificOutput on stdout; exit 2
# denies with stderr as the message. No output: no opinion.
input=$(cat)
case "$input" in
  *'"tool_name":"Bash"'*'rm -rf'*)
    echo "rm -rf is blocked by hook.sh" >&2
    exit 2 ;;
  *'"tool_name":"Read"'*)
    printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"reads are fine"}}\n' ;;
esac
exit 0
