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
// The payload key (msg or text) is always last, so a reader slices the
// agent's original bytes out of a line without decoding them.
package recording

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/agentjq/agentjq/protocol"
)

// FormatVersion is the version written in every header.
const FormatVersion = 1

// Direction says where a recorded line travelled (protocol.Direction).
type Direction = protocol.Direction

// Directions, as the recording package names them.
const (
	In    = protocol.DirIn
	Out   = protocol.DirOut
	Err   = protocol.DirErr
	Event = protocol.DirEvent
	Meta  = protocol.DirMeta
)

// Party says who was on agentjq's side of a proxied line (protocol.Party).
type Party = protocol.Party

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
	Redact *RedactSpec `json:"redact,omitempty"`
}

// Entry is one recorded line.
type Entry struct {
	Seq int64
	MS  float64 // milliseconds since the start
	Dir Direction
	// Msg holds a JSON line's original bytes; Text a non-JSON line.
	Msg  []byte
	Text string
	// Party is set in recordings of agentjq proxy only: on an "in" entry,
	// who wrote the line (client or agentjq); on an "out" entry,
	// "agentjq" marks a line the client never saw (a request agentjq
	// answered, a reply to agentjq's own request); on an event, who
	// decided. Readers that do not know it are unaffected.
	Party Party
}

var headerPrefix = []byte(`{"agentjq_recording":`)

// IsHeader reports whether line is a recording header. Callers use it on
// the first line of a stream to tell a recording from a plain event stream.
// agentjq always writes the version key first.
func IsHeader(line []byte) bool {
	return bytes.HasPrefix(bytes.TrimSpace(line), headerPrefix)
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

var (
	msgKey  = []byte(`","msg":`)
	textKey = []byte(`","text":`)
)

// ParseEntry decodes a recorded line. Msg aliases line's bytes.
func ParseEntry(line []byte) (Entry, error) {
	var e Entry
	line = bytes.TrimRight(line, "\r\n")
	if !bytes.HasPrefix(line, []byte(`{"seq":`)) || len(line) < 2 || line[len(line)-1] != '}' {
		return e, errors.New("not a recording entry")
	}
	rest := line[len(`{"seq":`):]
	i := bytes.IndexByte(rest, ',')
	if i < 0 {
		return e, errors.New("recording entry: no ms")
	}
	seq, err := strconv.ParseInt(string(rest[:i]), 10, 64)
	if err != nil {
		return e, fmt.Errorf("recording entry: seq: %w", err)
	}
	e.Seq = seq
	rest = rest[i:]
	if !bytes.HasPrefix(rest, []byte(`,"ms":`)) {
		return e, errors.New("recording entry: no ms")
	}
	rest = rest[len(`,"ms":`):]
	i = bytes.IndexByte(rest, ',')
	if i < 0 {
		return e, errors.New("recording entry: no dir")
	}
	if e.MS, err = strconv.ParseFloat(string(rest[:i]), 64); err != nil {
		return e, fmt.Errorf("recording entry: ms: %w", err)
	}
	rest = rest[i:]
	if !bytes.HasPrefix(rest, []byte(`,"dir":"`)) {
		return e, errors.New("recording entry: no dir")
	}
	rest = rest[len(`,"dir":"`)-1:]
	body := rest[:len(rest)-1] // drop the closing brace
	if len(body) < 2 || bytes.HasPrefix(body, msgKey) || bytes.HasPrefix(body, textKey) {
		return e, errors.New("recording entry: empty dir")
	}
	// dir (and party) come before the payload key; a quote inside a JSON
	// string is escaped, so the first unescaped key is the payload's.
	switch head := body[:min(len(body), 64)]; {
	case bytes.Contains(head, msgKey):
		j := bytes.Index(body, msgKey)
		e.Dir, e.Party = dirParty(body[1:j])
		e.Msg = body[j+len(msgKey):]
	case bytes.Contains(head, textKey):
		j := bytes.Index(body, textKey)
		e.Dir, e.Party = dirParty(body[1:j])
		if err := json.Unmarshal(body[j+len(textKey):], &e.Text); err != nil {
			return e, fmt.Errorf("recording entry: text: %w", err)
		}
	default:
		return e, errors.New("recording entry: no msg or text")
	}
	return e, nil
}

var partyKey = []byte(`","party":"`)

// dirParty splits `in","party":"client` into its direction and party.
func dirParty(b []byte) (Direction, Party) {
	if i := bytes.Index(b, partyKey); i >= 0 {
		return Direction(b[:i]), Party(b[i+len(partyKey):])
	}
	return Direction(b), ""
}
