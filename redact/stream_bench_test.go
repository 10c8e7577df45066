package redact

import (
	"testing"

	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/internal/testkit/streamgen"
)

// BenchmarkRedactStream is the default redaction alone over the
// benchmark stream, one core (target: 500 MB/s or more, BENCHMARKS.md):
// "trusted" as spawn --record runs it, on lines the bridge has scanned
// already (each comes with what the scan knows, protocol.Known), "line"
// as Line runs it, scanning each line first.
func BenchmarkRedactStream(b *testing.B) {
	lines, n, err := streamgen.BenchLines(16 << 20)
	if err != nil {
		b.Fatal(err)
	}
	red, err := NewRedactor(RedactSpec{Builtin: true}, nil)
	if err != nil {
		b.Fatal(err)
	}
	known := make([]protocol.Known, len(lines))
	for i, l := range lines {
		h, _ := protocol.Scan(l)
		known[i] = h.Known
	}
	b.Run("trusted", func(b *testing.B) {
		b.SetBytes(n)
		for b.Loop() {
			for i, l := range lines {
				red.LineObject(protocol.DirOut, l, known[i])
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
