// Package jsonrpc is JSON-RPC 2.0 written once for every agentjq front end
// that speaks it (the serve daemon, the ACP agent): the message types, a
// Conn that dispatches requests and notifications both ways, and two
// framings of the same messages — one JSON value per line (stdio, a Unix
// socket) and one per WebSocket message.
//
// Requests the local side sends may carry an id the caller chooses
// (SendRequest) so that a request can outlive the connection that first
// carried it: the caller keeps its own pending table, re-sends the request
// with the same id on another connection, and receives every response
// through Options.OnResponse.
package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// Version is the only "jsonrpc" member value JSON-RPC 2.0 allows.
const Version = "2.0"

// The error codes JSON-RPC 2.0 reserves.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
)

// ID is a request id exactly as it appeared on the wire: a JSON string or
// number. An empty ID means none (a notification); "null" is the id of a
// response to a request whose id could not be read.
type ID json.RawMessage

// IntID is the id n.
func IntID(n int64) ID { return ID(strconv.AppendInt(nil, n, 10)) }

// StringID is the id s, as a JSON string.
func StringID(s string) ID {
	b, _ := json.Marshal(s)
	return ID(b)
}

// String is the id's JSON text, usable as a map key.
func (id ID) String() string { return string(id) }

// IsZero reports whether there is no id at all.
func (id ID) IsZero() bool { return len(id) == 0 }

// MarshalJSON writes the id as it was read; no id is null.
func (id ID) MarshalJSON() ([]byte, error) {
	if len(id) == 0 {
		return []byte("null"), nil
	}
	return []byte(id), nil
}

// UnmarshalJSON keeps a string or number id as it is and refuses others.
func (id *ID) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return errors.New("empty id")
	}
	switch b[0] {
	case '"', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		*id = append((*id)[:0], b...)
		return nil
	case 'n':
		*id = ID("null")
		return nil
	}
	return fmt.Errorf("id must be a string or a number, not %s", b)
}

// Message is any JSON-RPC 2.0 message as it is on the wire. A request has
// Method and ID, a notification Method and no ID, a response ID and Result
// or Error.
type Message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      ID              `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// Request is a request or a notification received by a Conn.
type Request struct {
	ID     ID // zero for a notification
	Method string
	Params json.RawMessage
	Conn   *Conn
}

// IsNotification reports whether no response is expected.
func (r *Request) IsNotification() bool { return r.ID.IsZero() }

// DecodeParams decodes the params into v, with unknown members refused;
// a failure is an invalid-params *Error naming the method.
func (r *Request) DecodeParams(v any) error {
	params := r.Params
	if len(bytes.TrimSpace(params)) == 0 || bytes.Equal(bytes.TrimSpace(params), []byte("null")) {
		params = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(params))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return &Error{Code: CodeInvalidParams, Message: fmt.Sprintf("%s: params: %v", r.Method, err)}
	}
	if dec.More() {
		return &Error{Code: CodeInvalidParams, Message: fmt.Sprintf("%s: params: more than one JSON value", r.Method)}
	}
	return nil
}

// Response is a response received for a request sent with SendRequest.
type Response struct {
	ID     ID
	Result json.RawMessage
	Error  *Error
}

// Error is a JSON-RPC error object. Data, when set, is a JSON value; the
// agentjq protocols put a text code in data.code (see NewError).
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *Error) Error() string {
	if c := e.DataCode(); c != "" {
		return fmt.Sprintf("%s (%s)", e.Message, c)
	}
	return e.Message
}

// NewError is an error whose data is {"code": textCode} plus the members
// of extra (which may be nil).
func NewError(code int, textCode, message string, extra map[string]any) *Error {
	data := map[string]any{"code": textCode}
	for k, v := range extra {
		if k != "code" {
			data[k] = v
		}
	}
	b, err := json.Marshal(data)
	if err != nil {
		b, _ = json.Marshal(map[string]any{"code": textCode})
	}
	return &Error{Code: code, Message: message, Data: b}
}

// DataCode is data.code when data is an object holding a string code.
func (e *Error) DataCode() string {
	if e == nil || len(e.Data) == 0 {
		return ""
	}
	var d struct {
		Code string `json:"code"`
	}
	if json.Unmarshal(e.Data, &d) != nil {
		return ""
	}
	return d.Code
}

// DataCode is the data.code of the *Error in err's chain, or "".
func DataCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.DataCode()
	}
	return ""
}
