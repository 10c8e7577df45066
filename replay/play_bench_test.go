package replay

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"testing"

	"github.com/agentjq/agentjq/fixtures"
	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/recording"
)

func BenchmarkPlay(b *testing.B) {
	_, rec := captureBytes(b, "chain")
	var big bytes.Buffer
	for big.Len() < 8<<20 {
		big.Write(rec[bytes.IndexByte(rec, '\n')+1:])
	}
	data := append(rec[:bytes.IndexByte(rec, '\n')+1:bytes.IndexByte(rec, '\n')+1], big.Bytes()...)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := Play(b.Context(), bytes.NewReader(data), "test.rec", io.Discard, PlayOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestGenerateBenchRecording writes a 1 GiB recording, for timing replay
// by hand (make bench records its own with record --tee):
// AGENTJQ_BENCH_RECORDING=/tmp/big.ndjson go test -run GenerateBench
// ./replay. The agent lines of every capture, both directions, repeated.
func TestGenerateBenchRecording(t *testing.T) {
	path := os.Getenv("AGENTJQ_BENCH_RECORDING")
	if path == "" {
		t.Skip("set AGENTJQ_BENCH_RECORDING=FILE to write the benchmark recording")
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<20)
	var lines []recording.Entry
	for _, name := range fixtures.Scenarios() {
		for _, dir := range []protocol.Direction{protocol.DirOut, protocol.DirIn} {
			b, err := fixtures.Capture(name, string(dir))
			if err != nil {
				continue
			}
			for _, l := range splitLines(b) {
				lines = append(lines, recording.Entry{Dir: dir, Msg: l})
			}
		}
	}
	h, _ := recording.MarshalHeader(recording.Header{Agent: "claude", AgentVersion: fixtures.CLIVersion})
	bw.Write(append(h, '\n'))
	var n, seq int64
	var buf []byte
	for n < 1<<30 {
		for _, e := range lines {
			seq++
			e.Seq, e.MS = seq, float64(seq)/2
			buf = append(recording.AppendEntry(buf[:0], e), '\n')
			bw.Write(buf)
			if n += int64(len(buf)); n >= 1<<30 {
				break
			}
		}
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d entries, %d bytes", seq, n)
}
