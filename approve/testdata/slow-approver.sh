#!/bin/sh
while IFS= read -r line; do sleep 5; echo '{"behavior":"allow"}'; done
