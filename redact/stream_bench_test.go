package redact

import (
	"runtime"
	"testing"

	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/internal/testkit/streamgen"
)

// BenchmarkRedactStream is the default redaction alone over the
// benchmark stream, one core (target: 400 MB/s or more, BENCHMARKS.md):
// "trusted" as spawn --record runs it, on lines the bridge has scanned
// already (each comes with what the scan knows, protocol.Known), "line"
// as Line runs it, scanning each line first. Besides MB/s of wall time
// each reports cpu-MB/s, of the thread's CPU time (Linux): the figure a
// loaded machine moves less.
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
		cpuLoop(b, n, func() {
			for i, l := range lines {
				red.LineObject(protocol.DirOut, l, known[i])
			}
		})
	})
	// The keyword pass alone, over every byte (lowering, the automaton,
	// the list of hits): the floor under "trusted".
	b.Run("prefilter", func(b *testing.B) {
		var hits []glHit
		cpuLoop(b, n, func() {
			for _, l := range lines {
				hits = red.gl.hits(l, hits[:0])
			}
		})
	})
	b.Run("line", func(b *testing.B) {
		cpuLoop(b, n, func() {
			for _, l := range lines {
				red.Line(protocol.DirOut, l)
			}
		})
	})
}

// cpuLoop runs pass as b's loop on one thread, n bytes a pass, and
// reports the bytes per second of that thread's CPU time too.
func cpuLoop(b *testing.B, n int64, pass func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.SetBytes(n)
	t0, ok := threadCPU()
	passes := 0
	for b.Loop() {
		pass()
		passes++
	}
	if t1, _ := threadCPU(); ok && t1 > t0 {
		b.ReportMetric(float64(n)*float64(passes)/(t1-t0).Seconds()/1e6, "cpu-MB/s")
	}
}
