package recording

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"
	"time"
)

// WriterOptions configure a Writer.
type WriterOptions struct {
	// Now is the clock; nil means time.Now. Tests pass a fake one.
	Now func() time.Time
	// Redactor removes secrets before anything is written; nil records
	// everything verbatim (record --no-redact).
	Redactor *Redactor
}

// Writer writes a recording as the session happens: one write call per
// line, so a process killed mid-session leaves only complete lines (plus at
// most one cut-off last line). Give it an unbuffered writer (an *os.File)
// and every line reaches the OS as it happens. Safe for concurrent use.
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
	rw.agentVersion = h.AgentVersion
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
	if _, err := w.Write(append(line, '\n')); err != nil {
		return nil, err
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
// disk must not stop the session.
func (w *Writer) Tap(dir Direction, line []byte) {
	line = bytes.TrimRight(line, "\r\n")
	if w.red != nil {
		line = w.red.Line(dir, line)
	}
	var version string
	if dir == Out && bytes.Contains(line, []byte(`"claude_code_version"`)) {
		version = agentVersionOf(line)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writeLocked(dir, line)
	if version != "" && version != w.agentVersion {
		w.agentVersion = version
		w.writeLocked(Meta, metaVersion(version))
	}
}

// SetAgentVersion records the agent's version as a meta entry, when it is
// not already known.
func (w *Writer) SetAgentVersion(v string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if v == "" || v == w.agentVersion {
		return
	}
	w.agentVersion = v
	w.writeLocked(Meta, metaVersion(v))
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

func (w *Writer) writeLocked(dir Direction, line []byte) {
	if w.err != nil {
		return
	}
	w.seq++
	e := Entry{Seq: w.seq, MS: float64(w.now().Sub(w.start).Microseconds()) / 1000, Dir: dir}
	if isJSONPayload(dir, line) {
		e.Msg = line
	} else {
		e.Text = string(line)
	}
	w.buf = AppendEntry(w.buf[:0], e)
	w.buf = append(w.buf, '\n')
	if _, err := w.w.Write(w.buf); err != nil {
		w.err = err
	}
	if cap(w.buf) > 1<<20 {
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
	return json.Valid(line)
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
