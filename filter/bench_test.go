package filter

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/agentjq/agentjq/internal/testkit/streamgen"
)

// The four programs of BENCHMARKS.md over a generated stream (see
// scripts/bench-filter.sh for the comparison with jq and gojq).
var benchPrograms = []struct{ name, program string }{
	{"assistant_text", `select(.type=="assistant") | .message.content[] | select(.type=="text") | .text`},
	{"result", `select(.type=="result") | {cost: .total_cost_usd, turns: .num_turns}`},
	{"identity", `.`},
	{"control_request", `select(.type=="control_request")`},
	{"plain_keys", `.type`},
}

func BenchmarkRun(b *testing.B) {
	g, err := streamgen.New(1)
	if err != nil {
		b.Fatal(err)
	}
	var stream bytes.Buffer
	if _, err := g.WriteTo(&stream, 16<<20); err != nil {
		b.Fatal(err)
	}
	for _, bp := range benchPrograms {
		for _, fast := range []bool{true, false} {
			name := bp.name
			if !fast {
				name += "/plain"
			}
			b.Run(name, func(b *testing.B) {
				o, err := ParseArgs([]string{"-r", bp.program})
				if err != nil {
					b.Fatal(err)
				}
				o.NoFastPath = !fast
				b.SetBytes(int64(stream.Len()))
				for b.Loop() {
					if err := Run(context.Background(), bytes.NewReader(stream.Bytes()), io.Discard, io.Discard, o); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
