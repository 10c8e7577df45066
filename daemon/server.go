package daemon

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/agentjq/agentjq/approve"
	"github.com/agentjq/agentjq/internal/bridge"
	"github.com/agentjq/agentjq/jsonrpc"
)

// Options configure a Server.
type Options struct {
	// Home holds daemon.json, token and sessions/.
	Home string
	// ServerVersion is agentjq's version.
	ServerVersion string
	// AgentBin is the agent binary (default: the profile's name on PATH).
	AgentBin string
	// Env is the agents' environment (bridge.ChildEnv of it).
	Env []string
	// Policies are policy files applied to every session before its own.
	Policies []string
	// Allowlist is the policy file scope "always" and
	// permission.allowlist.* edit ("" : none; those fail invalid_params).
	Allowlist string
	// ApprovalTimeout denies an approval nobody answered (0: 10m).
	ApprovalTimeout time.Duration
	// Grace is each shutdown stage's wait (0: bridge default).
	Grace time.Duration
	// MaxSessions bounds live sessions (0: 256); more fail overloaded.
	MaxSessions int
	// QueueBytes bounds each client's outgoing queue (0: 16 MiB): past it
	// a client is kept while it reads, up to 4 times as much.
	QueueBytes int
	// StallTimeout drops a client that has taken nothing for this long
	// while messages wait for it (0: 10s).
	StallTimeout time.Duration
	// Lifecycle passes serve's signals to every session (nil: none).
	Lifecycle *bridge.Lifecycle
	// AllowedOrigins are the WebSocket Origin hosts accepted (patterns as
	// websocket.AcceptOptions.OriginPatterns); none by default.
	AllowedOrigins []string
	// Logf logs; nil uses the log package.
	Logf func(format string, args ...any)
	// Profile, for tests: the agent profile name to CLI versions listed in hello.
	CLIVersions []string
	// Build makes a session's bridge options and approval chain: spawn's
	// session builder (cmd's sessionOptionsWith), so a daemon session gets
	// what every front end gets (the PreToolUse guard, the setting sources,
	// the hosted environment). p.Policy holds every policy file in order:
	// the daemon's, the session's, the allowlist file. The daemon replaces
	// the options' Stdin, Stdout, Stderr, Tap, Signals and Approver (its
	// clientDecider runs the chain first, then asks the clients).
	Build func(p CreateParams) (bridge.Options, *approve.Chain, error)
}

// Server is the daemon.
type Server struct {
	opts  Options
	token string

	mu       sync.Mutex
	sessions map[string]*Session
	clients  map[*client]struct{}
	nextCli  int

	approvals *approvals

	shutdown     chan struct{}
	shutdownOnce sync.Once
	wg           sync.WaitGroup
	closing      atomic.Bool

	socketPath string
	port       int
	// noticeWait bounds the wait to tell a dropped client why (2s).
	noticeWait time.Duration
}

// New prepares a Server: the home directory, the token.
func New(opts Options) (*Server, error) {
	if opts.Home == "" {
		return nil, errors.New("daemon: no home directory")
	}
	if opts.Build == nil {
		return nil, errors.New("daemon: no session builder")
	}
	if opts.Logf == nil {
		opts.Logf = log.Printf
	}
	if opts.ApprovalTimeout == 0 {
		opts.ApprovalTimeout = 10 * time.Minute
	}
	if opts.MaxSessions == 0 {
		opts.MaxSessions = 256
	}
	if opts.QueueBytes == 0 {
		opts.QueueBytes = 16 << 20
	}
	if opts.StallTimeout == 0 {
		opts.StallTimeout = 10 * time.Second
	}
	if opts.Lifecycle == nil {
		opts.Lifecycle = bridge.NewLifecycle(opts.Grace)
	}
	if err := os.MkdirAll(filepath.Join(opts.Home, "sessions"), 0o700); err != nil {
		return nil, err
	}
	if err := os.Chmod(opts.Home, 0o700); err != nil {
		return nil, err
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	s := &Server{
		opts:       opts,
		token:      hex.EncodeToString(b),
		sessions:   map[string]*Session{},
		clients:    map[*client]struct{}{},
		shutdown:   make(chan struct{}),
		noticeWait: 2 * time.Second,
	}
	s.approvals = newApprovals(s)
	if opts.Allowlist != "" {
		if _, err := readAllowlist(opts.Allowlist, true); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Token is the daemon's token.
func (s *Server) Token() string { return s.token }

// Done is closed by system.shutdown.
func (s *Server) Done() <-chan struct{} { return s.shutdown }

// Shutdown closes every session, waiting for their agents to end.
func (s *Server) Shutdown() {
	s.closing.Store(true)
	s.shutdownOnce.Do(func() { close(s.shutdown) })
	s.mu.Lock()
	var live []*Session
	for _, ss := range s.sessions {
		live = append(live, ss)
	}
	s.mu.Unlock()
	for _, ss := range live {
		ss.close()
	}
	// Each session's staged shutdown is bounded; so is the wait for all.
	bound := s.opts.Lifecycle.Bound() + 2*time.Second
	deadline := time.NewTimer(bound)
	defer deadline.Stop()
wait:
	for _, ss := range live {
		select {
		case <-ss.done:
		case <-deadline.C:
			s.opts.Logf("agentjq serve: sessions still ending %s after shutdown began; leaving them", bound)
			break wait
		}
	}
	// Then the clients: they have seen session.ended.
	s.mu.Lock()
	var conns []*client
	for c := range s.clients {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	// Each after its answers are written: system.shutdown's own included.
	var closing sync.WaitGroup
	for _, c := range conns {
		closing.Go(func() { c.conn.CloseAnswered(answerWait) })
	}
	closing.Wait()
	s.wg.Wait()
}

// answerWait bounds how long a client's connection stays open at shutdown
// for the answers to requests it has sent.
const answerWait = 2 * time.Second

// DaemonFile is $AGENTJQ_HOME/daemon.json.
type DaemonFile struct {
	Pid             int    `json:"pid"`
	Port            int    `json:"port,omitempty"`
	URL             string `json:"url,omitempty"`
	Socket          string `json:"socket,omitempty"`
	ProtocolVersion string `json:"protocolVersion"`
	ServerVersion   string `json:"serverVersion"`
	TokenFile       string `json:"tokenFile"`
	Started         string `json:"started"`
}

// ErrRunning is a live daemon on the same home.
type ErrRunning struct {
	Pid  int
	File string
}

func (e *ErrRunning) Error() string {
	return fmt.Sprintf("agentjq serve is already running on this home (pid %d, %s); stop it or use another --home", e.Pid, e.File)
}

// Claim refuses when daemon.json names a live process, else removes it.
func Claim(home string) error {
	path := filepath.Join(home, "daemon.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var f DaemonFile
	if json.Unmarshal(b, &f) == nil && f.Pid > 0 && pidAlive(f.Pid) {
		return &ErrRunning{Pid: f.Pid, File: path}
	}
	_ = os.Remove(path)
	return nil
}

// WriteDaemonFile writes the token file and daemon.json, both 0600.
func (s *Server) WriteDaemonFile() (string, error) {
	tokenFile := filepath.Join(s.opts.Home, "token")
	if err := writeFile0600(tokenFile, []byte(s.token+"\n")); err != nil {
		return "", err
	}
	f := DaemonFile{Pid: os.Getpid(), Port: s.port, Socket: s.socketPath, ProtocolVersion: ProtocolVersion,
		ServerVersion: s.opts.ServerVersion, TokenFile: tokenFile, Started: time.Now().UTC().Format(time.RFC3339)}
	if s.port != 0 {
		f.URL = "ws://127.0.0.1:" + strconv.Itoa(s.port) + "/ws"
	}
	b, _ := json.MarshalIndent(f, "", "  ")
	path := filepath.Join(s.opts.Home, "daemon.json")
	return path, writeFile0600(path, append(b, '\n'))
}

// RemoveDaemonFile removes daemon.json if it is still ours.
func (s *Server) RemoveDaemonFile() {
	path := filepath.Join(s.opts.Home, "daemon.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return
	}
	var f DaemonFile
	if json.Unmarshal(b, &f) == nil && f.Pid == os.Getpid() {
		_ = os.Remove(path)
	}
}

func writeFile0600(path string, data []byte) error {
	tmp := path + ".tmp" + strconv.Itoa(os.Getpid())
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// ListenUnix serves JSON-RPC lines on a 0600 Unix socket.
func (s *Server) ListenUnix(ctx context.Context, path string) (net.Listener, error) {
	_ = os.Remove(path)
	old := umask(0o177)
	l, err := net.Listen("unix", path)
	umask(old)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(path, 0o600); err != nil {
		l.Close()
		return nil, err
	}
	s.socketPath = path
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go s.ServeStream(ctx, jsonrpc.NewLineStream(c, c, c), true)
		}
	}()
	return l, nil
}

// ServeStream runs one client over a stream until it ends. auth false
// (serve --stdio: one client, the parent process) needs no token.
func (s *Server) ServeStream(ctx context.Context, st jsonrpc.Stream, auth bool) error {
	s.wg.Add(1)
	defer s.wg.Done()
	c := s.newClient(auth, func(c *client) *jsonrpc.Conn {
		return jsonrpc.NewConn(st, jsonrpc.Options{Handler: c.handle, OnResponse: c.onResponse, Logf: s.opts.Logf})
	})
	err := c.conn.Run(ctx)
	s.dropClient(c)
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// HTTPHandler is /ws, /health, /version and /protocol.json, behind the
// Host check (DNS rebinding) and, for /ws, the Origin check.
func (s *Server) HTTPHandler(ctx context.Context, schema []byte, allowRemoteHost bool) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/ws", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Origin") != "" && !s.originAllowed(r.Header.Get("Origin")) {
			http.Error(w, "agentjq serve: Origin "+r.Header.Get("Origin")+" is not allowed (serve --allow-origin)", http.StatusForbidden)
			return
		}
		ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{OriginPatterns: s.opts.AllowedOrigins})
		if err != nil {
			return
		}
		_ = s.ServeStream(ctx, jsonrpc.NewWebSocketStream(ws), true)
	})
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, HealthResult{OK: true, Sessions: s.liveCount()})
	})
	mux.HandleFunc("GET /version", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]string{"protocolVersion": ProtocolVersion, "serverVersion": s.opts.ServerVersion})
	})
	mux.HandleFunc("GET /protocol.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(schema)
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !allowRemoteHost && !loopbackHost(r.Host) {
			http.Error(w, "agentjq serve: Host "+r.Host+" is not a loopback address", http.StatusForbidden)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

func (s *Server) originAllowed(origin string) bool {
	host := origin
	if i := strings.Index(host, "://"); i >= 0 {
		host = host[i+3:]
	}
	for _, p := range s.opts.AllowedOrigins {
		if ok, _ := filepath.Match(strings.ToLower(p), strings.ToLower(host)); ok {
			return true
		}
	}
	return false
}

// loopbackHost accepts localhost and loopback IPs, with any port.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	b, _ := json.Marshal(v)
	w.Write(append(b, '\n'))
}

// SetPort records the WebSocket port for daemon.json and system.info.
func (s *Server) SetPort(p int) { s.port = p }

func (s *Server) liveCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, ss := range s.sessions {
		if !ss.ended() {
			n++
		}
	}
	return n
}

func (s *Server) newClient(auth bool, conn func(*client) *jsonrpc.Conn) *client {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextCli++
	c := &client{srv: s, id: "client-" + strconv.Itoa(s.nextCli), needAuth: auth,
		subs: map[string]*subscription{}}
	c.conn = conn(c)
	c.out = c.newOutQueue()
	s.clients[c] = struct{}{}
	return c
}

func (s *Server) dropClient(c *client) {
	s.mu.Lock()
	delete(s.clients, c)
	s.mu.Unlock()
	c.mu.Lock()
	subs := c.subs
	c.subs = map[string]*subscription{}
	c.mu.Unlock()
	for _, sub := range subs {
		sub.sess.unsubscribe(sub)
	}
	c.out.MarkClosed()
}

// authedClients are the clients past hello.
func (s *Server) authedClients() []*client {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*client
	for c := range s.clients {
		if c.authed.Load() {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// broadcast sends a notification to every client past hello.
func (s *Server) broadcast(method string, params any) {
	b := notification(method, params)
	for _, c := range s.authedClients() {
		c.send(b)
	}
}

func notification(method string, params any) []byte {
	p, _ := json.Marshal(params)
	b, _ := json.Marshal(jsonrpc.Message{JSONRPC: jsonrpc.Version, Method: method, Params: p})
	return b
}

func (s *Server) session(id string) (*Session, error) {
	s.mu.Lock()
	ss := s.sessions[id]
	s.mu.Unlock()
	if ss != nil {
		return ss, nil
	}
	if !validID(id) {
		return nil, rpcErr(CodeNotFound, "no session "+strconv.Quote(id), nil)
	}
	// An ended session of an earlier daemon: its recording is readable.
	path := s.recordingPath(id)
	if _, err := os.Stat(path); err != nil {
		return nil, rpcErr(CodeNotFound, "no session "+strconv.Quote(id), nil)
	}
	return s.loadEnded(id, path)
}

func (s *Server) recordingPath(id string) string {
	return filepath.Join(s.opts.Home, "sessions", id+".rec")
}

func validID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}

func rpcErr(code, msg string, extra map[string]any) *jsonrpc.Error {
	n := rpcAppError
	switch code {
	case CodeInvalidParams:
		n = jsonrpc.CodeInvalidParams
	case CodeInternal:
		n = jsonrpc.CodeInternalError
	case CodeNotImplemented:
		n = jsonrpc.CodeMethodNotFound
	}
	return jsonrpc.NewError(n, code, msg, extra)
}

// policyFiles are a session's policy files: the daemon's, the session's,
// the allowlist file.
func (s *Server) policyFiles(session []string) []string {
	all := append(append([]string(nil), s.opts.Policies...), session...)
	if s.opts.Allowlist != "" {
		all = append(all, s.opts.Allowlist)
	}
	return all
}
