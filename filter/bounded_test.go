package filter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"
)

// liveHeapWriter counts what is written and, if measure, at every write
// measures the live heap: what the engine holds while its output is on
// the way (a figure for the benchmarks, not the tests).
type liveHeapWriter struct {
	n, lines int
	measure  bool
	maxLive  uint64
	maxWrite int
	check    func(line []byte) // called on each complete line, in order
	partial  []byte
}

func (w *liveHeapWriter) Write(p []byte) (int, error) {
	w.n += len(p)
	w.maxWrite = max(w.maxWrite, len(p))
	if w.measure {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		w.maxLive = max(w.maxLive, ms.HeapAlloc)
	}
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

// manyOutputModes are the engine's modes over one input with many
// outputs; N stands for the count.
var manyOutputModes = []struct {
	name, stdin string
	args        []string
	workers     int
}{
	{"stream, 2 workers", "1\n", []string{"range(N)"}, 2},
	{"stream, 1 worker", "1\n", []string{"range(N)"}, 1},
	{"sequential", "1\n", []string{"input_line_number as $l | range(N)"}, 2},
	{"null input", "", []string{"-n", "range(N)"}, 2},
}

func manyOutputsOptions(tb testing.TB, args []string, workers int, n string) *Options {
	tb.Helper()
	var a []string
	for _, s := range args {
		a = append(a, strings.ReplaceAll(s, "N", n))
	}
	o, err := ParseArgs(a)
	if err != nil {
		tb.Fatal(err)
	}
	o.Workers = workers
	return o
}

// failingWriter takes one write, then fails as a closed pipe does.
type failingWriter struct{ writes int }

func (w *failingWriter) Write(p []byte) (int, error) {
	if w.writes++; w.writes > 1 {
		return 0, errors.New("the reader is gone")
	}
	return len(p), nil
}

// One input with many outputs: they are written as they come, in every
// mode, so the engine never holds them all (range(3e7) on one line used
// to hold 1 GB). All 200,000 arrive in order; and range(1e15), whose
// outputs no engine could hold, ends with the write error once its reader
// is gone (an engine that held its outputs would never write). What the
// engine holds meanwhile is BenchmarkManyOutputsHeap.
func TestManyOutputsOfOneInputAreStreamed(t *testing.T) {
	t.Parallel()
	skipLargeIfShort(t)
	const n = 200_000 // about 1.3 MB of output
	for _, mode := range manyOutputModes {
		t.Run(mode.name, func(t *testing.T) {
			next := 0
			w := &liveHeapWriter{check: func(line []byte) {
				if want := fmt.Sprint(next); string(line) != want {
					t.Fatalf("output %d is %q", next, line)
				}
				next++
			}}
			if err := Run(context.Background(), strings.NewReader(mode.stdin), w, io.Discard, manyOutputsOptions(t, mode.args, mode.workers, "200000")); err != nil {
				t.Fatal(err)
			}
			if w.lines != n {
				t.Fatalf("%d outputs, want %d", w.lines, n)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			err := Run(ctx, strings.NewReader(mode.stdin), &failingWriter{}, io.Discard, manyOutputsOptions(t, mode.args, mode.workers, "1e15"))
			if err == nil || !strings.Contains(err.Error(), "the reader is gone") {
				t.Errorf("range(1e15) to a reader that left: %v, want the write error", err)
			}
		})
	}
}

// BenchmarkManyOutputsHeap reports how much the live heap grows while the
// engine writes range(2000000) (15 MB), in each mode (target: a few
// pieces, under 4 MiB).
//
//	go test ./filter -run '^$' -bench 'Heap$' -benchtime 1x
func BenchmarkManyOutputsHeap(b *testing.B) {
	for _, mode := range manyOutputModes {
		b.Run(mode.name, func(b *testing.B) {
			var held int64
			for range b.N {
				w := &liveHeapWriter{measure: true}
				base := baseHeap()
				if err := Run(context.Background(), strings.NewReader(mode.stdin), w, io.Discard, manyOutputsOptions(b, mode.args, mode.workers, "2000000")); err != nil {
					b.Fatal(err)
				}
				held = max(held, int64(w.maxLive)-int64(base))
			}
			b.ReportMetric(float64(held)/(1<<20), "held-MiB")
		})
	}
}

// Several inputs with many outputs each, in parallel: the outputs of each
// come whole and in the order of the inputs.
func TestManyOutputsKeepLineOrder(t *testing.T) {
	t.Parallel()
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
// levels indented by 7 are 28 MB of spaces, and no write holds more than
// 1 MiB of them. (What the engine holds meanwhile: BenchmarkHugeValueHeap.)
func TestHugeValueIsStreamed(t *testing.T) {
	w := hugeValue(t, false)
	if w.n < 28e6 {
		t.Fatalf("only %d bytes", w.n)
	}
	if w.maxWrite > 1<<20 {
		t.Errorf("a write of %d bytes: the value was not handed on in pieces", w.maxWrite)
	}
}

func hugeValue(tb testing.TB, measure bool) *liveHeapWriter {
	o, err := ParseArgs([]string{"-n", "--indent", "7", "reduce range(2000) as $i (0; [.])"})
	if err != nil {
		tb.Fatal(err)
	}
	w := &liveHeapWriter{measure: measure}
	if err := Run(context.Background(), strings.NewReader(""), w, io.Discard, o); err != nil {
		tb.Fatal(err)
	}
	return w
}

// BenchmarkHugeValueHeap reports how much the live heap grows while the
// engine writes one 28 MB value (target: under 4 MiB).
func BenchmarkHugeValueHeap(b *testing.B) {
	var held int64
	for range b.N {
		base := baseHeap()
		w := hugeValue(b, true)
		held = max(held, int64(w.maxLive)-int64(base))
	}
	b.ReportMetric(float64(held)/(1<<20), "held-MiB")
}
