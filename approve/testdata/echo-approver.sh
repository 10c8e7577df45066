#!/bin/sh
# A control-format approver: allows Bash "git ..." and denies the rest,
# answering with a full control_response.
while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/.*"request_id":"\([^"]*\)".*/\1/p')
  case "$line" in
    *'"command":"git '*) printf '{"type":"control_response","response":{"subtype":"success","request_id":"%s","response":{"behavior":"allow"}}}\n' "$id" ;;
    *) printf '{"behavior":"deny","message":"approver says no"}\n' ;;
  esac
done
