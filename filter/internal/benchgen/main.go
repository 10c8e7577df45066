// Command benchgen writes a large, realistic agent event stream for the
// filter benchmarks: the sessions of the captures (fixtures), replayed in
// a random order with fresh ids and text, tool results and messages of
// realistic, varied sizes. Key order and line shapes are the captures'.
//
//	go run ./filter/internal/benchgen -size 200 -o stream.ndjson
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/agentjq/agentjq/filter/internal/benchgen/gen"
)

func main() {
	size := flag.Int64("size", 200, "size of the stream in MiB")
	out := flag.String("o", "-", "output file (- for stdout)")
	seed := flag.Uint64("seed", 1, "random seed (the same seed gives the same stream)")
	flag.Parse()
	if err := run(*size<<20, *out, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "benchgen:", err)
		os.Exit(1)
	}
}

func run(size int64, out string, seed uint64) error {
	var w io.Writer = os.Stdout
	if out != "-" {
		f, err := os.Create(out)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	g, err := gen.New(seed)
	if err != nil {
		return err
	}
	if _, err := g.WriteTo(bw, size); err != nil {
		return err
	}
	return bw.Flush()
}
