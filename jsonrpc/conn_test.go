package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
)

func pipePair(t *testing.T, a, b Options) (*Conn, *Conn) {
	t.Helper()
	x, y := net.Pipe()
	ca := NewConn(NewLineStream(x, x, x), a)
	cb := NewConn(NewLineStream(y, y, y), b)
	go ca.Run(context.Background())
	go cb.Run(context.Background())
	t.Cleanup(func() { ca.Close(); cb.Close() })
	return ca, cb
}

func TestCallBothWaysAndErrorCode(t *testing.T) {
	var server *Conn
	server, client := pipePair(t, Options{Handler: func(ctx context.Context, r *Request) (any, error) {
		switch r.Method {
		case "add":
			var p struct{ A, B int }
			if err := r.DecodeParams(&p); err != nil {
				return nil, err
			}
			return p.A + p.B, nil
		case "ask":
			// A request that asks the peer back must not hold up the
			// read loop that will carry the peer's answer.
			return Async(func() (any, error) {
				var s string
				err := r.Conn.Call(ctx, "name", nil, &s)
				return "hello " + s, err
			}), nil
		case "fail":
			return nil, NewError(-32000, "not_found", "no such session", map[string]any{"sessionId": "s1"})
		}
		return nil, &Error{Code: CodeMethodNotFound, Message: "no " + r.Method}
	}}, Options{Handler: func(ctx context.Context, r *Request) (any, error) {
		if r.Method == "name" {
			return "client", nil
		}
		return nil, errors.New("plain error")
	}})
	_ = server
	ctx := context.Background()
	var n int
	if err := client.Call(ctx, "add", map[string]int{"A": 2, "B": 3}, &n); err != nil || n != 5 {
		t.Fatalf("add = %d, %v", n, err)
	}
	var s string
	if err := client.Call(ctx, "ask", nil, &s); err != nil || s != "hello client" {
		t.Fatalf("ask = %q, %v", s, err)
	}
	err := client.Call(ctx, "fail", nil, nil)
	var e *Error
	if !errors.As(err, &e) || e.Code != -32000 || e.DataCode() != "not_found" || !strings.Contains(string(e.Data), `"sessionId":"s1"`) {
		t.Fatalf("fail = %#v", err)
	}
	err = client.Call(ctx, "add", map[string]any{"C": 1}, nil)
	if !errors.As(err, &e) || e.Code != CodeInvalidParams {
		t.Fatalf("unknown member = %v", err)
	}
	err = server.Call(ctx, "other", nil, nil)
	if !errors.As(err, &e) || e.Code != CodeInternalError || e.Message != "plain error" {
		t.Fatalf("plain error = %v", err)
	}
}

func TestOrderAndNotifications(t *testing.T) {
	var mu sync.Mutex
	var got []string
	done := make(chan struct{})
	_, client := pipePair(t, Options{Handler: func(ctx context.Context, r *Request) (any, error) {
		mu.Lock()
		got = append(got, r.Method)
		n := len(got)
		mu.Unlock()
		if n == 100 {
			close(done)
		}
		return nil, nil
	}}, Options{})
	for i := 0; i < 100; i++ {
		m := "n" + string(rune('a'+i%26))
		if err := client.Notify(context.Background(), m, nil); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("notifications not all handled")
	}
	for i, m := range got {
		if want := "n" + string(rune('a'+i%26)); m != want {
			t.Fatalf("notification %d = %s, want %s", i, m, want)
		}
	}
}

// A request whose id the caller owns is answered on whichever connection
// carried it, through OnResponse: the pending entry is the caller's.
func TestSendRequestOutlivesConn(t *testing.T) {
	responses := make(chan *Response, 2)
	onResp := func(c *Conn, r *Response) { responses <- r }
	answering := Options{Handler: func(ctx context.Context, r *Request) (any, error) {
		return map[string]string{"decision": "allow"}, nil
	}}
	s1, c1 := pipePair(t, Options{OnResponse: onResp}, Options{Handler: func(ctx context.Context, r *Request) (any, error) {
		return Async(func() (any, error) { <-ctx.Done(); return nil, ctx.Err() }), nil
	}})
	if err := s1.SendRequest(context.Background(), StringID("apr-1"), "approval.request", map[string]string{"tool": "Bash"}); err != nil {
		t.Fatal(err)
	}
	c1.Close()
	s2, _ := pipePair(t, Options{OnResponse: onResp}, answering)
	if err := s2.SendRequest(context.Background(), StringID("apr-1"), "approval.request", map[string]string{"tool": "Bash"}); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-responses:
		if r.ID.String() != `"apr-1"` || !strings.Contains(string(r.Result), "allow") {
			t.Fatalf("response = %s %s", r.ID, r.Result)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no response")
	}
}

func TestMalformedInput(t *testing.T) {
	x, y := net.Pipe()
	c := NewConn(NewLineStream(x, x, x), Options{Handler: func(ctx context.Context, r *Request) (any, error) { return "ok", nil }})
	go c.Run(context.Background())
	defer c.Close()
	s := NewLineStream(y, y, y)
	ctx := context.Background()
	for _, tc := range []struct{ in, code, id string }{
		{`{not json`, "-32700", "null"},
		{`[{"jsonrpc":"2.0","id":1,"method":"a"}]`, "-32600", "null"},
		{`{"jsonrpc":"1.0","id":7,"method":"a"}`, "-32600", "7"},
		{`{"jsonrpc":"2.0","id":{"x":1},"method":"a"}`, "-32600", "null"}, // JSON, not a request
		{`{"jsonrpc":"2.0","id":1,"method":["a"]}`, "-32600", "1"},
		{`{"jsonrpc":"2.0","id":2,"method":"a"`, "-32700", "null"},
		{`{"jsonrpc":"2.0","id":8}`, "-32600", "8"},
		{`{"jsonrpc":"2.0","id":"q","method":"a"}`, "", `"q"`},
	} {
		if err := s.Write(ctx, []byte(tc.in)); err != nil {
			t.Fatal(err)
		}
		b, err := s.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var m Message
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s -> %s: %v", tc.in, b, err)
		}
		if idText(m.ID) != tc.id {
			t.Errorf("%s -> id %s, want %s", tc.in, m.ID, tc.id)
		}
		if tc.code == "" {
			if m.Error != nil || string(m.Result) != `"ok"` {
				t.Errorf("%s -> %s", tc.in, b)
			}
			continue
		}
		if m.Error == nil || itoa(m.Error.Code) != tc.code {
			t.Errorf("%s -> %s, want code %s", tc.in, b, tc.code)
		}
	}
}

func idText(id ID) string { b, _ := id.MarshalJSON(); return string(b) }

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestLineLimitAndEOF(t *testing.T) {
	r := strings.NewReader(strings.Repeat("x", 100) + "\n" + `{"a":1}` + "\n\n" + `{"b":2}`)
	s := NewLineStream(r, io.Discard, nil)
	s.SetLimit(50)
	if _, err := s.Read(context.Background()); !errors.Is(err, ErrMessageTooLarge) {
		t.Fatalf("long line: %v", err)
	}
	s = NewLineStream(strings.NewReader(`{"a":1}`+"\r\n\n"+`{"b":2}`), io.Discard, nil)
	for _, want := range []string{`{"a":1}`, `{"b":2}`} {
		b, err := s.Read(context.Background())
		if err != nil || string(b) != want {
			t.Fatalf("read %q %v, want %s", b, err, want)
		}
	}
	if _, err := s.Read(context.Background()); err != io.EOF {
		t.Fatalf("end: %v", err)
	}
}

func TestWebSocket(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws := dialServer(ctx, t, func(ctx context.Context, r *Request) (any, error) {
		if r.Method == "bye" {
			go r.Conn.CloseWithReason("too slow")
			return nil, nil
		}
		var s string
		if err := r.Conn.Call(ctx, "echo", "back", &s); err != nil {
			return nil, err
		}
		return s + "!", nil
	})
	c := NewConn(NewWebSocketStream(ws), Options{Handler: func(ctx context.Context, r *Request) (any, error) {
		var s string
		r.DecodeParams(&s)
		return s, nil
	}})
	go c.Run(ctx)
	// The server's handler calls back synchronously: the client's
	// handler answers while its own Call waits.
	var s string
	if err := c.Call(ctx, "ping", nil, &s); err != nil || s != "back!" {
		t.Fatalf("ping = %q %v", s, err)
	}
	_ = c.Notify(ctx, "bye", nil)
	select {
	case <-c.Done():
	case <-ctx.Done():
		t.Fatal("not closed")
	}
	if websocket.CloseStatus(c.Err()) != websocket.StatusPolicyViolation || !strings.Contains(c.Err().Error(), "too slow") {
		t.Fatalf("close: %v", c.Err())
	}
	if err := c.Call(ctx, "ping", nil, nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("after close: %v", err)
	}
}

// dialServer starts a WebSocket server whose connections h answers and
// dials it.
func dialServer(ctx context.Context, t *testing.T, h Handler) *websocket.Conn {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		NewConn(NewWebSocketStream(ws), Options{Handler: h}).Run(r.Context())
	}))
	t.Cleanup(srv.Close)
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

// TestWebSocketBinaryMessage: a binary message holding a request is read
// as the JSON it holds and answered (in a text message), not dropped with
// the connection.
func TestWebSocketBinaryMessage(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws := dialServer(ctx, t, func(ctx context.Context, r *Request) (any, error) {
		return r.Method + " ok", nil
	})
	defer ws.CloseNow()
	if err := ws.Write(ctx, websocket.MessageBinary, []byte(`{"jsonrpc":"2.0","id":"b","method":"x"}`)); err != nil {
		t.Fatal(err)
	}
	typ, b, err := ws.Read(ctx)
	if err != nil {
		t.Fatalf("no answer to a binary message: %v", err)
	}
	if typ != websocket.MessageText || string(b) != `{"jsonrpc":"2.0","id":"b","result":"x ok"}` {
		t.Fatalf("answer: %v %s", typ, b)
	}
}

// blockedStream's Read never returns: a terminal's or a pipe's stdin,
// which closing does not interrupt.
type blockedStream struct{ written chan []byte }

func (blockedStream) Read(context.Context) ([]byte, error) { select {} }
func (s blockedStream) Write(_ context.Context, b []byte) error {
	s.written <- append([]byte(nil), b...)
	return nil
}
func (blockedStream) Close() error { return nil }

// TestRunEndsWhileReadBlocked: a cancelled context ends Run even though
// the stream's read never returns.
func TestRunEndsWhileReadBlocked(t *testing.T) {
	c := NewConn(blockedStream{make(chan []byte, 1)}, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after its context ended, its read being blocked")
	}
}

// linesStream reads its lines, then EOF; it keeps what is written.
type linesStream struct {
	mu      sync.Mutex
	lines   [][]byte
	written [][]byte
}

func (s *linesStream) Read(context.Context) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.lines) == 0 {
		return nil, io.EOF
	}
	l := s.lines[0]
	s.lines = s.lines[1:]
	return l, nil
}

func (s *linesStream) Write(_ context.Context, b []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.written = append(s.written, append([]byte(nil), b...))
	return nil
}

func (s *linesStream) Close() error { return nil }

// TestEOFAnswersWhatWasReceived: 100 requests and EOF at once: every one
// is answered before Run returns, the slow ones (Async) too, and OnEOF is
// called.
func TestEOFAnswersWhatWasReceived(t *testing.T) {
	st := &linesStream{}
	for i := 1; i <= 100; i++ {
		st.lines = append(st.lines, []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"m","params":{}}`, i)))
	}
	var eof atomic.Bool
	c := NewConn(st, Options{OnEOF: func() { eof.Store(true) }, Handler: func(ctx context.Context, r *Request) (any, error) {
		if string(r.ID) == "7" {
			return Async(func() (any, error) { time.Sleep(50 * time.Millisecond); return "late", nil }), nil
		}
		time.Sleep(time.Millisecond)
		return "ok", nil
	}})
	if err := c.Run(context.Background()); !errors.Is(err, io.EOF) {
		t.Fatalf("Run: %v", err)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if len(st.written) != 100 {
		t.Errorf("%d answers of 100", len(st.written))
	}
	if !eof.Load() {
		t.Error("OnEOF not called")
	}
}
