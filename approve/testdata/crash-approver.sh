#!/bin/sh
# Writes garbage (ignored: it names no request), then exits.
read -r line
echo "not json"
exit 3
