package recording

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentjq/agentjq/internal/protocol"
)

// fakeClock advances by step on every reading.
type fakeClock struct {
	mu   sync.Mutex
	t    time.Time
	step time.Duration
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.t
	c.t = c.t.Add(c.step)
	return t
}

// writeLog records every Write call separately.
type writeLog struct {
	mu    sync.Mutex
	calls [][]byte
}

func (w *writeLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls = append(w.calls, append([]byte(nil), p...))
	return len(p), nil
}

func (w *writeLog) bytes() []byte { return bytes.Join(w.calls, nil) }

func TestWriterTimingSeqAndVersion(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), step: 250 * time.Millisecond}
	var out writeLog
	w, err := NewWriter(&out, Header{Agent: "claude", Argv: []string{"agentjq", "record"}, Cwd: "/tmp"}, WriterOptions{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	w.Tap(protocol.DirIn, []byte(`{"type":"user","message":{"role":"user","content":"hi"}}`), 0)
	w.Tap(protocol.DirOut, []byte(`{"type":"system","subtype":"init","claude_code_version":"9.9.9","cwd":"/x"}`), 0)
	w.Tap(protocol.DirErr, []byte("a warning, not JSON"), 0)
	w.Tap(protocol.DirOut, []byte(`not json {`), 0)
	w.Tap(protocol.DirEvent, []byte(`{"type":"agentjq","subtype":"exit","code":0}`), 0)
	w.SetAgentVersion("9.9.9") // already known: no second meta entry
	if w.Err() != nil {
		t.Fatal(w.Err())
	}
	for i, c := range out.calls {
		if !bytes.HasSuffix(c, []byte("\n")) || bytes.Count(c, []byte("\n")) != 1 || !json.Valid(c) {
			t.Errorf("write %d is not exactly one valid line: %q", i, c)
		}
	}
	h, entries, err := ReadAll(bytes.NewReader(out.bytes()), "test.rec", nil)
	if err != nil {
		t.Fatal(err)
	}
	if h.Recording != FormatVersion || !h.Started.Equal(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)) || h.Agent != "claude" {
		t.Errorf("header %+v", h)
	}
	want := []struct {
		dir protocol.Direction
		ms  float64
	}{{protocol.DirIn, 250}, {protocol.DirOut, 500}, {protocol.DirMeta, 750}, {protocol.DirErr, 1000}, {protocol.DirOut, 1250}, {protocol.DirEvent, 1500}}
	if len(entries) != len(want) {
		t.Fatalf("%d entries, want %d:\n%s", len(entries), len(want), out.bytes())
	}
	for i, e := range entries {
		if e.Seq != int64(i+1) || e.Dir != want[i].dir || e.MS != want[i].ms {
			t.Errorf("entry %d: seq %d dir %s ms %v; want seq %d dir %s ms %v", i, e.Seq, e.Dir, e.MS, i+1, want[i].dir, want[i].ms)
		}
	}
	if string(entries[2].Msg) != `{"agent_version":"9.9.9"}` {
		t.Errorf("meta entry %s", entries[2].Msg)
	}
	if entries[3].Text != "a warning, not JSON" || entries[4].Text != "not json {" {
		t.Errorf("text entries: %q %q", entries[3].Text, entries[4].Text)
	}
	if string(entries[1].Msg) != `{"type":"system","subtype":"init","claude_code_version":"9.9.9","cwd":"/x"}` {
		t.Errorf("out line not byte for byte: %s", entries[1].Msg)
	}
}

func TestWriterConcurrentTaps(t *testing.T) {
	var out writeLog
	w, err := NewWriter(&out, Header{}, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				w.Tap([]protocol.Direction{protocol.DirIn, protocol.DirOut, protocol.DirErr, protocol.DirEvent}[g], fmt.Appendf(nil, `{"g":%d,"i":%d}`, g, i), 0)
			}
		}(g)
	}
	wg.Wait()
	_, entries, err := ReadAll(bytes.NewReader(out.bytes()), "test.rec", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 800 {
		t.Fatalf("%d entries", len(entries))
	}
	last := map[protocol.Direction]int{protocol.DirIn: -1, protocol.DirOut: -1, protocol.DirErr: -1, protocol.DirEvent: -1}
	for i, e := range entries {
		if e.Seq != int64(i+1) {
			t.Fatalf("entry %d has seq %d", i, e.Seq)
		}
		var v struct{ G, I int }
		payload := e.Msg
		if e.Dir == protocol.DirErr {
			payload = []byte(e.Text)
		}
		if err := json.Unmarshal(payload, &v); err != nil {
			t.Fatal(err)
		}
		if v.I != last[e.Dir]+1 {
			t.Fatalf("direction %s out of order: %d after %d", e.Dir, v.I, last[e.Dir])
		}
		last[e.Dir] = v.I
	}
}

// A recorder killed at any byte leaves a file whose complete lines are all
// valid; the reader warns about the cut-off last line and keeps the rest.
func TestTruncatedAnywhere(t *testing.T) {
	in, _ := captureBytes(t, "write-allow")
	full := FromCapture(in.in, in.out, Header{})
	lines := bytes.SplitAfter(full, []byte("\n"))
	headerLen := len(lines[0])
	for cut := headerLen; cut < len(full); cut += 97 {
		part := full[:cut]
		var warned bool
		_, entries, err := ReadAll(bytes.NewReader(part), "test.rec", func(error) { warned = true })
		if err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		complete := bytes.Count(part, []byte("\n")) - 1
		atBoundary := part[len(part)-1] == '\n'
		if len(entries) != complete && !(len(entries) == complete+1 && !atBoundary) {
			t.Fatalf("cut at %d: %d entries, %d complete lines", cut, len(entries), complete)
		}
		if !atBoundary && len(entries) == complete && !warned {
			t.Errorf("cut at %d: no warning for the cut-off line", cut)
		}
		for _, e := range entries {
			if e.Msg != nil && !json.Valid(e.Msg) {
				t.Fatalf("cut at %d: invalid entry seq %d", cut, e.Seq)
			}
		}
	}
}

type failingWriter struct{ n int }

func (f *failingWriter) Write(p []byte) (int, error) {
	f.n++
	if f.n > 1 {
		return 0, io.ErrClosedPipe
	}
	return len(p), nil
}

func TestWriterKeepsFirstError(t *testing.T) {
	w, err := NewWriter(&failingWriter{}, Header{}, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w.Tap(protocol.DirOut, []byte(`{"a":1}`), 0)
	w.Tap(protocol.DirOut, []byte(`{"a":2}`), 0)
	if w.Err() != io.ErrClosedPipe {
		t.Errorf("Err() = %v", w.Err())
	}
	// Async: the write goroutine's error comes back from Close and Err.
	fw := &failingWriter{}
	w, err = NewWriter(fw, Header{}, WriterOptions{Async: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 1000 {
		w.Tap(protocol.DirOut, []byte(`{"a":`+strconv.Itoa(i)+`}`), 0)
	}
	if err := w.Close(); err != io.ErrClosedPipe || w.Err() != io.ErrClosedPipe {
		t.Errorf("async: Close() = %v, Err() = %v", err, w.Err())
	}
	if fw.n != 2 {
		t.Errorf("async: %d writes, want the header and the one that failed", fw.n)
	}
}

func TestHeaderFirstKeyAndCompat(t *testing.T) {
	line, err := MarshalHeader(Header{Agent: "claude"})
	if err != nil {
		t.Fatal(err)
	}
	if !IsHeader(line) {
		t.Errorf("header does not start with the version key: %s", line)
	}
	if strings.Contains(string(line), `"redact"`) {
		t.Errorf("an unredacted header mentions redact: %s", line)
	}
	// A header written before the redact field existed still parses.
	if _, err := ParseHeader([]byte(`{"agentjq_recording":1,"agent":"claude","agent_version":"","agentjq_version":"x","argv":[],"cwd":"/","started":"2026-01-01T00:00:00Z","redacted":false}`)); err != nil {
		t.Error(err)
	}
}

// slowFullDisk takes the header and then fails every write, slowly.
type slowFullDisk struct {
	mu     sync.Mutex
	writes int
}

func (d *slowFullDisk) Write(p []byte) (int, error) {
	d.mu.Lock()
	d.writes++
	n := d.writes
	d.mu.Unlock()
	if n == 1 {
		return len(p), nil
	}
	time.Sleep(100 * time.Millisecond)
	return 0, io.ErrShortWrite
}

// TestFlushKnowsTheLastWrite: once Flush returns, the failure of a write
// of any line tapped before is known (the exit event is composed then),
// and the Writer still takes lines afterwards.
func TestFlushKnowsTheLastWrite(t *testing.T) {
	d := &slowFullDisk{}
	w, err := NewWriter(d, Header{}, WriterOptions{Async: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatalf("Flush with nothing tapped: %v", err)
	}
	w.Tap(protocol.DirOut, []byte(`{"type":"result"}`), 0)
	if err := w.Flush(); err != io.ErrShortWrite {
		t.Fatalf("Flush() = %v, want the last write's failure", err)
	}
	w.Tap(protocol.DirEvent, []byte(`{"type":"agentjq","subtype":"exit"}`), 0)
	if err := w.Close(); err != io.ErrShortWrite {
		t.Errorf("Close() = %v", err)
	}
	if err := w.Flush(); err != io.ErrShortWrite {
		t.Errorf("Flush after Close = %v", err)
	}
}

// TestIndexVersionKey: the recorder's search for the version key finds
// what bytes.Index finds, the first one, wherever the key's pieces stand.
func TestIndexVersionKey(t *testing.T) {
	key := string(versionKey)
	for _, s := range []string{
		"", `"`, `version"`, key, key[1:], key[:len(key)-1], `x` + key,
		`{"version":"1","claude_code_version":"2.1.0"}`,
		`"claude_code_version"claude_code_version"`,
		`{"a":"` + key[:5] + `","b":` + key + `,"c":` + key + `}`,
		`version"version"` + key + `version"`,
		strings.Repeat(`"v`, 100) + key,
	} {
		if got, want := indexVersionKey([]byte(s)), strings.Index(s, key); got != want {
			t.Errorf("indexVersionKey(%q) = %d, want %d", s, got, want)
		}
	}
	for _, s := range []string{"", "\n", "\r\n", "a\r\n\r\n", "a\n\r", "a\rb\n", "ab"} {
		if got, want := string(trimEOL([]byte(s))), strings.TrimRight(s, "\r\n"); got != want {
			t.Errorf("trimEOL(%q) = %q, want %q", s, got, want)
		}
	}
}
