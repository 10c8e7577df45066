// Package recording reads and writes agentjq recordings: both directions
// of a session, with timing, as NDJSON that stays valid line by line.
//
// Format version 1 (documented in agentjq-recording(5)):
//
//	{"agentjq_recording":1,"agent":"claude","agent_version":"","agentjq_version":"...","argv":[...],"cwd":"...","started":"RFC3339"}
//	{"seq":1,"ms":0.412,"dir":"in","msg":{...the line sent to the agent...}}
//	{"seq":2,"ms":812.5,"dir":"out","msg":{...the agent's line, byte for byte...}}
//	{"seq":3,"ms":813.0,"dir":"err","text":"a line of the agent's stderr"}
//	{"seq":4,"ms":900.1,"dir":"event","msg":{"type":"agentjq",...}}
//	{"seq":5,"ms":900.2,"dir":"meta","msg":{"agent_version":"2.1.328"}}
//	{"seq":6,"ms":901.0,"dir":"in","party":"client","msg":{...}}   (agentjq proxy)
//
// agentjq writes the payload key (msg or text) last, so a reader slices the
// agent's original bytes out of a line without decoding them; an entry
// laid out otherwise is read as JSON (ParseEntry).
package recording

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/redact"
)

// FormatVersion is the version written in every header.
const FormatVersion = 1

// Header is the first line of a recording.
type Header struct {
	Recording      int       `json:"agentjq_recording"`
	Agent          string    `json:"agent"`
	AgentVersion   string    `json:"agent_version"`
	AgentjqVersion string    `json:"agentjq_version"`
	Argv           []string  `json:"argv"`
	Cwd            string    `json:"cwd"`
	Started        time.Time `json:"started"`
	Redacted       bool      `json:"redacted"`
	// Redact says which redactions were applied (no secret values), so
	// that replay --as-agent applies them to the client's lines too.
	Redact *redact.RedactSpec `json:"redact,omitempty"`
	// Session is the parsed session settings (replay --check re-runs the
	// session with them); nil in recordings made before it was written.
	Session *Session `json:"session,omitempty"`
}

// Entry is one recorded line.
type Entry struct {
	Seq int64
	MS  float64 // milliseconds since the start
	Dir protocol.Direction
	// Msg holds a JSON line's original bytes; Text a non-JSON line.
	Msg  []byte
	Text string
	// Party is set in recordings of agentjq proxy only: on an "in" entry,
	// who wrote the line (client or agentjq); on an "out" entry,
	// "agentjq" marks a line the client never saw (a request agentjq
	// answered, a reply to agentjq's own request); on an event, who
	// decided. Readers that do not know it are unaffected.
	Party protocol.Party
}

var headerPrefix = []byte(`{"agentjq_recording":`)

// IsHeader reports whether line is a recording header: a JSON object with
// the key agentjq_recording. Callers use it on the first line of a stream
// to tell a recording from a plain event stream. agentjq writes the
// version key first, which is the fast case; a header rewritten by
// another tool (spaces, keys reordered) is recognised by decoding it.
func IsHeader(line []byte) bool {
	line = bytes.TrimSpace(line)
	if bytes.HasPrefix(line, headerPrefix) {
		return true
	}
	if len(line) == 0 || line[0] != '{' || !bytes.Contains(line, []byte(`"agentjq_recording"`)) {
		return false
	}
	var v map[string]json.RawMessage
	if json.Unmarshal(line, &v) != nil {
		return false
	}
	_, ok := v["agentjq_recording"]
	return ok
}

// ParseHeader decodes a header line.
func ParseHeader(line []byte) (Header, error) {
	var h Header
	if err := json.Unmarshal(line, &h); err != nil {
		return h, fmt.Errorf("recording header: %w", err)
	}
	if h.Recording == 0 {
		return h, errors.New("recording header: no agentjq_recording version")
	}
	if h.Recording > FormatVersion {
		return h, fmt.Errorf("recording format %d is newer than this agentjq reads (%d)", h.Recording, FormatVersion)
	}
	return h, nil
}

// AppendEntry appends e's encoding, without a newline, to buf.
func AppendEntry(buf []byte, e Entry) []byte {
	buf = append(buf, `{"seq":`...)
	buf = strconv.AppendInt(buf, e.Seq, 10)
	buf = append(buf, `,"ms":`...)
	buf = strconv.AppendFloat(buf, e.MS, 'f', 3, 64)
	buf = append(buf, `,"dir":"`...)
	buf = append(buf, e.Dir...)
	if e.Party != "" {
		buf = append(buf, `","party":"`...)
		buf = append(buf, e.Party...)
	}
	if e.Msg != nil {
		buf = append(buf, `","msg":`...)
		buf = append(buf, e.Msg...)
	} else {
		buf = append(buf, `","text":`...)
		t, _ := json.Marshal(e.Text)
		buf = append(buf, t...)
	}
	return append(buf, '}')
}

// ParseEntry decodes a recorded line. Msg aliases line's bytes.
//
// A line as agentjq writes it (AppendEntry's layout) is sliced without
// decoding its payload; any other JSON object (keys reordered, spaces
// added by a tool that rewrote the file) is decoded as JSON. The fast
// path takes a line only when decoding it would give the same entry.
func ParseEntry(line []byte) (Entry, error) {
	line = bytes.TrimRight(line, "\r\n")
	if e, ok := sliceEntry(line); ok {
		return e, nil
	}
	return decodeEntry(line)
}

// sliceEntry reads AppendEntry's layout: seq, ms and dir first, the
// payload last and alone. A msg must be exactly one JSON object (else a
// key after it would be taken for part of it), a text exactly one string.
func sliceEntry(line []byte) (Entry, bool) {
	var e Entry
	const pre = `{"seq":`
	if !bytes.HasPrefix(line, []byte(pre)) || line[len(line)-1] != '}' {
		return e, false
	}
	i := len(pre)
	start := i
	for ; i < len(line) && line[i] >= '0' && line[i] <= '9'; i++ {
		e.Seq = e.Seq*10 + int64(line[i]-'0')
	}
	if i == start || i-start > 18 || (line[start] == '0' && i-start > 1) {
		return e, false
	}
	const ms = `,"ms":`
	if !bytes.HasPrefix(line[i:], []byte(ms)) {
		return e, false
	}
	i += len(ms)
	j := i
	for j < len(line) && (line[j] >= '0' && line[j] <= '9' || line[j] == '.') {
		j++
	}
	v, err := strconv.ParseFloat(string(line[i:j]), 64)
	if err != nil || line[i] == '.' || line[j-1] == '.' || (line[i] == '0' && j-i > 1 && line[i+1] != '.') {
		return e, false
	}
	e.MS, i = v, j
	dir, i, ok := wordAfter(line, i, `,"dir":"`)
	if !ok {
		return e, false
	}
	e.Dir = protocol.Direction(dir)
	const party = `,"party":"`
	if bytes.HasPrefix(line[i:], []byte(party)) {
		var p []byte
		if p, i, ok = wordAfter(line, i, party); !ok {
			return e, false
		}
		e.Party = protocol.Party(p)
	}
	body := line[:len(line)-1]
	switch {
	case bytes.HasPrefix(body[i:], []byte(`,"msg":{`)):
		e.Msg = body[i+len(`,"msg":`):]
		if _, ok := protocol.Scan(e.Msg); !ok {
			return e, false
		}
	case bytes.HasPrefix(body[i:], []byte(`,"text":"`)):
		if json.Unmarshal(body[i+len(`,"text":`):], &e.Text) != nil {
			return e, false
		}
	default:
		return e, false
	}
	return e, true
}

// wordAfter reads key, which ends in the opening quote of its value, at
// line[i:], then a value of lower-case letters and its closing quote: the
// value and the index after the quote.
func wordAfter(line []byte, i int, key string) (word []byte, next int, ok bool) {
	if !bytes.HasPrefix(line[i:], []byte(key)) {
		return nil, i, false
	}
	i += len(key)
	j := i
	for j < len(line) && line[j] >= 'a' && line[j] <= 'z' {
		j++
	}
	if j == i || j >= len(line) || line[j] != '"' {
		return nil, i, false
	}
	return line[i:j], j + 1, true
}

// decodeEntry reads an entry as any JSON object with its keys.
func decodeEntry(line []byte) (Entry, error) {
	var e Entry
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return e, errors.New("not a recording entry")
	}
	var v struct {
		Seq   *int64          `json:"seq"`
		MS    float64         `json:"ms"`
		Dir   string          `json:"dir"`
		Party string          `json:"party"`
		Msg   json.RawMessage `json:"msg"`
		Text  *string         `json:"text"`
	}
	if err := json.Unmarshal(trimmed, &v); err != nil {
		return e, fmt.Errorf("not a recording entry: %w", err)
	}
	switch {
	case v.Seq == nil:
		return e, errors.New("recording entry: no seq")
	case v.Dir == "":
		return e, errors.New("recording entry: no dir")
	case v.Msg != nil && string(v.Msg) != "null":
		e.Msg = v.Msg
	case v.Text != nil:
		e.Text = *v.Text
	default:
		return e, errors.New("recording entry: no msg or text")
	}
	e.Seq, e.MS, e.Dir, e.Party = *v.Seq, v.MS, protocol.Direction(v.Dir), protocol.Party(v.Party)
	return e, nil
}

// Transcript returns the payloads of entries travelling in dir.
func Transcript(entries []Entry, dir protocol.Direction) [][]byte {
	var out [][]byte
	for _, e := range entries {
		if e.Dir != dir {
			continue
		}
		if e.Msg != nil {
			out = append(out, e.Msg)
		} else {
			out = append(out, []byte(e.Text))
		}
	}
	return out
}
