#!/bin/sh
# A Claude Code PreToolUse hook that agentjq can use unchanged:
#   agentjq spawn --approver ./hook.sh --approver-format hook
# Input: hook JSON on stdin. Output: hookSpecificOutput on stdout; exit 2
# denies with stderr as the message. No output: no opinion.
#
# A hook in sh sees the request as JSON text, so this one errs on the side
# of denying: any Bash call that mentions rm anywhere is blocked (rm -rf,
# rm -fr, /bin/rm, $(rm ...)), and it allows exactly one command, written
# out whole. Everything else gets no opinion: the next decider (or the
# fail-closed default) answers.
input=$(cat)
case "$input" in
  *'"tool_name":"Bash"'*)
    case "$input" in
      # rm as a word, also after a JSON escape (\n, \t) inside the command.
      *[!A-Za-z0-9_]rm[!A-Za-z0-9_]* | *\\[nt]rm*)
        echo "hook.sh blocks every Bash command that mentions rm" >&2
        exit 2 ;;
      *'"tool_input":{"command":"git status"}'*)
        printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"git status is read-only"}}\n' ;;
    esac ;;
esac
exit 0
