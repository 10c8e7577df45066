package recording

import (
	"bytes"
	"testing"
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
