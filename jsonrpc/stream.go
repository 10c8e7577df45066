package jsonrpc

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/coder/websocket"
)

// MaxMessage is the largest message either framing accepts by default:
// one agent turn's tool result can be megabytes, but an unbounded line is
// a way to exhaust memory.
const MaxMessage = 64 << 20

// ErrMessageTooLarge is returned by a Stream's Read for a message above its limit.
var ErrMessageTooLarge = errors.New("jsonrpc: message too large")

// Stream carries whole JSON-RPC messages. Read returns one message (io.EOF
// at the end); Write sends one; both may be called from different
// goroutines, Write from several (a Conn serialises its own writes).
// Close ends the stream and unblocks a pending Read.
type Stream interface {
	Read(ctx context.Context) ([]byte, error)
	Write(ctx context.Context, msg []byte) error
	Close() error
}

// LineStream is one JSON message per line: stdio and Unix sockets.
type LineStream struct {
	r      *bufio.Reader
	w      io.Writer
	closer io.Closer
	limit  int

	wmu       sync.Mutex
	closeOnce sync.Once
	closeErr  error
}

// NewLineStream frames messages as lines on r and w; closer (may be nil)
// is closed by Close, and should make a blocked read of r return.
func NewLineStream(r io.Reader, w io.Writer, closer io.Closer) *LineStream {
	return &LineStream{r: bufio.NewReaderSize(r, 64<<10), w: w, closer: closer, limit: MaxMessage}
}

// SetLimit sets the largest line Read accepts.
func (s *LineStream) SetLimit(n int) { s.limit = n }

// Read returns the next non-empty line without its line end.
func (s *LineStream) Read(ctx context.Context) ([]byte, error) {
	for {
		var line []byte
		for {
			chunk, err := s.r.ReadSlice('\n')
			if len(line)+len(chunk) > s.limit+2 {
				return nil, fmt.Errorf("%w (more than %d bytes)", ErrMessageTooLarge, s.limit)
			}
			line = append(line, chunk...)
			if err == bufio.ErrBufferFull {
				continue
			}
			if err != nil {
				if err == io.EOF && len(bytes.TrimSpace(line)) > 0 {
					return line, nil
				}
				return nil, err
			}
			break
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		return line, nil
	}
}

// Write writes msg and a newline in one call. A message must not hold a
// raw newline; encoding/json never writes one.
func (s *LineStream) Write(ctx context.Context, msg []byte) error {
	if bytes.IndexByte(msg, '\n') >= 0 {
		return errors.New("jsonrpc: a line-framed message must not contain a newline")
	}
	buf := make([]byte, 0, len(msg)+1)
	buf = append(append(buf, msg...), '\n')
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_, err := s.w.Write(buf)
	return err
}

// Close closes the closer once.
func (s *LineStream) Close() error {
	s.closeOnce.Do(func() {
		if s.closer != nil {
			s.closeErr = s.closer.Close()
		}
	})
	return s.closeErr
}

// WebSocketStream is one JSON message per WebSocket message; it writes
// text messages.
type WebSocketStream struct {
	c         *websocket.Conn
	closeOnce sync.Once
	mu        sync.Mutex
	code      websocket.StatusCode
	reason    string
}

// NewWebSocketStream carries messages on c, with MaxMessage as its read limit.
func NewWebSocketStream(c *websocket.Conn) *WebSocketStream {
	c.SetReadLimit(MaxMessage)
	return &WebSocketStream{c: c, code: websocket.StatusNormalClosure}
}

// Read returns the next message. A binary message is read as the same
// UTF-8 JSON a text one holds: clients that send bytes (Python's
// websockets, a Node Buffer) send binary frames, and dropping them would
// end the connection with nothing said.
func (s *WebSocketStream) Read(ctx context.Context) ([]byte, error) {
	_, b, err := s.c.Read(ctx)
	if err != nil {
		if st := websocket.CloseStatus(err); st == websocket.StatusNormalClosure || st == websocket.StatusGoingAway {
			return nil, io.EOF
		}
		return nil, err
	}
	return b, nil
}

// Write sends msg as one text message.
func (s *WebSocketStream) Write(ctx context.Context, msg []byte) error {
	return s.c.Write(ctx, websocket.MessageText, msg)
}

// CloseWithReason closes with a policy-violation status and reason (at
// most 123 bytes are sent), for a peer that is dropped on purpose.
func (s *WebSocketStream) CloseWithReason(reason string) error {
	s.mu.Lock()
	s.code, s.reason = websocket.StatusPolicyViolation, reason
	s.mu.Unlock()
	return s.Close()
}

// Close sends a close frame and closes the connection.
func (s *WebSocketStream) Close() error {
	var err error
	s.closeOnce.Do(func() {
		s.mu.Lock()
		code, reason := s.code, s.reason
		s.mu.Unlock()
		if len(reason) > 123 {
			reason = reason[:123]
		}
		err = s.c.Close(code, reason)
	})
	return err
}
