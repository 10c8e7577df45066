package recording

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentjq/agentjq/internal/asyncq"
	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/internal/testkit/streamgen"
	"github.com/agentjq/agentjq/redact"
)

// tap is one line of a session as the bridge taps it.
type tap struct {
	dir   protocol.Direction
	line  []byte
	known protocol.Known
}

// orderSession is a session whose redaction depends on the order of its
// lines: among some 600 KiB of the bench stream (some 200 lines, each
// made unique), the account's email before and after the initialize
// response that teaches it (before it, it is kept), a private key
// written on stderr a line at a time far apart, secrets in JSON lines,
// and lines the bridge's scan knows nothing of.
func orderSession(t testing.TB) []tap {
	t.Helper()
	lines, _, err := streamgen.BenchLines(600 << 10)
	if err != nil {
		t.Fatal(err)
	}
	email := "carol.order@example.com"
	account := `{"type":"control_response","response":{"subtype":"success","request_id":"init-1","response":{"account":{"email":"` + email + `"},"claude_code_version":"2.1.328"}}}`
	pem := []string{"-----BEGIN RSA PRIVATE KEY-----", "MIIEowIBAAKCAQEAorder1", "MIIEowIBAAKCAQEAorder2", "-----END RSA PRIVATE KEY-----"}
	var taps []tap
	add := func(dir protocol.Direction, line string) {
		var k protocol.Known
		if h, ok := protocol.Scan([]byte(line)); ok && dir != protocol.DirErr {
			k = h.Known
		}
		taps = append(taps, tap{dir, []byte(line), k})
	}
	for i, l := range lines {
		// The line's number in its first string keeps every line unique.
		add(protocol.DirOut, strings.Replace(string(l), `{"type":"`, fmt.Sprintf(`{"n":%d,"type":"`, i), 1))
		switch i % 7 {
		case 1:
			add(protocol.DirOut, fmt.Sprintf(`{"type":"assistant","n":%d,"text":"mail %s, key %s"}`, i, email, corpusSecrets["anthropic"]))
		case 3:
			add(protocol.DirIn, fmt.Sprintf(`{"type":"user","n":%d,"message":{"content":"GITHUB=%s"}}`, i, corpusSecrets["github"]))
		case 5:
			taps = append(taps, tap{protocol.DirOut, []byte(fmt.Sprintf(`{"type":"user","n":%d,"t":"AWS=%s"}`, i, corpusSecrets["aws"])), 0})
		}
		if i%3 == 0 { // a key's lines far apart, across the parts of a run
			add(protocol.DirErr, pem[i/3%len(pem)])
		}
		if i == len(lines)/2 {
			add(protocol.DirOut, account)
		}
	}
	return taps
}

// syncRecording is what the Writer without Async makes of taps: each line
// processed and written before the next is looked at.
func syncRecording(t testing.TB, taps []tap, now func() time.Time) []byte {
	t.Helper()
	var buf bytes.Buffer
	red, _ := redact.NewRedactor(redact.RedactSpec{Builtin: true}, nil)
	w, err := NewWriter(&buf, Header{Agent: "claude"}, WriterOptions{Now: now, Redactor: red})
	if err != nil {
		t.Fatal(err)
	}
	for _, tp := range taps {
		w.Tap(tp.dir, tp.line, tp.known)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func fixedClock() time.Time { return time.Unix(100, 0) }

// TestProcessBatchKeepsOrder: one batch of the whole session, redacted on
// two and on three goroutines (each run split into parts), comes out as
// the Writer without Async writes it, byte for byte: every line in its
// place, the email kept before the line that teaches it and removed
// after, the private key's body removed line by line, and a Flush in the
// batch done once the lines before it are written.
func TestProcessBatchKeepsOrder(t *testing.T) {
	taps := orderSession(t)
	want := syncRecording(t, taps, fixedClock)
	if !bytes.Contains(want, []byte("carol.order@example.com")) || bytes.Count(want, []byte(redact.Placeholder("email"))) < 2 {
		t.Fatal("the session does not test the order: the email must be kept before the account line and removed after")
	}
	for _, workers := range []int{2, 3} {
		var buf lockedBuffer
		red, _ := redact.NewRedactor(redact.RedactSpec{Builtin: true}, nil)
		w, err := NewWriter(&buf, Header{Agent: "claude"}, WriterOptions{Now: fixedClock, Redactor: red, Async: true, Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		var items []asyncq.Item[qitem]
		mid := len(taps) / 3
		flushed := make(chan struct{})
		for i, tp := range taps {
			if i == mid {
				items = append(items, asyncq.Item[qitem]{Meta: qitem{flushed: flushed}})
			}
			items = append(items, asyncq.Item[qitem]{Meta: qitem{dir: tp.dir, known: tp.known, t: fixedClock()}, B: tp.line})
		}
		if err := w.processBatch(w.q, asyncq.Batch[qitem]{Items: items}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-flushed:
		default:
			t.Fatal("the Flush in the batch was not answered")
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if got := buf.Bytes(); !bytes.Equal(got, want) {
			t.Fatalf("%d workers: the recording differs from the in-order one at byte %d:\n%s", workers, firstDiff(got, want), around(got, firstDiff(got, want)))
		}
	}
}

// TestAsyncWriterKeepsOrder: the session tapped into an Async Writer that
// redacts on two goroutines, with Flush calls along the way, gives the
// in-order recording; each Flush returns once every line tapped before it
// is in the file, and Close once all are.
func TestAsyncWriterKeepsOrder(t *testing.T) {
	taps := orderSession(t)
	want := syncRecording(t, taps, fixedClock)
	var buf lockedBuffer
	red, _ := redact.NewRedactor(redact.RedactSpec{Builtin: true}, nil)
	w, err := NewWriter(&buf, Header{Agent: "claude"}, WriterOptions{Now: fixedClock, Redactor: red, Async: true, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	for i, tp := range taps {
		w.Tap(tp.dir, tp.line, tp.known)
		if i%1000 == 999 {
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			// The file holds every entry up to this line's, and no other.
			seq := w.Seq()
			got := buf.Bytes()
			if len(got) > len(want) || !bytes.Equal(got, want[:len(got)]) {
				t.Fatalf("after tap %d: the recording differs from the in-order one at byte %d", i, firstDiff(got, want))
			}
			if n := bytes.Count(got, []byte("\n")); int64(n) != seq+1 {
				t.Fatalf("after tap %d and Flush: %d lines in the file, want %d (the header and seq 1-%d)", i, n, seq+1, seq)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := buf.Bytes(); !bytes.Equal(got, want) {
		t.Fatalf("the recording differs from the in-order one at byte %d:\n%s", firstDiff(got, want), around(got, firstDiff(got, want)))
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func around(b []byte, i int) string {
	lo, hi := max(0, i-200), min(len(b), i+200)
	return string(b[lo:hi])
}

// TestCutRun: the parts of a run cover it in order, none empty, at most
// as many as asked, each near its share of the bytes unless one line is
// larger than a share.
func TestCutRun(t *testing.T) {
	item := func(n int) asyncq.Item[qitem] { return asyncq.Item[qitem]{B: make([]byte, n)} }
	for _, sizes := range [][]int{
		{10, 10, 10, 10, 10, 10, 10, 10},
		{1000, 1, 1, 1},
		{1, 1, 1, 1000},
		{0, 0, 50, 0, 0, 50, 0},
		{5, 300, 5, 5, 5, 300, 5, 5, 5},
		{0, 0, 0},
	} {
		var items []asyncq.Item[qitem]
		total := 0
		for _, n := range sizes {
			items = append(items, item(n))
			total += n
		}
		for parts := 2; parts <= 8; parts++ {
			ends := cutRun(items, total, parts)
			if len(ends) == 0 || len(ends) > parts || ends[len(ends)-1] != len(items) {
				t.Fatalf("cutRun(%v, %d) = %v", sizes, parts, ends)
			}
			lo := 0
			for _, hi := range ends {
				if hi <= lo {
					t.Fatalf("cutRun(%v, %d) = %v: an empty part", sizes, parts, ends)
				}
				n, largest := 0, 0
				for _, it := range items[lo:hi] {
					n += len(it.B)
					largest = max(largest, len(it.B))
				}
				if n > total/parts+largest+1 {
					t.Errorf("cutRun(%v, %d) = %v: part %d-%d holds %d bytes", sizes, parts, ends, lo, hi, n)
				}
				lo = hi
			}
		}
	}
}
