package approve

import (
	"runtime"
	"testing"

	"github.com/agentjq/agentjq/internal/protocol"
)

// What agentjq allocates while it caps an approver's output: a memory
// figure, so a benchmark (BENCHMARKS.md), not a test. Target: a few times
// the cap (16 MiB), whatever the approver writes.
//
//	go test ./approve -run '^$' -bench 'Cap$' -benchtime 3x

// BenchmarkCoProcessLineCap: a co-process approver writes a 40 MB line
// without a newline.
func BenchmarkCoProcessLineCap(b *testing.B) {
	benchAlloc(b, func() Verdict { return coProcessLineCap() })
}

// BenchmarkHookOutputCap: a hook approver writes 100 MB.
func BenchmarkHookOutputCap(b *testing.B) {
	benchAlloc(b, func() Verdict { return hookOutputCap() })
}

func benchAlloc(b *testing.B, run func() Verdict) {
	var total uint64
	for range b.N {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if v := run(); v.Behavior != protocol.Deny {
			b.Fatalf("%+v", v)
		}
		runtime.ReadMemStats(&after)
		total += after.TotalAlloc - before.TotalAlloc
	}
	b.ReportMetric(float64(total)/float64(b.N)/(1<<20), "alloc-MiB/op")
}
