package recording

import (
	"testing"

	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/internal/testkit/streamgen"
	"github.com/agentjq/agentjq/redact"
)

// BenchmarkTapStream is the recorder's cost per byte of the benchmark
// stream with the default redaction, as spawn --record runs it: each line
// comes with what the bridge's scan of it knows (protocol.Known).
func BenchmarkTapStream(b *testing.B) {
	lines, n, err := streamgen.BenchLines(16 << 20)
	if err != nil {
		b.Fatal(err)
	}
	known := knownOf(lines)
	for _, redacted := range []bool{true, false} {
		name := "redact"
		if !redacted {
			name = "no-redact"
		}
		b.Run(name, func(b *testing.B) {
			var red *redact.Redactor
			if redacted {
				red, _ = redact.NewRedactor(redact.RedactSpec{Builtin: true}, nil)
			}
			w, _ := NewWriter(discard{}, Header{}, WriterOptions{Redactor: red})
			b.SetBytes(n)
			for i := 0; i < b.N; i++ {
				for j, l := range lines {
					w.Tap(protocol.DirOut, l, known[j])
				}
			}
		})
	}
}

// BenchmarkTapRedacted is the recorder's cost per byte of agent output,
// with the default redaction on.
func BenchmarkTapRedacted(b *testing.B) {
	c, _ := captureBytes(b, "chain")
	lines := splitLines(c.out)
	red, _ := redact.NewRedactor(redact.RedactSpec{Builtin: true}, nil)
	w, _ := NewWriter(discard{}, Header{}, WriterOptions{Redactor: red})
	b.SetBytes(int64(len(c.out)))
	for i := 0; i < b.N; i++ {
		for _, l := range lines {
			w.Tap(protocol.DirOut, l, 0)
		}
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// knownOf is what the bridge's scan knows of each line.
func knownOf(lines [][]byte) []protocol.Known {
	known := make([]protocol.Known, len(lines))
	for i, l := range lines {
		h, _ := protocol.Scan(l)
		known[i] = h.Known
	}
	return known
}
