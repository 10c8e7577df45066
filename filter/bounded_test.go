package filter

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
)

// liveHeapWriter counts what is written and, at every write, measures the
// live heap: what the engine holds while its output is on the way.
type liveHeapWriter struct {
	n, lines int
	maxLive  uint64
	check    func(line []byte) // called on each complete line, in order
	partial  []byte
}

func (w *liveHeapWriter) Write(p []byte) (int, error) {
	w.n += len(p)
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	w.maxLive = max(w.maxLive, ms.HeapAlloc)
	if w.check != nil {
		data := append(w.partial, p...)
		for {
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				break
			}
			w.check(data[:i])
			w.lines++
			data = data[i+1:]
		}
		w.partial = append([]byte(nil), data...)
	}
	return len(p), nil
}

// skipLargeIfShort skips a test of millions of values under -short: a
// few seconds each, they run in the whole suite.
func skipLargeIfShort(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("millions of values: run without -short")
	}
}

// baseHeap is the live heap before a run. Two collections: sync.Pool
// keeps what it holds through the first.
func baseHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// One input with many outputs: they are written as they come, in every
// mode, so the engine never holds them all (range(3e7) on one line used
// to hold 1 GB).
func TestManyOutputsOfOneInputAreStreamed(t *testing.T) {
	skipLargeIfShort(t)
	const n = 2_000_000 // about 15 MB of output
	for _, mode := range []struct {
		name, stdin string
		args        []string
		workers     int
	}{
		{"stream, 2 workers", "1\n", []string{"range(2000000)"}, 2},
		{"stream, 1 worker", "1\n", []string{"range(2000000)"}, 1},
		{"sequential", "1\n", []string{"input_line_number as $l | range(2000000)"}, 2},
		{"null input", "", []string{"-n", "range(2000000)"}, 2},
	} {
		t.Run(mode.name, func(t *testing.T) {
			o, err := ParseArgs(mode.args)
			if err != nil {
				t.Fatal(err)
			}
			o.Workers = mode.workers
			next := 0
			w := &liveHeapWriter{check: func(line []byte) {
				if want := fmt.Sprint(next); string(line) != want {
					t.Fatalf("output %d is %q", next, line)
				}
				next++
			}}
			base := baseHeap()
			if err := Run(context.Background(), strings.NewReader(mode.stdin), w, io.Discard, o); err != nil {
				t.Fatal(err)
			}
			if w.lines != n {
				t.Fatalf("%d outputs, want %d", w.lines, n)
			}
			// The output is 15 MB; what the engine holds is a few pieces.
			if held := int64(w.maxLive) - int64(base); held > 4<<20 {
				t.Errorf("the live heap grew by %d bytes while writing %d bytes", held, w.n)
			}
		})
	}
}

// Several inputs with many outputs each, in parallel: the outputs of each
// come whole and in the order of the inputs.
func TestManyOutputsKeepLineOrder(t *testing.T) {
	skipLargeIfShort(t)
	pr, pw := io.Pipe()
	go func() {
		// One write per line: each line is a batch of its own, so the
		// workers run them at the same time.
		for i := 1; i <= 6; i++ {
			fmt.Fprintf(pw, "%d\n", i)
		}
		pw.Close()
	}()
	o, err := ParseArgs([]string{`. as $n | range(100000) | "\($n) \(.)"`})
	if err != nil {
		t.Fatal(err)
	}
	o.Workers = 3
	o.Raw = true
	seen := 0
	w := &liveHeapWriter{check: func(line []byte) {
		if want := fmt.Sprintf("%d %d", seen/100000+1, seen%100000); string(line) != want {
			t.Fatalf("output %d is %q, want %q", seen, line, want)
		}
		seen++
	}}
	if err := Run(context.Background(), pr, w, io.Discard, o); err != nil {
		t.Fatal(err)
	}
	if seen != 600000 {
		t.Fatalf("%d outputs", seen)
	}
}

// A value nested a million deep (gojq builds it without recursion) is
// written as jq writes it, not a stack overflow.
func TestDeepValueIsEncoded(t *testing.T) {
	skipLargeIfShort(t)
	const depth = 1_000_000
	// Run without runFilter's deadline: under -race on a busy machine
	// building the value alone takes longer than it allows.
	o, err := ParseArgs([]string{"-n", fmt.Sprintf("reduce range(%d) as $i (0; [.])", depth)})
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if err := Run(context.Background(), strings.NewReader(""), &stdout, &stderr, o); err != nil || stderr.Len() > 0 {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	out := stdout.String()
	if want := strings.Repeat("[", depth) + "0" + strings.Repeat("]", depth) + "\n"; out != want {
		t.Fatalf("got %d bytes starting %.20q, want %d", len(out), out, len(want))
	}
	// Pretty and coloured, objects too, at a depth a recursive encoder
	// would still manage: the two agree.
	v := any("x")
	for i := range 50 {
		if i%2 == 0 {
			v = []any{v, i}
		} else {
			v = map[string]any{"k": v, "a": []any{}}
		}
	}
	for _, st := range []style{{}, {indent: 2}, {tab: true}, {color: true, indent: 1}} {
		if got, want := st.encode(nil, v, 0), recursiveEncode(&st, nil, v, 0); !bytes.Equal(got, want) {
			t.Errorf("style %+v:\n got %q\nwant %q", st, got, want)
		}
	}
}

// recursiveEncode is the plain recursive encoder the iterative one
// replaces, for values shallow enough for it.
func recursiveEncode(s *style, b []byte, v any, level int) []byte {
	switch v := v.(type) {
	case []any:
		if len(v) == 0 {
			return s.punct(b, "[]", colorArray)
		}
		b = s.punct(b, "[", colorArray)
		for i, x := range v {
			if i > 0 {
				b = s.punct(b, ",", colorArray)
			}
			if s.pretty() {
				b = s.newline(b, level+1)
			}
			b = recursiveEncode(s, b, x, level+1)
		}
		if s.pretty() {
			b = s.newline(b, level)
		}
		return s.punct(b, "]", colorArray)
	case map[string]any:
		if len(v) == 0 {
			return s.punct(b, "{}", colorObject)
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sortStrings(keys)
		b = s.punct(b, "{", colorObject)
		for i, k := range keys {
			if i > 0 {
				b = s.punct(b, ",", colorObject)
			}
			if s.pretty() {
				b = s.newline(b, level+1)
			}
			b = s.paint(b, colorKey)
			b = appendString(b, k, s.ascii)
			b = s.reset(b)
			sep := ":"
			if s.pretty() {
				sep = ": "
			}
			b = s.punct(b, sep, colorObject)
			b = recursiveEncode(s, b, v[k], level+1)
		}
		if s.pretty() {
			b = s.newline(b, level)
		}
		return s.punct(b, "}", colorObject)
	}
	return s.scalar(b, v)
}

func sortStrings(a []string) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}

// A single value with a lot of text is handed on in pieces too: 2000
// levels indented by 7 are 28 MB of spaces.
func TestHugeValueIsStreamed(t *testing.T) {
	o, err := ParseArgs([]string{"-n", "--indent", "7", "reduce range(2000) as $i (0; [.])"})
	if err != nil {
		t.Fatal(err)
	}
	w := &liveHeapWriter{}
	base := baseHeap()
	if err := Run(context.Background(), strings.NewReader(""), w, io.Discard, o); err != nil {
		t.Fatal(err)
	}
	if w.n < 28e6 {
		t.Fatalf("only %d bytes", w.n)
	}
	if held := int64(w.maxLive) - int64(base); held > 4<<20 {
		t.Errorf("the live heap grew by %d bytes while writing %d bytes", held, w.n)
	}
}
