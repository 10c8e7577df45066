package recording

import (
	"bufio"
	"bytes"
	"os"
	"testing"

	"github.com/agentjq/agentjq/fixtures"
)

// FuzzSplitEntry checks the replay fast path against ParseEntry: whenever
// both accept a line they agree.
func FuzzSplitEntry(f *testing.F) {
	f.Add([]byte(`{"seq":12,"ms":3.500,"dir":"out","msg":{"a":"b"}}`))
	f.Add([]byte(`{"seq":3,"ms":0.000,"dir":"err","text":"x \"y\""}`))
	f.Add([]byte(`{"seq":,"ms":1,"dir":"out","msg":{}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		seq, dir, payload, text, ok := splitEntry(line)
		e, err := ParseEntry(line)
		if !ok || err != nil {
			return
		}
		if seq != e.Seq || string(dir) != string(e.Dir) {
			t.Fatalf("%s: fast %d %s, slow %d %s", line, seq, dir, e.Seq, e.Dir)
		}
		if !text && !bytes.Equal(payload, e.Msg) {
			t.Fatalf("%s: payload %s vs %s", line, payload, e.Msg)
		}
	})
}

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
		if err := Play(b.Context(), bytes.NewReader(data), discard{}, PlayOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// TestGenerateBenchRecording writes a 1 GiB recording, for timing replay
// by hand (make bench records its own with record --tee):
// AGENTJQ_BENCH_RECORDING=/tmp/big.ndjson go test -run GenerateBench
// ./recording. The agent lines of every capture, both directions, repeated.
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
	var lines []Entry
	for _, name := range fixtures.Scenarios() {
		for _, dir := range []Direction{Out, In} {
			b, err := fixtures.Capture(name, string(dir))
			if err != nil {
				continue
			}
			for _, l := range splitLines(b) {
				lines = append(lines, Entry{Dir: dir, Msg: l})
			}
		}
	}
	h, _ := MarshalHeader(Header{Agent: "claude", AgentVersion: fixtures.CLIVersion})
	bw.Write(append(h, '\n'))
	var n, seq int64
	var buf []byte
	for n < 1<<30 {
		for _, e := range lines {
			seq++
			e.Seq, e.MS = seq, float64(seq)/2
			buf = append(AppendEntry(buf[:0], e), '\n')
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

// BenchmarkTapRedacted is the recorder's cost per byte of agent output,
// with the default redaction on.
func BenchmarkTapRedacted(b *testing.B) {
	c, _ := captureBytes(b, "chain")
	lines := splitLines(c.out)
	red, _ := NewRedactor(RedactSpec{Builtin: true}, nil)
	w, _ := NewWriter(discard{}, Header{}, WriterOptions{Redactor: red})
	b.SetBytes(int64(len(c.out)))
	for i := 0; i < b.N; i++ {
		for _, l := range lines {
			w.Tap(Out, l)
		}
	}
}
