#!/bin/sh
# Answers one request with garbage, then exits.
read -r line
echo "not json"
read -r line
exit 3
