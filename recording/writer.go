package recording

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"
	"time"

	"github.com/agentjq/agentjq/protocol"
)

// WriterOptions configure a Writer.
type WriterOptions struct {
	// Now is the clock; nil means time.Now. Tests pass a fake one.
	Now func() time.Time
	// Redactor removes secrets before anything is written; nil records
	// everything verbatim (record --no-redact).
	Redactor *Redactor
	// Async moves redaction, encoding and writing off the caller's path
	// to a goroutine: Tap copies the line into a queue and returns. Lines
	// are written in batches of whole lines, one write each (with
	// O_DIRECT, the whole blocks and then the rest: direct_linux.go), as
	// soon as the goroutine gets to them. Close waits for the queue to
	// drain.
	Async bool
	// AsyncLimit bounds the bytes queued (default 8 MiB); Tap waits when
	// it is reached. A longer line is queued alone.
	AsyncLimit int
	// ValidOut promises that every line tapped as Out is exactly one JSON
	// object, with no surrounding white space: the bridge taps only lines
	// it has validated, so the recorder need not validate them again.
	ValidOut bool
}

// Writer writes a recording as the session happens: one write call per
// line (per batch of whole lines with Async), so a process killed
// mid-session leaves only complete lines (plus at most one cut-off last
// line). Give it an unbuffered writer (an *os.File) and every line reaches
// the OS as it happens. Safe for concurrent use.
type Writer struct {
	w     io.Writer
	now   func() time.Time
	start time.Time
	red   *Redactor

	mu           sync.Mutex
	seq          int64
	buf          []byte
	err          error
	agentVersion string
	versionLit   []byte // "claude_code_version":"<agentVersion>"

	q      *queue       // nil unless Async
	wr     *asyncWrites // nil unless Async
	direct *directFile  // the O_DIRECT writer under wr, if any
	batch  int          // the bytes of whole lines handed to one write
	// With direct, each batch starts with room for the file's last
	// partial block (room()), which the write goroutine fills in, so that
	// the batch goes to the device from where it lies.
	handed   int64 // the bytes handed to wr so far, the header's included
	validOut bool
	closed   bool
}

// NewWriter writes h (completed: format version, start time, redaction
// spec) and returns a Writer for the entries.
func NewWriter(w io.Writer, h Header, opts WriterOptions) (*Writer, error) {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	rw := &Writer{w: w, now: now, red: opts.Redactor, validOut: opts.ValidOut, batch: 1 << 20}
	rw.start = now()
	h.Recording = FormatVersion
	if h.Started.IsZero() {
		h.Started = rw.start
	}
	h.Started = h.Started.UTC()
	if h.AgentVersion != "" {
		rw.agentVersion = h.AgentVersion
		rw.versionLit = []byte(`"claude_code_version":"` + h.AgentVersion + `"`)
	}
	if opts.Redactor != nil {
		spec := opts.Redactor.Spec()
		h.Redacted = true
		h.Redact = &spec
		argv := make([]string, len(h.Argv))
		for i, a := range h.Argv {
			argv[i] = opts.Redactor.String(a)
		}
		h.Argv = argv
		h.Cwd = opts.Redactor.String(h.Cwd)
	}
	line, err := MarshalHeader(h)
	if err != nil {
		return nil, err
	}
	line = append(line, '\n')
	if _, err := w.Write(line); err != nil {
		return nil, err
	}
	if opts.Async {
		var out io.Writer = w
		if df := newDirectFile(w, line); df != nil {
			// Fewer, larger direct writes: the device's round trips,
			// not the CPU, bound them.
			out, rw.direct, rw.batch = df, df, directBatch
			rw.handed = int64(len(line))
		}
		rw.wr = newAsyncWrites(out)
		rw.buf = rw.wr.first(rw.room())
		rw.q = newQueue(rw, opts.AsyncLimit)
	}
	return rw, nil
}

// MarshalHeader encodes h as one line without the newline, the version key
// first (IsHeader relies on it).
func MarshalHeader(h Header) ([]byte, error) {
	if h.Recording == 0 {
		h.Recording = FormatVersion
	}
	if h.Argv == nil {
		h.Argv = []string{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(h); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// Tap records one line travelling in dir. It has the signature of the
// bridge's tap. line is not retained. Errors are kept for Err: a failing
// disk must not stop the session. With Async, Tap only copies the line
// into the queue (waiting when AsyncLimit bytes are queued already).
func (w *Writer) Tap(dir Direction, line []byte) { w.TapParty(dir, "", line) }

// TapParty is Tap for a proxied session's line whose party is known: the
// entry carries it ("party", see Entry).
func (w *Writer) TapParty(dir Direction, party Party, line []byte) {
	line = bytes.TrimRight(line, "\r\n")
	if w.q != nil {
		w.q.put(qitem{dir: dir, party: party, t: w.now()}, line)
		return
	}
	w.process(dir, party, line, w.now(), true, false)
}

// Check is the redactor's Check (true without redaction): the bridge runs
// it on its workers and hands the result back with the line to TapChecked.
func (w *Writer) Check(line []byte) bool { return w.red.Check(line) }

// TapChecked is Tap for a line Check was asked about; hintFree is its
// answer. Only the bridge's validated Out lines come this way. The line is
// lent, not copied: its bytes must stay as they are until the function
// given to the next Release call has been called.
func (w *Writer) TapChecked(dir Direction, line []byte, hintFree bool) {
	line = bytes.TrimRight(line, "\r\n")
	if w.q != nil {
		w.q.put(qitem{dir: dir, t: w.now(), hintFree: hintFree, lent: line}, line)
		return
	}
	w.process(dir, "", line, w.now(), true, hintFree)
}

// Release calls release once every line lent so far (TapChecked) has been
// encoded, so that the caller may reuse their memory: at once without
// Async, else in turn on the Writer's goroutine.
func (w *Writer) Release(release func()) {
	if w.q != nil {
		w.q.put(qitem{release: release}, nil)
		return
	}
	release()
}

var versionKey = []byte(`"claude_code_version"`)

// versionAnchor is the offset in versionKey of its 'v', the rarest of its
// bytes in agent output.
const versionAnchor = 13

// mayBeSystemInit is false only when line plainly is a system line of
// another subtype than init: the CLI writes type then subtype first, and
// of the system lines only init states the version.
func mayBeSystemInit(line []byte) bool {
	const p = `{"type":"system","subtype":"`
	if !bytes.HasPrefix(line, []byte(p)) {
		return true
	}
	return bytes.HasPrefix(line[len(p):], []byte(`init"`))
}

// indexAnchored is bytes.Index(b, needle), searching with IndexByte for
// needle[k] (choose a byte rare in b) and comparing around each hit: a
// common first byte such as '"' makes bytes.Index stop everywhere.
func indexAnchored(b, needle []byte, k int) int {
	c := needle[k]
	for i := k; i < len(b); {
		j := bytes.IndexByte(b[i:], c)
		if j < 0 {
			return -1
		}
		start := i + j - k
		if start+len(needle) > len(b) {
			return -1
		}
		if bytes.Equal(b[start:start+len(needle)], needle) {
			return start
		}
		i += j + 1
	}
	return -1
}

// process redacts, encodes and (with flush) writes one line.
func (w *Writer) process(dir Direction, party Party, line []byte, t time.Time, flush, hintFree bool) {
	valid := w.validOut && dir == Out
	var obj bool
	if w.red != nil {
		var checked bool
		line, obj, checked = w.red.lineObject(dir, line, valid, hintFree)
		obj = obj && dir != Err && len(line) > 0 && line[0] == '{' && line[len(line)-1] == '}'
		if !checked {
			obj = isJSONPayload(dir, line)
		}
	} else {
		obj = valid || isJSONPayload(dir, line)
	}
	var version string
	if dir == Out && (mayBeType(line, "system") || mayBeType(line, "control_response")) &&
		mayBeSystemInit(line) {
		if i := indexAnchored(line, versionKey, versionAnchor); i >= 0 && !w.versionKnownAt(line[i:]) {
			version = agentVersionOf(line)
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.appendLocked(dir, party, line, t, obj)
	if flush || len(w.buf)-w.room() >= w.batch {
		w.flushLocked() // whole lines, at most about w.batch a write
	}
	if version != "" && version != w.agentVersion {
		if flush {
			t = w.now()
		}
		w.setVersionLocked(version, t)
		if flush {
			w.flushLocked()
		}
	}
}

// versionKnownAt reports whether b, which starts with versionKey, states
// the version already known, so the common case needs no decoding.
func (w *Writer) versionKnownAt(b []byte) bool {
	w.mu.Lock()
	key := w.versionLit
	w.mu.Unlock()
	return key != nil && bytes.HasPrefix(b, key)
}

func (w *Writer) setVersionLocked(v string, t time.Time) {
	w.agentVersion = v
	w.versionLit = []byte(`"claude_code_version":"` + v + `"`)
	w.appendLocked(Meta, "", metaVersion(v), t, true)
}

// SetAgentVersion records the agent's version as a meta entry, when it is
// not already known.
func (w *Writer) SetAgentVersion(v string) {
	if v == "" {
		return
	}
	if w.q != nil {
		w.q.put(qitem{dir: Meta, t: w.now(), setVersion: true}, []byte(v))
		return
	}
	w.setVersion(v, w.now(), true)
}

func (w *Writer) setVersion(v string, t time.Time, flush bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if v == w.agentVersion {
		return
	}
	w.setVersionLocked(v, t)
	if flush {
		w.flushLocked()
	}
}

// Close waits until every queued line is written (Async); the Writer
// takes no more lines. It returns Err. The underlying writer is the
// caller's to close.
func (w *Writer) Close() error {
	if w.q != nil {
		w.q.close()
	}
	if w.direct != nil {
		w.direct.close()
	}
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	return w.Err()
}

// AgentVersion returns the agent version known so far.
func (w *Writer) AgentVersion() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.agentVersion
}

// Err returns the first write error, if any.
func (w *Writer) Err() error {
	w.mu.Lock()
	err := w.err
	w.mu.Unlock()
	if err == nil && w.wr != nil {
		err = w.wr.Err()
	}
	return err
}

// Seq returns the sequence number of the last entry written.
func (w *Writer) Seq() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.seq
}

func metaVersion(v string) []byte {
	b, _ := json.Marshal(struct {
		AgentVersion string `json:"agent_version"`
	}{v})
	return b
}

// appendLocked encodes one entry into the pending buffer.
func (w *Writer) appendLocked(dir Direction, party Party, line []byte, t time.Time, obj bool) {
	if w.err != nil || w.closed {
		return
	}
	w.seq++
	e := Entry{Seq: w.seq, MS: float64(t.Sub(w.start).Microseconds()) / 1000, Dir: dir, Party: party}
	if obj {
		e.Msg = line
	} else {
		e.Text = string(line)
	}
	w.buf = AppendEntry(w.buf, e)
	w.buf = append(w.buf, '\n')
}

// room is the bytes at the start of each batch left for the file's last
// partial block (direct only).
func (w *Writer) room() int {
	if w.direct == nil {
		return 0
	}
	return int(w.handed % dioAlign)
}

// flushLocked writes the pending whole lines with one write (with Async,
// hands them to the goroutine that writes).
func (w *Writer) flushLocked() {
	if w.wr != nil {
		if pre := w.room(); len(w.buf) > pre {
			next := w.wr.hand(batch{w.buf, pre})
			w.handed += int64(len(w.buf) - pre)
			w.buf = next[:w.room()]
		}
		return
	}
	if len(w.buf) > 0 && w.err == nil {
		if _, err := w.w.Write(w.buf); err != nil {
			w.err = err
		}
	}
	w.buf = w.buf[:0]
	if cap(w.buf) > 8<<20 {
		w.buf = nil // do not pin one huge line's buffer for the whole session
	}
}

// isJSONPayload says whether line goes under "msg" (kept byte for byte) or
// "text". Only a whole, valid JSON object is a msg: anything else would
// make the entry invalid JSON.
func isJSONPayload(dir Direction, line []byte) bool {
	if dir == Err || len(line) == 0 || line[0] != '{' || line[len(line)-1] != '}' {
		return false
	}
	return validObject(line)
}

// agentVersionOf returns claude_code_version from a system/init line or an
// initialize response, or "".
func agentVersionOf(line []byte) string {
	var v struct {
		Type     string `json:"type"`
		Subtype  string `json:"subtype"`
		Version  string `json:"claude_code_version"`
		Response struct {
			Response struct {
				Version string `json:"claude_code_version"`
			} `json:"response"`
		} `json:"response"`
	}
	if json.Unmarshal(line, &v) != nil {
		return ""
	}
	if v.Type == "system" && v.Subtype == "init" {
		return v.Version
	}
	if v.Type == "control_response" {
		return v.Response.Response.Version
	}
	return ""
}

func jsonValid(b []byte) bool { return json.Valid(b) }

// validObject reports whether b is exactly one JSON object: protocol.Scan,
// spawn's one-pass validator (fuzzed against encoding/json), about three
// times faster than json.Valid.
func validObject(b []byte) bool {
	_, ok := protocol.Scan(b)
	return ok
}
