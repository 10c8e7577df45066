package mcphost

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/agentjq/agentjq/internal/proc"
)

// Relay hosts a stdio MCP server process: agentjq starts Command (via
// sh -c, run by internal/proc) at the first message, passes the
// agent's messages to its stdin, one per line, and routes the responses on
// its stdout back by id. Close ends the server and
// everything it started.
//
// Messages the server starts itself are not passed to the agent: a request
// (sampling, roots, elicitation) is answered "method not found", a
// notification (progress, logging, list changes) is dropped.
type Relay struct {
	Name    string
	Command string
	Dir     string
	Env     []string
	// Stderr receives the server's stderr, each line prefixed with
	// "agentjq: mcp-server NAME: ", and agentjq's reports about it.
	Stderr io.Writer
	// Grace is how long Close waits for the server to exit after its stdin
	// closes before killing its group (default 1s).
	Grace time.Duration

	mu      sync.Mutex
	started bool
	closed  bool
	cmd     *proc.Cmd
	pid     int
	stdin   io.WriteCloser
	waiters map[string]chan json.RawMessage
	dead    chan struct{} // closed when the server's stdout ends
	exited  chan struct{} // closed when the server has been waited for
	tail    bytes.Buffer  // the end of its stderr, for error messages

	wmu sync.Mutex // one line at a time to its stdin
}

// Handle relays one message and waits for the server's response; a
// notification is passed on and acknowledged at once.
func (r *Relay) Handle(ctx context.Context, msg json.RawMessage) json.RawMessage {
	id, ok := messageID(msg)
	if !ok {
		return errorResponse(nil, codeParse, "agentjq: the message is not a JSON object")
	}
	if err := r.start(); err != nil {
		return errorResponse(id, codeInternal, fmt.Sprintf("agentjq: MCP server %q: %v", r.Name, err))
	}
	var wait chan json.RawMessage
	if id != nil {
		wait = make(chan json.RawMessage, 1)
		r.mu.Lock()
		r.waiters[idKey(id)] = wait
		r.mu.Unlock()
		defer func() {
			r.mu.Lock()
			delete(r.waiters, idKey(id))
			r.mu.Unlock()
		}()
	}
	if err := r.send(msg); err != nil {
		return errorResponse(id, codeInternal, r.deadMessage(err))
	}
	if id == nil {
		return ack()
	}
	select {
	case resp := <-wait:
		return resp
	case <-r.dead:
		// Let its stderr be read to the end, for the error message.
		select {
		case <-r.exited:
		case <-time.After(time.Second):
		}
		// A response written just before the end is still good.
		select {
		case resp := <-wait:
			return resp
		default:
		}
		return errorResponse(id, codeInternal, r.deadMessage(nil))
	case <-ctx.Done():
		// Tell the server, as an MCP client does; the agent gets no
		// answer for a withdrawn request anyway.
		cancel := marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled",
			"params": map[string]any{"requestId": id, "reason": "cancelled by the agent"}})
		_ = r.send(cancel)
		return errorResponse(id, codeInternal, "agentjq: cancelled")
	}
}

// start starts the server once.
func (r *Relay) start() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return errors.New("the session is over")
	}
	if r.started {
		return nil
	}
	r.started = true
	r.waiters = map[string]chan json.RawMessage{}
	r.dead = make(chan struct{})
	r.exited = make(chan struct{})
	cmd := proc.Shell(r.Command)
	cmd.Dir, cmd.Env = r.Dir, r.Env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		close(r.dead)
		close(r.exited)
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		close(r.dead)
		close(r.exited)
		return err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		close(r.dead)
		close(r.exited)
		return err
	}
	if err := cmd.Start(); err != nil {
		close(r.dead)
		close(r.exited)
		return err
	}
	r.cmd, r.pid, r.stdin = cmd, cmd.Pid(), stdin
	var readers sync.WaitGroup
	readers.Add(2)
	go func() { defer readers.Done(); r.readStdout(stdout) }()
	go func() { defer readers.Done(); r.readStderr(stderr) }()
	go func() {
		// StdoutPipe's contract: read it all before Wait.
		readers.Wait()
		_ = cmd.Wait()
		close(r.exited)
	}()
	return nil
}

// MaxServerLine caps one line of an MCP server's stdout: a longer one is
// dropped with a report (its request then gets no answer from the server
// and fails when the server ends or the agent gives up), so a server can
// never grow agentjq's memory without bound.
const MaxServerLine = 64 << 20

// PID is the server's process id, 0 before it
// started.
func (r *Relay) PID() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.pid
}

func (r *Relay) send(msg json.RawMessage) error {
	var buf bytes.Buffer
	if err := json.Compact(&buf, msg); err != nil {
		return err
	}
	buf.WriteByte('\n')
	r.wmu.Lock()
	defer r.wmu.Unlock()
	_, err := r.stdin.Write(buf.Bytes())
	return err
}

func (r *Relay) readStdout(stdout io.Reader) {
	defer close(r.dead)
	br := bufio.NewReaderSize(stdout, 64<<10)
	for {
		line, err := proc.ReadLine(br, MaxServerLine)
		if errors.Is(err, proc.ErrLineTooLong) {
			r.report("a stdout line %v, dropped", err)
			if proc.SkipLine(br) != nil {
				return
			}
			continue
		}
		if t := bytes.TrimSpace(line); len(t) > 0 {
			r.fromServer(t)
		}
		if err != nil {
			return
		}
	}
}

// fromServer routes one line the server wrote.
func (r *Relay) fromServer(line []byte) {
	var m rpcMessage
	if err := json.Unmarshal(line, &m); err != nil {
		r.report("not JSON-RPC on stdout, dropped: %.200s", line)
		return
	}
	id, _ := messageID(line)
	switch {
	case m.Method == "" && id != nil:
		r.mu.Lock()
		w := r.waiters[idKey(id)]
		delete(r.waiters, idKey(id))
		r.mu.Unlock()
		if w != nil {
			w <- json.RawMessage(bytes.Clone(line))
		}
	case m.Method != "" && id != nil:
		_ = r.send(errorResponse(id, codeMethodNotFound, "agentjq does not relay server requests to the agent: "+m.Method))
	}
}

func (r *Relay) readStderr(stderr io.Reader) {
	br := bufio.NewReaderSize(stderr, 16<<10)
	for {
		line, err := proc.ReadLine(br, 64<<10)
		if errors.Is(err, proc.ErrLineTooLong) {
			line, err = []byte("[a stderr line over 64 KiB, dropped]\n"), proc.SkipLine(br)
		}
		if len(line) > 0 {
			r.mu.Lock()
			r.tail.Write(line)
			if r.tail.Len() > 4<<10 {
				keep := bytes.Clone(r.tail.Bytes()[r.tail.Len()-2<<10:])
				r.tail.Reset()
				r.tail.Write(keep)
			}
			r.mu.Unlock()
			r.report("%s", bytes.TrimRight(line, "\r\n"))
		}
		if err != nil {
			return
		}
	}
}

func (r *Relay) report(format string, args ...any) {
	if r.Stderr == nil {
		return
	}
	fmt.Fprintf(r.Stderr, "agentjq: mcp-server %s: %s\n", r.Name, fmt.Sprintf(format, args...))
}

func (r *Relay) deadMessage(err error) string {
	msg := fmt.Sprintf("agentjq: MCP server %q is not running", r.Name)
	if err != nil {
		msg += " (" + err.Error() + ")"
	}
	r.mu.Lock()
	tail := string(bytes.TrimSpace(r.tail.Bytes()))
	r.mu.Unlock()
	if tail != "" {
		msg += "; its stderr ended with: " + tail
	}
	return msg
}

// Close closes the server's stdin, gives it Grace to exit, then kills its
// tree (internal/proc); it returns once the server has been reaped (bounded).
func (r *Relay) Close() error {
	r.mu.Lock()
	r.closed = true
	started, cmd, pid, stdin, exited := r.started && r.cmd != nil, r.cmd, r.pid, r.stdin, r.exited
	r.mu.Unlock()
	if !started {
		return nil
	}
	grace := r.Grace
	if grace <= 0 {
		grace = time.Second
	}
	r.wmu.Lock()
	_ = stdin.Close()
	r.wmu.Unlock()
	select {
	case <-exited:
	case <-time.After(grace):
	}
	// Whether or not it exited, nothing it started may stay behind.
	cmd.Kill()
	select {
	case <-exited:
		return nil
	case <-time.After(5 * time.Second):
		return fmt.Errorf("MCP server %q (pid %d) did not exit after SIGKILL", r.Name, pid)
	}
}
