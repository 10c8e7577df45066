// Package acp is agentjq's Agent Client Protocol front end: an ACP agent
// on stdio (JSON-RPC 2.0, one message per line) whose sessions are
// bridge.Run sessions of claude. It adds only the transport, the mapping
// of the agent's stream to session/update notifications, and the editor
// as the person at the end of the approval chain (session/
// request_permission for what the policies leave undecided). Spawning,
// deciding and recording stay where they are: the caller builds each
// session's bridge.Options (cmd/acp.go, with spawn's sessionOptions).
//
// Where it sits: a front end over bridge.Run like spawn and serve; the
// editor is approve's ChainOptions.Person, asked only what the policies
// leave undecided, once per tool call.
package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentjq/agentjq/approve"
	"github.com/agentjq/agentjq/internal/bridge"
	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/jsonrpc"
	"github.com/agentjq/agentjq/recording"
)

// SessionConfig is what the front end asks of one new session.
type SessionConfig struct {
	// ID is the ACP session id, also claude's session id (a UUID).
	ID  string
	Cwd string
	// MCPServers are passed on to claude (--mcp-config).
	MCPServers []MCPServer
	// Resume: continue claude's session ID (session/load, session/resume).
	Resume bool
	// ForkOf, when set, is the session this one forks: claude resumes
	// that one's conversation under the new ID (--fork-session).
	ForkOf string
	// Mode, when set, is the permission mode to start claude in (the
	// one a session taken up again was left in).
	Mode string
	// Person is the last stage of the approval chain: the editor.
	Person approve.Decider
	// Record is the recording file for this session ("" records nothing).
	Record string
}

// Starter builds the bridge options of one session; done releases what
// they hold (the approval chain, the recording) once the session is over.
// Stdin and Stdout are set by the acp package.
type Starter func(cfg SessionConfig) (opts bridge.Options, done func() error, err error)

// Options configure the agent.
type Options struct {
	Start Starter
	// RecordDir holds one recording per session (and per load of it):
	// session/load replays them. "" means no recordings and no loadSession.
	RecordDir string
	// Mode is the permission mode sessions start in; AllowBypass offers
	// bypassPermissions among the modes.
	Mode        string
	AllowBypass bool
	Version     string
	// Stderr takes the sessions' diagnostics (editors log an agent's stderr).
	Stderr io.Writer
	// ControlTimeout bounds the wait for the agent's answer to set_mode.
	ControlTimeout time.Duration
	// Lifecycle passes the front end's signals to every session (nil: a
	// Lifecycle of Grace that gets none); Grace is each shutdown stage's
	// wait, session/cancel's bound and the stalled editor's (0: 5s).
	Lifecycle *bridge.Lifecycle
	Grace     time.Duration
}

// Agent is one ACP connection and its sessions.
type Agent struct {
	opts Options
	conn *jsonrpc.Conn
	life *bridge.Lifecycle

	mu       sync.Mutex
	sessions map[string]*session
	closing  bool // no new sessions: the front end is ending
	wg       sync.WaitGroup

	// asks are the requests agentjq sent the client (request_permission),
	// by id, awaiting their responses.
	askMu  sync.Mutex
	askSeq int
	asks   map[string]chan *jsonrpc.Response
}

// Serve speaks ACP on r and w until the client closes r (or ctx ends),
// then ends every session and waits for them.
//
// Its end is the bridge's lifecycle: when r ends, every request received
// is still answered (a prompt in flight is interrupted and answered), for
// at most the Lifecycle's bound; when ctx ends (the first signal), idle
// sessions end at once and running turns are interrupted, later signals
// escalating each session as under spawn. An editor that stops reading w
// is abandoned after a grace.
func Serve(ctx context.Context, r io.Reader, w io.Writer, closer io.Closer, opts Options) error {
	if opts.Stderr == nil {
		opts.Stderr = io.Discard
	}
	if opts.Mode == "" {
		opts.Mode = "default"
	}
	if opts.ControlTimeout <= 0 {
		opts.ControlTimeout = 30 * time.Second
	}
	if opts.Grace <= 0 {
		opts.Grace = 5 * time.Second
	}
	life := opts.Lifecycle
	if life == nil {
		life = bridge.NewLifecycle(opts.Grace)
	}
	out := bridge.NewPeerWriter(w, opts.Grace)
	a := &Agent{opts: opts, life: life, sessions: map[string]*session{}, asks: map[string]chan *jsonrpc.Response{}}
	a.conn = jsonrpc.NewConn(jsonrpc.NewLineStream(r, out, closer), jsonrpc.Options{
		Handler:    a.handle,
		OnResponse: a.response,
		Logf:       func(f string, args ...any) { fmt.Fprintf(opts.Stderr, "agentjq acp: "+f+"\n", args...) },
		// At EOF the sessions end, so that the prompts in flight are
		// answered within the drain.
		Drain: life.Bound(),
		OnEOF: a.closeAll,
	})
	err := a.conn.Run(ctx)
	a.closeAll()
	all := make(chan struct{})
	go func() { a.wg.Wait(); close(all) }()
	if !bridge.WaitBounded(all, life.Bound()) {
		fmt.Fprintf(opts.Stderr, "agentjq acp: sessions still ending %s after the end; leaving them\n", life.Bound())
	}
	if lost := out.Close(); lost > 0 {
		fmt.Fprintf(opts.Stderr, "agentjq acp: stdout is not being read; gave up on the last %d bytes\n", lost)
	}
	if errors.Is(err, io.EOF) || ctx.Err() != nil {
		return nil
	}
	return err
}

// closeAll ends every session (see session.close).
func (a *Agent) closeAll() {
	a.mu.Lock()
	a.closing = true
	open := make([]*session, 0, len(a.sessions))
	for _, s := range a.sessions {
		open = append(open, s)
	}
	a.mu.Unlock()
	for _, s := range open {
		s.close()
	}
}

// errCode is an ACP error: JSON-RPC codes, -32002 for a missing resource.
func errCode(code int, format string, args ...any) *jsonrpc.Error {
	return &jsonrpc.Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

const codeNotFound = -32002

func (a *Agent) handle(ctx context.Context, req *jsonrpc.Request) (any, error) {
	switch req.Method {
	case "initialize":
		var p initializeRequest
		if err := decode(req, &p); err != nil {
			return nil, err
		}
		return a.initialize(p), nil
	case "authenticate":
		return struct{}{}, nil
	case "session/new":
		var p newSessionRequest
		if err := decode(req, &p); err != nil {
			return nil, err
		}
		s, err := a.newSession(SessionConfig{ID: protocol.NewUUID(), Cwd: p.Cwd, MCPServers: p.MCPServers})
		if err != nil {
			return nil, err
		}
		return newSessionResponse{SessionID: s.id, Modes: s.modes()}, nil
	case "session/load", "session/resume", "session/fork":
		var p loadSessionRequest
		if err := decode(req, &p); err != nil {
			return nil, err
		}
		// Replaying a long recording is slow: later messages are taken
		// meanwhile, and the session's updates all precede the response.
		return jsonrpc.Async(func() (any, error) { return a.reopen(req.Method, p) }), nil
	case "session/list":
		var p listSessionsRequest
		if err := decode(req, &p); err != nil {
			return nil, err
		}
		return jsonrpc.Async(func() (any, error) { return a.list(p) }), nil
	case "session/close":
		var p sessionIDParams
		if err := decode(req, &p); err != nil {
			return nil, err
		}
		s, err := a.session(p.SessionID)
		if err != nil {
			return nil, err
		}
		return jsonrpc.Async(func() (any, error) { return s.closeWait() }), nil
	case "session/prompt":
		var p promptRequest
		if err := decode(req, &p); err != nil {
			return nil, err
		}
		s, err := a.session(p.SessionID)
		if err != nil {
			return nil, err
		}
		return jsonrpc.Async(func() (any, error) { return s.prompt(ctx, p.Prompt) }), nil
	case "session/cancel":
		var p sessionIDParams
		if err := decode(req, &p); err != nil {
			return nil, err
		}
		if s, err := a.session(p.SessionID); err == nil {
			s.cancel()
		}
		return nil, nil
	case "session/set_mode":
		var p setModeRequest
		if err := decode(req, &p); err != nil {
			return nil, err
		}
		s, err := a.session(p.SessionID)
		if err != nil {
			return nil, err
		}
		return jsonrpc.Async(func() (any, error) { return s.setMode(ctx, p.ModeID) }), nil
	}
	if req.IsNotification() {
		return nil, nil
	}
	return nil, errCode(jsonrpc.CodeMethodNotFound, "method not found: %s", req.Method)
}

// decode reads params, tolerating members agentjq does not use (ACP adds
// optional fields in minor versions; unknown ones are not errors).
func decode(req *jsonrpc.Request, v any) error {
	params := req.Params
	if len(params) == 0 || string(params) == "null" {
		params = []byte("{}")
	}
	if err := json.Unmarshal(params, v); err != nil {
		return errCode(jsonrpc.CodeInvalidParams, "%s: params: %v", req.Method, err)
	}
	return nil
}

func (a *Agent) initialize(p initializeRequest) initializeResponse {
	r := initializeResponse{ProtocolVersion: ProtocolVersion, AuthMethods: []struct{}{},
		AgentInfo: implementation{Name: "agentjq", Title: "agentjq (claude)", Version: a.opts.Version}}
	// The record dir is what a session is taken up again from, in this
	// process or a later one: load (replayed), resume, fork and list.
	r.AgentCapabilities.LoadSession = a.opts.RecordDir != ""
	caps := &r.AgentCapabilities.SessionCapabilities
	caps.Close = &capability{}
	if a.opts.RecordDir != "" {
		caps.List, caps.Resume, caps.Fork = &capability{}, &capability{}, &capability{}
	}
	// Text, resource links and embedded text resources become the turn's
	// text; images go to claude as image blocks. Audio is not offered
	// (claude takes none).
	r.AgentCapabilities.PromptCapabilities.EmbeddedContext = true
	r.AgentCapabilities.PromptCapabilities.Image = true
	// MCP servers: stdio, http and sse, all passed to claude's --mcp-config.
	r.AgentCapabilities.MCPCapabilities = mcpCapabilities{HTTP: true, SSE: true}
	return r
}

func (a *Agent) session(id string) (*session, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.sessions[id]
	if s == nil {
		return nil, errCode(codeNotFound, "no session %q", id)
	}
	return s, nil
}

func (a *Agent) newSession(cfg SessionConfig) (*session, error) {
	if !filepath.IsAbs(cfg.Cwd) {
		return nil, errCode(jsonrpc.CodeInvalidParams, "cwd %q must be an absolute path", cfg.Cwd)
	}
	for _, m := range cfg.MCPServers {
		switch m.Type {
		case "", "stdio", "http", "sse":
		default:
			return nil, errCode(jsonrpc.CodeInvalidParams, "MCP server %q: %s servers are not supported (see mcpCapabilities)", m.Name, m.Type)
		}
	}
	select {
	case <-a.life.Ending():
		return nil, errCode(jsonrpc.CodeInternalError, "agentjq is shutting down")
	default:
	}
	id := cfg.ID
	s := newSession(a, id)
	if cfg.Mode != "" {
		s.mode = cfg.Mode
	}
	cfg.Person = s
	if a.opts.RecordDir != "" {
		cfg.Record = nextSegment(a.opts.RecordDir, id)
	}
	s.cfg = cfg
	opts, done, err := a.opts.Start(cfg)
	if err != nil {
		return nil, errCode(jsonrpc.CodeInternalError, "starting the session: %v", err)
	}
	a.mu.Lock()
	if a.sessions[id] != nil || a.closing {
		closing := a.closing
		a.mu.Unlock()
		done()
		if closing {
			return nil, errCode(jsonrpc.CodeInternalError, "agentjq is shutting down")
		}
		return nil, errCode(jsonrpc.CodeInvalidParams, "session %s is already open", id)
	}
	a.sessions[id] = s
	a.wg.Add(1)
	a.mu.Unlock()
	go func() {
		defer a.wg.Done()
		s.run(opts, done)
		a.forget(s)
	}()
	return s, nil
}

// forget takes the ended session s out of the open ones (unless another
// session took its id up since).
func (a *Agent) forget(s *session) {
	a.mu.Lock()
	if a.sessions[s.id] == s {
		delete(a.sessions, s.id)
	}
	a.mu.Unlock()
}

// segments are the recordings of session id, oldest first: id.ndjson,
// then id.2.ndjson, id.3.ndjson... for each load that continued it.
func segments(dir, id string) []string {
	var out []string
	if _, err := os.Stat(filepath.Join(dir, id+".ndjson")); err == nil {
		out = append(out, filepath.Join(dir, id+".ndjson"))
	}
	more, _ := filepath.Glob(filepath.Join(dir, id+".*.ndjson"))
	n := func(p string) int {
		v, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), id+"."), ".ndjson"))
		return v
	}
	sort.Slice(more, func(i, j int) bool { return n(more[i]) < n(more[j]) })
	for _, p := range more {
		if n(p) > 1 {
			out = append(out, p)
		}
	}
	return out
}

func nextSegment(dir, id string) string {
	segs := segments(dir, id)
	if len(segs) == 0 {
		return filepath.Join(dir, id+".ndjson")
	}
	return filepath.Join(dir, fmt.Sprintf("%s.%d.ndjson", id, len(segs)+1))
}

// reopen takes a recorded session up again in a new live one:
// session/load replays its recorded lines as updates first, session/
// resume does not, and session/fork starts a new session from its
// conversation. claude continues its own history (--resume) in the mode
// it was left in; a session that never had a turn has no history in
// claude yet, and starts afresh under its id (acpx's sessions new, then
// a prompt from the next process).
func (a *Agent) reopen(method string, p loadSessionRequest) (any, error) {
	if a.opts.RecordDir == "" {
		return nil, errCode(jsonrpc.CodeMethodNotFound, "%s needs agentjq acp --record-dir", method)
	}
	if !protocol.IsUUID(p.SessionID) {
		return nil, errCode(codeNotFound, "no recorded session %q", p.SessionID)
	}
	segs := segments(a.opts.RecordDir, p.SessionID)
	if len(segs) == 0 {
		return nil, errCode(codeNotFound, "no recorded session %q in %s", p.SessionID, a.opts.RecordDir)
	}
	if _, err := a.session(p.SessionID); err == nil && method != "session/fork" {
		if method == "session/resume" {
			// Taken up already, in this process: nothing to do.
			s, _ := a.session(p.SessionID)
			return loadSessionResponse{Modes: s.modes()}, nil
		}
		return nil, errCode(jsonrpc.CodeInvalidParams, "session %s is already open", p.SessionID)
	}
	rec, err := readRecorded(a.opts.RecordDir, p.SessionID)
	if err != nil {
		return nil, errCode(jsonrpc.CodeInternalError, "%v", err)
	}
	cfg := SessionConfig{ID: p.SessionID, Cwd: p.Cwd, MCPServers: p.MCPServers, Resume: rec.Turns > 0, Mode: rec.Mode}
	if cfg.Mode == "bypassPermissions" && !a.opts.AllowBypass {
		cfg.Mode = ""
	}
	if method == "session/load" {
		m := NewMapper()
		for _, seg := range segs {
			if err := a.replay(p.SessionID, seg, m); err != nil {
				return nil, errCode(jsonrpc.CodeInternalError, "%v", err)
			}
		}
	}
	if method == "session/fork" {
		cfg.ID = protocol.NewUUID()
		if cfg.Resume {
			cfg.ForkOf = p.SessionID
		}
		cfg.Resume = false
	}
	s, err := a.newSession(cfg)
	if err != nil {
		return nil, err
	}
	if method == "session/fork" {
		return forkSessionResponse{SessionID: s.id, Modes: s.modes()}, nil
	}
	return loadSessionResponse{Modes: s.modes()}, nil
}

func (a *Agent) replay(id, file string, m *Mapper) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	rd, _, err := recording.NewReader(f, file)
	if err != nil {
		return err
	}
	for {
		e, err := rd.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if e.Dir != protocol.DirIn && e.Dir != protocol.DirOut {
			continue
		}
		for _, u := range m.Line(e.Dir, e.Msg).Updates {
			if err := a.notify(id, u); err != nil {
				return err
			}
		}
	}
}

func (a *Agent) notify(id string, u Update) error {
	return a.conn.Notify(context.Background(), "session/update", sessionNotification{SessionID: id, Update: u})
}

// ask sends the client a request and waits for its response. When ctx
// ends first (the turn was cancelled, the approval timed out, the agent
// withdrew its request) the client is told with $/cancel_request, so the
// editor can take the question down; a late answer is dropped.
func (a *Agent) ask(ctx context.Context, method string, params, result any) error {
	a.askMu.Lock()
	a.askSeq++
	id := jsonrpc.StringID("agentjq-" + strconv.Itoa(a.askSeq))
	ch := make(chan *jsonrpc.Response, 1)
	a.asks[id.String()] = ch
	a.askMu.Unlock()
	forget := func() {
		a.askMu.Lock()
		delete(a.asks, id.String())
		a.askMu.Unlock()
	}
	if err := a.conn.SendRequest(ctx, id, method, params); err != nil {
		forget()
		return err
	}
	select {
	case r := <-ch:
		if r.Error != nil {
			return r.Error
		}
		return json.Unmarshal(r.Result, result)
	case <-ctx.Done():
		forget()
		a.conn.Notify(context.Background(), "$/cancel_request", map[string]any{"requestId": json.RawMessage(id)})
		return ctx.Err()
	case <-a.conn.Done():
		forget()
		return jsonrpc.ErrClosed
	}
}

func (a *Agent) response(_ *jsonrpc.Conn, r *jsonrpc.Response) {
	a.askMu.Lock()
	ch := a.asks[r.ID.String()]
	delete(a.asks, r.ID.String())
	a.askMu.Unlock()
	if ch != nil {
		ch <- r
	}
}
