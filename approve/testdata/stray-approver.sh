#!/bin/sh
# For each request: an allow for another request, the real answer (a
# deny), then a second answer (an allow) for the same request. Only the
# deny may count.
while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/.*"request_id":"\([^"]*\)".*/\1/p')
  printf '{"request_id":"other-%s","behavior":"allow"}\n' "$id"
  printf '{"type":"control_response","response":{"subtype":"success","request_id":"%s","response":{"behavior":"deny","message":"no from %s"}}}\n' "$id" "$id"
  printf '{"request_id":"%s","behavior":"allow"}\n' "$id"
done
