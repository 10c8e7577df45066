package recording

import (
	"bytes"
	"encoding/json"
	"io"
	"runtime"
	"sync"
	"time"

	"github.com/agentjq/agentjq/internal/asyncq"
	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/redact"
)

// WriterOptions configure a Writer.
type WriterOptions struct {
	// Now is the clock; nil means time.Now. Tests pass a fake one.
	Now func() time.Time
	// Redactor removes secrets before anything is written; nil records
	// everything verbatim (record --no-redact).
	Redactor *redact.Redactor
	// Async moves redaction, encoding and writing off the caller's path
	// to the Writer's goroutines (see Workers): Tap copies the line into
	// a queue and returns. Lines are written in batches of whole lines,
	// one write each, as soon as the goroutines get to them. Close waits
	// for the queue to drain.
	Async bool
	// AsyncLimit bounds the bytes queued (default 8 MiB); Tap waits when
	// it is reached. A longer line is queued alone.
	AsyncLimit int
	// Workers bounds how many goroutines redact an Async Writer's lines
	// at once (processRun); 0 means two, or GOMAXPROCS when that is less.
	// The lines are written in order all the same.
	Workers int
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
	red   *redact.Redactor

	mu           sync.Mutex
	seq          int64
	buf          []byte
	err          error
	agentVersion string
	versionLit   []byte // "claude_code_version":"<agentVersion>"

	q       *asyncq.Queue[qitem] // nil unless Async
	out     *writeQ              // with Async: the goroutine that makes the write calls
	workers int                  // with Async: see WriterOptions.Workers
	prep    []prepared           // processRun's lines, reused
	closed  bool
}

// NewWriter writes h (completed: format version, start time, redaction
// spec) and returns a Writer for the entries.
func NewWriter(w io.Writer, h Header, opts WriterOptions) (*Writer, error) {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	rw := &Writer{w: w, now: now, red: opts.Redactor}
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
		if h.Session != nil {
			s := h.Session.redacted(opts.Redactor.String)
			h.Session = &s
		}
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
		rw.workers = opts.Workers
		if rw.workers <= 0 {
			rw.workers = min(2, runtime.GOMAXPROCS(0))
		}
		rw.out = newWriteQ(w)
		rw.q = newQueue(rw, opts.AsyncLimit)
	}
	return rw, nil
}

// MarshalHeader encodes h as one line without the newline, the version key
// first (IsHeader's fast case).
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
func (w *Writer) Tap(dir protocol.Direction, line []byte, known protocol.Known) {
	w.TapParty(dir, "", line, known)
}

// TapParty is Tap for a proxied session's line whose party is known: the
// entry carries it ("party", see Entry).
func (w *Writer) TapParty(dir protocol.Direction, party protocol.Party, line []byte, known protocol.Known) {
	line = trimEOL(line)
	if w.q != nil {
		w.put(qitem{dir: dir, party: party, known: known, t: w.now()}, line)
		return
	}
	w.process(dir, party, line, known, w.now(), true)
}

var versionKey = []byte(`"claude_code_version"`)

// trimEOL is bytes.TrimRight(line, "\r\n") without building a cutset for
// every line.
func trimEOL(line []byte) []byte {
	for len(line) > 0 && (line[len(line)-1] == '\n' || line[len(line)-1] == '\r') {
		line = line[:len(line)-1]
	}
	return line
}

// versionTail is the end of versionKey, what indexVersionKey looks for.
const versionTail = `version"`

// indexVersionKey is bytes.Index(line, versionKey). It looks for the key's
// end first: JSON is full of the quote the key starts with, and so many
// false starts make bytes.Index give up its IndexByte skips for a search
// at every byte (some 30% of the recorder's time without redaction).
func indexVersionKey(line []byte) int {
	head := len(versionKey) - len(versionTail)
	for off := head; off < len(line); {
		j := bytes.Index(line[off:], []byte(versionTail))
		if j < 0 {
			return -1
		}
		if k := off + j - head; bytes.Equal(line[k:k+len(versionKey)], versionKey) {
			return k
		}
		off += j + 1
	}
	return -1
}

// batchSize bounds the bytes of whole lines handed to one write.
const batchSize = 1 << 20

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

// process redacts, encodes and (with flush) writes one line.
func (w *Writer) process(dir protocol.Direction, party protocol.Party, line []byte, known protocol.Known, t time.Time, flush bool) {
	w.emit(dir, party, w.prepare(dir, line, trust(dir, line, known)), t, flush)
}

// trust is what process trusts of what the tap knew of line: all of it
// for a line that can go under "msg" as it is, nothing otherwise.
func trust(dir protocol.Direction, line []byte, known protocol.Known) protocol.Known {
	if known&protocol.KnownObject != 0 && msgShaped(dir, line) {
		return known
	}
	return 0
}

// prepared is a line redacted and looked at, ready to be encoded.
type prepared struct {
	line    []byte
	obj     bool   // the line goes under "msg"
	version string // the agent version the line states, when it may be new
}

// prepare is the first half of process: it redacts line (known as trust
// gives it) and looks for the agent's version in it. It changes nothing
// of w, so that the Async Writer can prepare several lines at once
// (processRun); emit then encodes them in order.
func (w *Writer) prepare(dir protocol.Direction, line []byte, known protocol.Known) prepared {
	p := prepared{line: line}
	if w.red != nil {
		var checked bool
		p.line, p.obj, checked = w.red.LineObject(dir, line, known)
		p.obj = p.obj && msgShaped(dir, p.line)
		if !checked {
			p.obj = isJSONPayload(dir, p.line)
		}
	} else {
		p.obj = known&protocol.KnownObject != 0 || isJSONPayload(dir, line)
	}
	line = p.line
	if dir == protocol.DirOut && (protocol.MayBeType(line, "system") || protocol.MayBeType(line, "control_response")) &&
		mayBeSystemInit(line) {
		if i := indexVersionKey(line); i >= 0 && !w.versionKnownAt(line[i:]) {
			p.version = agentVersionOf(line)
		}
	}
	return p
}

// emit is the second half of process: it encodes the prepared line as
// the next entry, and the version it states when that is new.
func (w *Writer) emit(dir protocol.Direction, party protocol.Party, p prepared, t time.Time, flush bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.appendLocked(dir, party, p.line, t, p.obj)
	if flush || len(w.buf) >= batchSize {
		w.flushLocked() // whole lines, at most about batchSize a write
	}
	if p.version != "" && p.version != w.agentVersion {
		if flush {
			t = w.now()
		}
		w.setVersionLocked(p.version, t)
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
	w.appendLocked(protocol.DirMeta, "", metaVersion(v), t, true)
}

// SetAgentVersion records the agent's version as a meta entry, when it is
// not already known.
func (w *Writer) SetAgentVersion(v string) {
	if v == "" {
		return
	}
	if w.q != nil {
		w.put(qitem{dir: protocol.DirMeta, t: w.now(), setVersion: true}, []byte(v))
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

// Flush waits until every line tapped so far has been written to the
// underlying writer (Async; without it every Tap writes at once) and
// returns Err. The session flushes before it composes its exit event, so
// that a failure to write the last lines makes the exit event an error,
// not a success. It does not fsync: what reached the OS counts as written.
func (w *Writer) Flush() error {
	if done := make(chan struct{}); w.q != nil && w.put(qitem{flushed: done}, nil) {
		<-done
	}
	return w.Err()
}

// Close waits until every queued line is written (Async); the Writer
// takes no more lines. It returns Err. The underlying writer is the
// caller's to close.
func (w *Writer) Close() error {
	if w.q != nil {
		endAndWait(w.q)
		w.mu.Lock()
		w.out.close()
		if w.err == nil {
			w.err = w.out.Err()
		}
		w.mu.Unlock()
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
	defer w.mu.Unlock()
	if w.err == nil && w.out != nil {
		return w.out.Err()
	}
	return w.err
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
func (w *Writer) appendLocked(dir protocol.Direction, party protocol.Party, line []byte, t time.Time, obj bool) {
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

// flushLocked writes the pending whole lines with one write (with Async,
// hands them to the goroutine that writes).
func (w *Writer) flushLocked() {
	if w.out != nil {
		if len(w.buf) > 0 {
			w.buf = w.out.hand(w.buf)
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
func isJSONPayload(dir protocol.Direction, line []byte) bool {
	return msgShaped(dir, line) && validObject(line)
}

// msgShaped says a line of one JSON object may go under "msg" byte for
// byte: not stderr, and no white space around its braces.
func msgShaped(dir protocol.Direction, line []byte) bool {
	return dir != protocol.DirErr && len(line) > 0 && line[0] == '{' && line[len(line)-1] == '}'
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

// validObject reports whether b is exactly one JSON object: protocol.Scan,
// spawn's one-pass validator (fuzzed against encoding/json), about three
// times faster than json.Valid.
func validObject(b []byte) bool {
	_, ok := protocol.Scan(b)
	return ok
}
