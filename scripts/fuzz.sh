#!/bin/sh
# Runs every fuzz target of the module (go test -list '^Fuzz' in each
# package) for $FUZZTIME each, and fails on the first crash. Fails too
# when no target is found, so a broken listing cannot pass as a clean run.
set -eu
GO=${GO:-go}
FUZZTIME=${FUZZTIME:-30s}
list=$(mktemp)
trap 'rm -f "$list"' EXIT
# go test -list prints a package's matching names, then its "ok  PKG" line.
"$GO" test -list '^Fuzz' ./... >"$list"
targets=$(awk '/^Fuzz/ { names = names " " $1; next }
	/^ok / { n = split(names, a, " "); for (i = 1; i <= n; i++) print $2 ":" a[i]; names = "" }' "$list")
if [ -z "$targets" ]; then
	echo "fuzz: no fuzz targets found" >&2
	exit 1
fi
n=0
for spec in $targets; do
	pkg=${spec%%:*} fn=${spec##*:}
	echo "fuzz $pkg $fn ($FUZZTIME)"
	"$GO" test "$pkg" -run '^$' -fuzz "^$fn\$" -fuzztime "$FUZZTIME"
	n=$((n + 1))
done
echo "fuzz: $n targets ran for $FUZZTIME each, no crash"
