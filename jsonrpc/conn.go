package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// ErrClosed is the error of a Call, Notify or SendRequest on a Conn whose
// stream has ended.
var ErrClosed = errors.New("jsonrpc: connection closed")

// MaxQueued is how many received requests and notifications a Conn holds
// while its handler is busy; a peer that sends more is disconnected.
const MaxQueued = 4096

// Handler answers a request or takes a notification. It is called on one
// goroutine, one message at a time, in the order the messages arrived, so
// a peer may pipeline (hello, then the next call) without racing itself.
// A request whose answer takes long (a turn, a question to the peer)
// returns Async(f): f then runs on its own goroutine, later messages are
// dispatched meanwhile, and f's outcome is the response. The result is
// marshalled with encoding/json; an error that is an *Error is sent as it
// is, any other as an internal error with its text. For a notification
// the result is dropped and an error logged.
type Handler func(ctx context.Context, req *Request) (result any, err error)

// Async wraps f as a handler result that is computed on its own goroutine.
func Async(f func() (any, error)) any { return asyncResult(f) }

type asyncResult func() (any, error)

// Options configure a Conn.
type Options struct {
	// Handler receives the peer's requests and notifications; nil answers
	// every request "method not found" and ignores notifications.
	Handler Handler
	// OnResponse receives every response whose id this Conn's Call did
	// not issue: the responses to SendRequest. It runs on the read
	// goroutine and must not block.
	OnResponse func(c *Conn, r *Response)
	// Logf reports what has no one to answer to (a stray response, a
	// failed notification); nil uses the log package.
	Logf func(format string, args ...any)
	// Drain bounds what is owed at the end of the peer's input: after an
	// orderly EOF the Conn stops reading but still answers every request
	// it had received (queued ones too) and lets their handlers write,
	// for at most Drain; then it ends. 0: DefaultDrain; negative: end at
	// once, dropping them.
	Drain time.Duration
	// OnEOF, when set, is called once at an orderly EOF of the peer's
	// input, before the drain: a front end ends what would keep a handler
	// waiting (acp's sessions) there. It must not block.
	OnEOF func()
}

// DefaultDrain is Options.Drain's default.
const DefaultDrain = 5 * time.Second

// Conn is one JSON-RPC peer over a Stream. Create it with NewConn, then
// call Run, which reads until the stream ends; Call, Notify and
// SendRequest may be used from any goroutine once Run has been started.
type Conn struct {
	stream Stream
	opts   Options

	wmu sync.Mutex

	nextID  atomic.Int64
	pmu     sync.Mutex
	pending map[string]chan *Message
	closed  bool

	qmu    sync.Mutex
	queue  []*Request
	qready chan struct{}
	// busy counts the requests received and not yet answered (queued, or
	// in a handler, sync or async); idle is signalled when it drops to 0.
	busy int
	idle chan struct{}

	ctx    context.Context
	cancel context.CancelCauseFunc
	done   chan struct{}
	err    error
	once   sync.Once
}

// NewConn is a Conn on s.
func NewConn(s Stream, opts Options) *Conn {
	if opts.Logf == nil {
		opts.Logf = log.Printf
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	return &Conn{
		stream:  s,
		opts:    opts,
		pending: map[string]chan *Message{},
		qready:  make(chan struct{}, 1),
		idle:    make(chan struct{}, 1),
		ctx:     ctx,
		cancel:  cancel,
		done:    make(chan struct{}),
	}
}

// Stream is the stream the Conn runs on.
func (c *Conn) Stream() Stream { return c.stream }

// Done is closed when the Conn has ended.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err is why the Conn ended (nil while it runs, io.EOF for an orderly end).
func (c *Conn) Err() error {
	select {
	case <-c.done:
		return c.err
	default:
		return nil
	}
}

// Run reads and dispatches messages until the stream ends, ctx is done or
// Close is called, then fails every pending Call with ErrClosed, cancels
// the handlers' context and closes the stream. It returns io.EOF for an
// orderly end of the stream, once what was owed is answered (Drain).
//
// Run returns as soon as the Conn ends, even while a read of the stream
// is blocked (a terminal's or a pipe's stdin, which closing does not
// interrupt): that read is left to its goroutine.
func (c *Conn) Run(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() { c.shutdown(context.Cause(ctx)) })
	defer stop()
	go c.dispatch()
	go c.readLoop()
	<-c.done
	return c.err
}

func (c *Conn) readLoop() {
	for {
		b, err := c.stream.Read(c.ctx)
		if err != nil {
			if cause := context.Cause(c.ctx); cause != nil {
				err = cause
			}
			if errors.Is(err, io.EOF) {
				c.drain()
			}
			c.shutdown(err)
			return
		}
		if c.ctx.Err() != nil {
			// Ended while this read was blocked: Run has returned, and
			// nothing more is dispatched or delivered.
			return
		}
		if err := c.receive(b); err != nil {
			c.shutdown(err)
			return
		}
	}
}

// drain waits, at most Options.Drain, until every request received has
// been answered: the peer closed its input, not its output.
func (c *Conn) drain() {
	d := c.opts.Drain
	if d == 0 {
		d = DefaultDrain
	}
	if d < 0 {
		return
	}
	if c.opts.OnEOF != nil {
		c.opts.OnEOF()
	}
	if n := c.waitAnswered(d); n > 0 {
		c.opts.Logf("jsonrpc: %d request(s) still unanswered %s after the peer's input ended; dropped", n, d)
	}
}

// waitAnswered waits, at most d, until every request received has been
// answered, or the Conn has ended. It returns how many are unanswered.
func (c *Conn) waitAnswered(d time.Duration) int {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		c.qmu.Lock()
		busy := c.busy
		c.qmu.Unlock()
		if busy == 0 {
			return 0
		}
		select {
		case <-c.idle:
		case <-t.C:
			return busy
		case <-c.done:
			return 0
		}
	}
}

// answered notes that one request received has been answered.
func (c *Conn) answered() {
	c.qmu.Lock()
	c.busy--
	idle := c.busy == 0
	c.qmu.Unlock()
	if idle {
		select {
		case c.idle <- struct{}{}:
		default:
		}
	}
}

// Close ends the Conn.
func (c *Conn) Close() error {
	c.shutdown(ErrClosed)
	<-c.done
	return nil
}

// CloseAnswered ends the Conn once every request received has been
// answered (the answer written), waiting at most d: a request that asked
// for the end still gets its answer.
func (c *Conn) CloseAnswered(d time.Duration) error {
	c.waitAnswered(d)
	return c.Close()
}

// CloseWithReason ends the Conn, telling the peer why where the framing
// can (a WebSocket close reason).
func (c *Conn) CloseWithReason(reason string) error {
	if s, ok := c.stream.(interface{ CloseWithReason(string) error }); ok {
		_ = s.CloseWithReason(reason)
	}
	c.shutdown(fmt.Errorf("jsonrpc: closed: %s", reason))
	<-c.done
	return nil
}

func (c *Conn) shutdown(err error) {
	c.once.Do(func() {
		if err == nil {
			err = ErrClosed
		}
		c.err = err
		c.cancel(err)
		_ = c.stream.Close()
		c.pmu.Lock()
		c.closed = true
		for id, ch := range c.pending {
			close(ch)
			delete(c.pending, id)
		}
		c.pmu.Unlock()
		close(c.done)
	})
}

// receive sorts one message: responses are delivered at once (a handler
// may be waiting for one), requests and notifications are queued for the
// dispatcher in arrival order.
func (c *Conn) receive(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '[' {
		return c.replyError(ID("null"), &Error{Code: CodeInvalidRequest, Message: "batches are not supported"})
	}
	var m Message
	if err := json.Unmarshal(b, &m); err != nil {
		var probe struct {
			ID ID `json:"id"`
		}
		id := ID("null")
		if json.Unmarshal(b, &probe) == nil && !probe.ID.IsZero() {
			id = probe.ID
			return c.replyError(id, &Error{Code: CodeInvalidRequest, Message: "invalid request: " + err.Error()})
		}
		if json.Valid(b) {
			// JSON, but not a request: an id that is an object, say.
			return c.replyError(id, &Error{Code: CodeInvalidRequest, Message: "invalid request: " + err.Error()})
		}
		return c.replyError(id, &Error{Code: CodeParseError, Message: "parse error: " + err.Error()})
	}
	if m.JSONRPC != Version {
		if m.Method == "" && !m.ID.IsZero() {
			c.opts.Logf("jsonrpc: response %s without jsonrpc 2.0 dropped", m.ID)
			return nil
		}
		id := m.ID
		if id.IsZero() {
			id = ID("null")
		}
		return c.replyError(id, &Error{Code: CodeInvalidRequest, Message: `invalid request: "jsonrpc" must be "2.0"`})
	}
	switch {
	case m.Method != "":
		if string(m.ID) == "null" {
			return c.replyError(ID("null"), &Error{Code: CodeInvalidRequest, Message: "invalid request: a request id must not be null"})
		}
		return c.enqueue(&Request{ID: m.ID, Method: m.Method, Params: m.Params, Conn: c})
	case !m.ID.IsZero() && (m.Result != nil || m.Error != nil):
		c.deliver(&m)
		return nil
	default:
		id := m.ID
		if id.IsZero() {
			id = ID("null")
		}
		return c.replyError(id, &Error{Code: CodeInvalidRequest, Message: "invalid request: neither a method nor a result or error"})
	}
}

func (c *Conn) deliver(m *Message) {
	c.pmu.Lock()
	ch, ok := c.pending[m.ID.String()]
	if ok {
		delete(c.pending, m.ID.String())
	}
	c.pmu.Unlock()
	if ok {
		ch <- m
		return
	}
	if c.opts.OnResponse != nil {
		c.opts.OnResponse(c, &Response{ID: m.ID, Result: m.Result, Error: m.Error})
		return
	}
	c.opts.Logf("jsonrpc: response to unknown request %s ignored", m.ID)
}

func (c *Conn) enqueue(r *Request) error {
	c.qmu.Lock()
	if len(c.queue) >= MaxQueued {
		c.qmu.Unlock()
		return fmt.Errorf("jsonrpc: peer sent more than %d messages its handler had not taken", MaxQueued)
	}
	c.queue = append(c.queue, r)
	c.busy++
	c.qmu.Unlock()
	select {
	case c.qready <- struct{}{}:
	default:
	}
	return nil
}

func (c *Conn) dispatch() {
	for {
		c.qmu.Lock()
		var r *Request
		if len(c.queue) > 0 {
			r = c.queue[0]
			c.queue[0] = nil
			c.queue = c.queue[1:]
		}
		c.qmu.Unlock()
		if r == nil {
			select {
			case <-c.qready:
				continue
			case <-c.done:
				return
			}
		}
		if c.ctx.Err() != nil {
			return
		}
		c.handle(r)
	}
}

func (c *Conn) handle(r *Request) {
	if c.opts.Handler == nil {
		defer c.answered()
		if !r.IsNotification() {
			_ = c.replyError(r.ID, &Error{Code: CodeMethodNotFound, Message: "method not found: " + r.Method})
		}
		return
	}
	res, err := c.call(r)
	if f, ok := res.(asyncResult); ok && err == nil {
		go func() {
			defer c.answered()
			res, err := safely(r.Method, f)
			c.finish(r, res, err)
		}()
		return
	}
	defer c.answered()
	c.finish(r, res, err)
}

func (c *Conn) call(r *Request) (res any, err error) {
	return safely(r.Method, func() (any, error) { return c.opts.Handler(c.ctx, r) })
}

// safely turns a handler's panic into an internal error: one bad request
// must not take the connection, and the daemon with it, down.
func safely(method string, f func() (any, error)) (res any, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = nil, &Error{Code: CodeInternalError, Message: fmt.Sprintf("%s: internal error: %v", method, p)}
		}
	}()
	return f()
}

func (c *Conn) finish(r *Request, res any, err error) {
	if r.IsNotification() {
		if err != nil {
			c.opts.Logf("jsonrpc: notification %s: %v", r.Method, err)
		}
		return
	}
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			e = &Error{Code: CodeInternalError, Message: err.Error()}
		}
		_ = c.replyError(r.ID, e)
		return
	}
	raw, merr := marshalValue(res)
	if merr != nil {
		_ = c.replyError(r.ID, &Error{Code: CodeInternalError, Message: fmt.Sprintf("%s: result: %v", r.Method, merr)})
		return
	}
	if raw == nil {
		raw = json.RawMessage("null")
	}
	_ = c.write(&Message{JSONRPC: Version, ID: r.ID, Result: raw})
}

func marshalValue(v any) (json.RawMessage, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		return v, nil
	}
	return json.Marshal(v)
}

func (c *Conn) replyError(id ID, e *Error) error {
	if err := c.write(&Message{JSONRPC: Version, ID: id, Error: e}); err != nil && !errors.Is(err, ErrClosed) {
		return err
	}
	return nil
}

func (c *Conn) write(m *Message) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return c.WriteRaw(c.ctx, b)
}

// WriteRaw sends an already encoded message as it is (a notification the
// caller encoded once for many peers).
func (c *Conn) WriteRaw(ctx context.Context, msg []byte) error {
	if c.ctx.Err() != nil {
		return ErrClosed
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := c.stream.Write(ctx, msg); err != nil {
		if c.ctx.Err() != nil {
			return ErrClosed
		}
		c.shutdown(err)
		return err
	}
	return nil
}

// Notify sends a notification.
func (c *Conn) Notify(ctx context.Context, method string, params any) error {
	raw, err := marshalValue(params)
	if err != nil {
		return err
	}
	return c.WriteRawMessage(ctx, &Message{JSONRPC: Version, Method: method, Params: raw})
}

// WriteRawMessage encodes and sends m.
func (c *Conn) WriteRawMessage(ctx context.Context, m *Message) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return c.WriteRaw(ctx, b)
}

// SendRequest sends a request with the caller's id; its response goes to
// Options.OnResponse. Use string ids: Call numbers its own.
func (c *Conn) SendRequest(ctx context.Context, id ID, method string, params any) error {
	if id.IsZero() {
		return errors.New("jsonrpc: SendRequest needs an id")
	}
	raw, err := marshalValue(params)
	if err != nil {
		return err
	}
	return c.WriteRawMessage(ctx, &Message{JSONRPC: Version, ID: id, Method: method, Params: raw})
}

// Call sends a request and waits for its response, decoding the result
// into result (a pointer, or nil to drop it). The peer's error is
// returned as an *Error; ErrClosed when the Conn ends first.
func (c *Conn) Call(ctx context.Context, method string, params, result any) error {
	raw, err := marshalValue(params)
	if err != nil {
		return err
	}
	id := ID(strconv.AppendInt(nil, c.nextID.Add(1), 10))
	ch := make(chan *Message, 1)
	c.pmu.Lock()
	if c.closed {
		c.pmu.Unlock()
		return ErrClosed
	}
	c.pending[id.String()] = ch
	c.pmu.Unlock()
	forget := func() {
		c.pmu.Lock()
		delete(c.pending, id.String())
		c.pmu.Unlock()
	}
	if err := c.WriteRawMessage(ctx, &Message{JSONRPC: Version, ID: id, Method: method, Params: raw}); err != nil {
		forget()
		return err
	}
	select {
	case m, ok := <-ch:
		if !ok {
			return ErrClosed
		}
		if m.Error != nil {
			return m.Error
		}
		if result != nil && len(m.Result) > 0 {
			if err := json.Unmarshal(m.Result, result); err != nil {
				return fmt.Errorf("jsonrpc: %s: result: %w", method, err)
			}
		}
		return nil
	case <-ctx.Done():
		forget()
		return ctx.Err()
	}
}

// Context is cancelled when the Conn ends; handlers get it.
func (c *Conn) Context() context.Context { return c.ctx }
