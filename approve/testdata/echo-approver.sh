#!/bin/sh
# A control-format approver: allows Bash "git ..." with a full
# control_response and denies the rest with a bare decision; both name the
# request_id they answer.
while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/.*"request_id":"\([^"]*\)".*/\1/p')
  case "$line" in
    *'"command":"git '*) printf '{"type":"control_response","response":{"subtype":"success","request_id":"%s","response":{"behavior":"allow"}}}\n' "$id" ;;
    *) printf '{"request_id":"%s","behavior":"deny","message":"approver says no"}\n' "$id" ;;
  esac
done
