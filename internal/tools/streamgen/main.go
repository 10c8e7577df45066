// Command streamgen writes a large realistic agent stream for benchmarks:
//
//	go run ./internal/tools/streamgen -size 1GiB > stream.ndjson
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/agentjq/agentjq/fixtures"
)

func main() {
	size := flag.String("size", "200MiB", "at least this many bytes (KiB, MiB, GiB suffixes)")
	control := flag.Bool("control", true, "include control requests and responses")
	flag.Parse()
	n, err := parseSize(*size)
	if err != nil {
		fmt.Fprintln(os.Stderr, "streamgen:", err)
		os.Exit(2)
	}
	if _, err := fixtures.WriteStream(os.Stdout, n, *control); err != nil {
		fmt.Fprintln(os.Stderr, "streamgen:", err)
		os.Exit(1)
	}
}

func parseSize(s string) (int64, error) {
	mult := int64(1)
	for suffix, m := range map[string]int64{"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30} {
		if strings.HasSuffix(s, suffix) {
			s, mult = strings.TrimSuffix(s, suffix), m
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n * mult, err
}
