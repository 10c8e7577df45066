package redact

import (
	"bytes"
	"testing"

	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/internal/testkit/streamgen"
)

// streamLines is 16 MiB of the benchmark generator's stream (the one
// scripts/bench-record.sh records), split into lines.
func streamLines(b *testing.B) ([][]byte, int64) {
	g, err := streamgen.New(1)
	if err != nil {
		b.Fatal(err)
	}
	g.NoControl = true
	var buf bytes.Buffer
	if _, err := g.WriteTo(&buf, 16<<20); err != nil {
		b.Fatal(err)
	}
	return splitLines(buf.Bytes()), int64(buf.Len())
}

// BenchmarkRedactStream is the default redaction alone over the
// benchmark stream, one core (target: 500 MB/s or more, BENCHMARKS.md):
// "trusted" as spawn --record runs it, on lines the bridge has validated
// already, "line" as Line runs it, validating each line first.
func BenchmarkRedactStream(b *testing.B) {
	lines, n := streamLines(b)
	red, err := NewRedactor(RedactSpec{Builtin: true}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("trusted", func(b *testing.B) {
		b.SetBytes(n)
		for b.Loop() {
			for _, l := range lines {
				red.LineObject(protocol.DirOut, l, true)
			}
		}
	})
	b.Run("line", func(b *testing.B) {
		b.SetBytes(n)
		for b.Loop() {
			for _, l := range lines {
				red.Line(protocol.DirOut, l)
			}
		}
	})
}
