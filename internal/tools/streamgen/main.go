// Command streamgen writes a large realistic agent stream for benchmarks
// (see package internal/testkit/streamgen):
//
//	go run ./internal/tools/streamgen -size 1GiB -control=false > stream.ndjson
//	go run ./internal/tools/streamgen -bigline 64MiB > bigline.ndjson
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/agentjq/agentjq/internal/testkit/streamgen"
)

func main() {
	size := flag.String("size", "200MiB", "at least this much (a number of MiB, or with a KiB, MiB or GiB suffix)")
	seed := flag.Uint64("seed", 1, "random seed: the same seed gives the same stream")
	control := flag.Bool("control", true, "include control requests and responses")
	bigline := flag.String("bigline", "", "instead, write one assistant line of this size, then a result")
	out := flag.String("o", "-", "output file (- for stdout)")
	flag.Parse()
	if err := run(*size, *seed, *control, *bigline, *out); err != nil {
		fmt.Fprintln(os.Stderr, "streamgen:", err)
		os.Exit(1)
	}
}

func run(size string, seed uint64, control bool, bigline, out string) error {
	f := os.Stdout
	if out != "-" {
		var err error
		if f, err = os.Create(out); err != nil {
			return err
		}
		defer f.Close()
	}
	w := bufio.NewWriterSize(f, 1<<20)
	if bigline != "" {
		n, err := parseSize(bigline)
		if err != nil {
			return err
		}
		if err := streamgen.BigLine(w, n); err != nil {
			return err
		}
		return w.Flush()
	}
	n, err := parseSize(size)
	if err != nil {
		return err
	}
	g, err := streamgen.New(seed)
	if err != nil {
		return err
	}
	g.NoControl = !control
	if _, err := g.WriteTo(w, n); err != nil {
		return err
	}
	return w.Flush()
}

// parseSize reads "200" (MiB), "512KiB", "200MiB" or "1GiB".
func parseSize(s string) (int64, error) {
	mult := int64(1 << 20)
	for _, u := range []struct {
		suffix string
		m      int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}} {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSuffix(s, u.suffix), u.m
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("size %q: %v", s, err)
	}
	return n * mult, nil
}
