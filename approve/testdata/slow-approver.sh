#!/bin/sh
while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/.*"request_id":"\([^"]*\)".*/\1/p')
  sleep 5
  printf '{"request_id":"%s","behavior":"allow"}\n' "$id"
done
