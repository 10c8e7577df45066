package recording

import (
	"testing"

	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/internal/testkit/streamgen"
	"github.com/agentjq/agentjq/redact"
)

// BenchmarkTapStream is the recorder's cost per byte of the benchmark
// stream with the default redaction, as spawn --record runs it (the
// bridge's lines are valid objects).
func BenchmarkTapStream(b *testing.B) {
	lines, n, err := streamgen.BenchLines(16 << 20)
	if err != nil {
		b.Fatal(err)
	}
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
			w, _ := NewWriter(discard{}, Header{}, WriterOptions{Redactor: red, ValidOut: true})
			b.SetBytes(n)
			for i := 0; i < b.N; i++ {
				for _, l := range lines {
					w.Tap(protocol.DirOut, l)
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
			w.Tap(protocol.DirOut, l)
		}
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
