package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Message types on the wire.
const (
	TypeUser           = "user"
	TypeAssistant      = "assistant"
	TypeSystem         = "system"
	TypeResult         = "result"
	TypeStreamEvent    = "stream_event"
	TypeControlRequest = "control_request"
	TypeControlResp    = "control_response"
	TypeControlCancel  = "control_cancel_request"
	TypeKeepAlive      = "keep_alive"
	// TypeAgentjq marks the events agentjq itself writes.
	TypeAgentjq = "agentjq"
)

// Envelope is the part of a line agentjq routes on. Request and Response
// keep their raw bytes so that handlers decode only what they use.
type Envelope struct {
	Type      string          `json:"type"`
	Subtype   string          `json:"subtype,omitempty"`
	RequestID string          `json:"request_id,omitempty"`
	SessionID string          `json:"session_id,omitempty"`
	Request   json.RawMessage `json:"request,omitempty"`
	Response  json.RawMessage `json:"response,omitempty"`
}

// ErrNotObject is returned for a line that is JSON but not an object.
var ErrNotObject = errors.New("not a JSON object")

// DecodeEnvelope reads the envelope of one line. It fails when the line is
// not a single JSON object; unknown fields are ignored.
func DecodeEnvelope(line []byte) (Envelope, error) {
	var e Envelope
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		if json.Valid(line) {
			return e, ErrNotObject
		}
		return e, fmt.Errorf("invalid JSON")
	}
	if err := json.Unmarshal(line, &e); err != nil {
		return e, jsonError(line, err)
	}
	return e, nil
}

// MayBeType is false only when line plainly starts with a "type" other
// than typ (the CLI writes the type first): a cheap gate before a search
// of the whole line for what only lines of type typ hold. A line whose
// type comes later, or is spaced, may be of any type.
func MayBeType(line []byte, typ string) bool {
	const p = `{"type":"`
	if !bytes.HasPrefix(line, []byte(p)) {
		return true
	}
	rest := line[len(p):]
	return len(rest) > len(typ) && string(rest[:len(typ)]) == typ && rest[len(typ)] == '"'
}

// jsonError turns encoding/json's error into one that names the column.
func jsonError(line []byte, err error) error {
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return fmt.Errorf("invalid JSON at column %d: %s", syn.Offset, syn.Error())
	}
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		return fmt.Errorf("field %q has the wrong type: %s", typ.Field, typ.Value)
	}
	return err
}

// ControlSubtype returns request.subtype of a control_request.
func (e Envelope) ControlSubtype() string {
	if len(e.Request) == 0 {
		return ""
	}
	var r struct {
		Subtype string `json:"subtype"`
	}
	_ = json.Unmarshal(e.Request, &r)
	return r.Subtype
}

// ResponseID returns response.request_id of a control_response.
func (e Envelope) ResponseID() string {
	if len(e.Response) == 0 {
		return ""
	}
	var r struct {
		RequestID string `json:"request_id"`
	}
	_ = json.Unmarshal(e.Response, &r)
	return r.RequestID
}
