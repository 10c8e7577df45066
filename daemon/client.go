package daemon

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/agentjq/agentjq/internal/asyncq"
	"github.com/agentjq/agentjq/internal/bridge"
	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/jsonrpc"
)

// client is one connection.
type client struct {
	srv      *Server
	id       string
	name     string
	needAuth bool
	authed   atomic.Bool
	conn     *jsonrpc.Conn

	// out is the bounded queue of messages to the client: a session never
	// waits for a client; one that stalls is dropped (overloaded).
	out     *asyncq.Queue[struct{}]
	dropped atomic.Bool

	mu   sync.Mutex
	subs map[string]*subscription // by session id
}

func (c *client) who() string {
	if c.name != "" {
		return c.id + " (" + c.name + ")"
	}
	return c.id
}

// hardCap is, in limits, the most a reading client's queue holds. A
// client that reads is kept through a burst: past its limit (QueueBytes)
// the queue still takes messages while the client's writes go on, up to
// hardCap times the limit. A client that takes nothing for the stall bound
// while messages wait, or that is so far behind that the hard cap is
// reached, is dropped.
const hardCap = 4

// newOutQueue is the client's queue of messages, bounded by bytes; its
// goroutine writes them to the connection.
func (c *client) newOutQueue() *asyncq.Queue[struct{}] {
	return asyncq.New(asyncq.Options[struct{}]{Limit: c.srv.opts.QueueBytes}, func(q *asyncq.Queue[struct{}], b asyncq.Batch[struct{}]) error {
		for _, it := range b.Items {
			if c.dropped.Load() {
				return errDropped
			}
			if err := c.conn.WriteRaw(c.conn.Context(), it.B); err != nil {
				return err
			}
			c.noteSent(it.B)
			q.Progress()
		}
		return nil
	})
}

var errDropped = errors.New("the client was dropped")

// send queues b without waiting; a client that is stalled or too far
// behind is dropped instead.
func (c *client) send(b []byte) bool {
	if c.dropped.Load() {
		return false
	}
	n := c.out.Queued()
	if c.out.StalledFor() >= c.srv.opts.StallTimeout || (n > 0 && n+len(b) > hardCap*c.srv.opts.QueueBytes) {
		c.overflow()
		return false
	}
	return c.out.Put(struct{}{}, b)
}

// sendWait queues b, waiting for room below the limit (replay, on the
// client's own goroutine).
func (c *client) sendWait(ctx context.Context, b []byte) bool {
	return !c.dropped.Load() && c.out.WaitRoom(len(b), 0, ctx.Done()) && c.out.Put(struct{}{}, b)
}

// queued is the bytes waiting for the client.
func (c *client) queued() int { return c.out.Queued() }

func (c *client) overflow() {
	if !c.dropped.CompareAndSwap(false, true) {
		return
	}
	last := map[string]int64{}
	c.mu.Lock()
	for id, sub := range c.subs {
		last[id] = sub.sent.Load()
	}
	c.mu.Unlock()
	msg := notification("system.disconnect", DisconnectParams{Code: CodeOverloaded,
		Reason: fmt.Sprintf("the client fell behind (%d bytes queued, nothing taken for %s); resume with session.resume from the last seq received",
			c.queued(), c.srv.opts.StallTimeout), LastSeq: last})
	go func() {
		// The notice waits behind the write that is stuck, if any: it is
		// given noticeWait, and the connection is closed either way (the
		// stuck write then fails).
		wait := c.srv.noticeWait
		wrote := make(chan struct{})
		go func() {
			defer close(wrote)
			ctx, cancel := context.WithTimeout(context.Background(), wait)
			defer cancel()
			_ = c.conn.WriteRaw(ctx, msg)
		}()
		bridge.WaitBounded(wrote, wait)
		c.conn.CloseWithReason("overloaded: fell behind; resume by seq")
	}()
}

// noteSent remembers the last seq sent per session, for system.disconnect.
func (c *client) noteSent(b []byte) {
	if !strings.HasPrefix(string(b[:min(len(b), 60)]), `{"jsonrpc":"2.0","method":"session.event"`) {
		return
	}
	var m struct {
		Params struct {
			SessionID string `json:"sessionId"`
			Seq       int64  `json:"seq"`
		} `json:"params"`
	}
	if json.Unmarshal(b, &m) != nil {
		return
	}
	c.mu.Lock()
	sub := c.subs[m.Params.SessionID]
	c.mu.Unlock()
	if sub != nil {
		sub.sent.Store(m.Params.Seq)
	}
}

func (c *client) onResponse(_ *jsonrpc.Conn, r *jsonrpc.Response) {
	var id string
	if json.Unmarshal(r.ID, &id) != nil {
		c.srv.opts.Logf("agentjq serve: %s: a response to unknown request %s ignored", c.who(), r.ID)
		return
	}
	if r.Error != nil {
		c.srv.opts.Logf("agentjq serve: %s: approval %s: the client answered an error: %v", c.who(), id, r.Error)
		return
	}
	var d Decision
	if err := strictDecode(r.Result, &d); err != nil {
		c.srv.opts.Logf("agentjq serve: %s: approval %s: %v", c.who(), id, err)
		return
	}
	if _, err := c.srv.approvals.respond(id, c.who(), d); err != nil {
		c.srv.opts.Logf("agentjq serve: %s: late answer to approval %s ignored: %v", c.who(), id, err)
	}
}

func strictDecode(b []byte, v any) error {
	r := jsonrpc.Request{Method: "response", Params: b}
	return r.DecodeParams(v)
}

func (c *client) handle(ctx context.Context, req *jsonrpc.Request) (any, error) {
	if req.Method != "system.hello" && c.needAuth && !c.authed.Load() {
		return nil, rpcErr(CodeUnauthorized, "call system.hello with the daemon's token first", nil)
	}
	if !c.needAuth && req.Method != "system.hello" {
		c.authed.Store(true)
	}
	for _, n := range notOffered {
		if req.Method == n {
			return nil, rpcErr(CodeNotImplemented, req.Method+" is a method of the seed protocol that agentjq does not offer (see agentjq-daemon(7))", nil)
		}
	}
	h, ok := handlers[req.Method]
	if !ok {
		return nil, rpcErr(CodeNotFound, "no method "+strconv.Quote(req.Method), nil)
	}
	res, err := h(ctx, c, req)
	if e, ok := err.(*jsonrpc.Error); ok && e.Code == jsonrpc.CodeInvalidParams && e.DataCode() == "" {
		return nil, rpcErr(CodeInvalidParams, e.Message, nil)
	}
	return res, err
}

type handlerFunc func(ctx context.Context, c *client, req *jsonrpc.Request) (any, error)

var handlers map[string]handlerFunc

func init() {
	handlers = map[string]handlerFunc{
		"system.hello":                withParams(hello),
		"system.info":                 withParams(info),
		"system.health":               func(context.Context, *client, *jsonrpc.Request) (any, error) { return HealthResult{OK: true}, nil },
		"system.shutdown":             shutdownMethod,
		"session.create":              withParams(create),
		"session.list":                withParams(list),
		"session.subscribe":           onSession(false, subscribe),
		"session.unsubscribe":         onSession(false, unsubscribe),
		"session.resume":              onSession(false, resume),
		"session.prompt":              onSession(true, prompt),
		"session.interrupt":           onSession(true, interrupt),
		"session.setTitle":            onSession(true, setTitle),
		"session.steer":               onSession(true, steer),
		"session.fork":                onSession(false, fork),
		"session.setMode":             onSession(true, setMode),
		"session.compact":             onSession(true, compact),
		"session.close":               onSession(true, closeSession),
		"session.deleteSaved":         onSession(false, deleteSaved),
		"command.list":                onSession(false, commandList),
		"command.run":                 onSession(true, commandRun),
		"tool.list":                   onSession(false, toolList),
		"backend.set":                 onSession(true, backendSet),
		"approval.list":               withParams(approvalList),
		"approval.respond":            withParams(approvalRespond),
		"permission.allowlist.list":   withParams(allowlistList),
		"permission.allowlist.add":    withParams(allowlistAdd),
		"permission.allowlist.remove": withParams(allowlistRemove),
	}
}

func hello(ctx context.Context, c *client, p HelloParams) (any, error) {
	if c.needAuth && subtle.ConstantTimeCompare([]byte(p.Token), []byte(c.srv.token)) != 1 {
		return nil, rpcErr(CodeUnauthorized, "wrong token (read it from the file daemon.json names)", nil)
	}
	if major(p.ProtocolVersion) != major(ProtocolVersion) || major(ProtocolVersion) == "0" && minor(p.ProtocolVersion) != minor(ProtocolVersion) {
		return nil, rpcErr(CodeProtocolIncompatible, fmt.Sprintf("client protocol %q, server protocol %s", p.ProtocolVersion, ProtocolVersion),
			map[string]any{"serverProtocolVersion": ProtocolVersion})
	}
	c.name = p.ClientName
	c.authed.Store(true)
	versions := c.srv.opts.CLIVersions
	if versions == nil {
		versions = protocol.CheckedVersions
	}
	var agents []AgentProfile
	for _, name := range []string{"claude"} {
		p := bridge.Profiles[name]
		bin := c.srv.opts.AgentBin
		if bin == "" {
			bin = p.Name
		}
		agents = append(agents, AgentProfile{Name: name, Binary: bin, Versions: versions})
	}
	return HelloResult{ProtocolVersion: ProtocolVersion, ServerVersion: c.srv.opts.ServerVersion,
		Capabilities: Capabilities(), Agents: agents, ClientID: c.id}, nil
}

// major and minor of a semver; pre-1.0 a minor change is breaking.
func major(v string) string {
	v = strings.TrimPrefix(v, "v")
	m, _, _ := strings.Cut(v, ".")
	return m
}

func minor(v string) string {
	parts := strings.SplitN(strings.TrimPrefix(v, "v"), ".", 3)
	if len(parts) < 2 {
		return ""
	}
	return parts[1]
}

func info(ctx context.Context, c *client, p Empty) (any, error) {
	s := c.srv
	s.mu.Lock()
	n, nc := len(s.sessions), len(s.clients)
	s.mu.Unlock()
	return InfoResult{ProtocolVersion: ProtocolVersion, ServerVersion: s.opts.ServerVersion, Pid: os.Getpid(), Home: s.opts.Home,
		Socket: s.socketPath, Port: s.port, Sessions: n, Clients: nc, Policy: s.opts.Allowlist}, nil
}

func shutdownMethod(ctx context.Context, c *client, req *jsonrpc.Request) (any, error) {
	go c.srv.Shutdown()
	return Empty{}, nil
}
