package bridge

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/agentjq/agentjq/internal/asyncq"
	"github.com/agentjq/agentjq/internal/proc"
	"github.com/agentjq/agentjq/internal/protocol"
)

// Decider decides the agent's tool calls. The bridge owns no policy: cmd
// wires approve's chain (or the daemon its clients) in. It must return
// promptly when ctx is done (a withdrawn request or an approval timeout).
type Decider interface {
	Decide(ctx context.Context, req *protocol.ToolRequest) (protocol.Verdict, error)
}

// ControlHandler answers one kind of control request from the agent. It
// returns the response payload, or an error that becomes an error response.
// ctx is cancelled when the agent withdraws the request.
type ControlHandler func(ctx context.Context, requestID string, request json.RawMessage) (any, error)

// Options configure a session.
type Options struct {
	Profile Profile
	// Path and Args are the agent's command line (see Command).
	Path string
	Args []string
	Dir  string
	Env  []string

	// Prompt, when HasPrompt, is the only turn: stdin is not read and the
	// session ends after its result.
	Prompt    string
	HasPrompt bool

	Echo     bool // also write the turns sent to the agent on stdout
	NoEvents bool // do not write agentjq's own events

	ApprovalTimeout time.Duration // 0: wait for ever
	IdleTimeout     time.Duration // 0: none
	Timeout         time.Duration // 0: none
	// Grace is how long each stage of a shutdown waits before the next.
	Grace time.Duration

	// Approver answers can_use_tool (cmd wires in approve's chain); nil
	// denies everything.
	Approver Decider
	// Handlers answer other agent control requests by subtype.
	Handlers map[string]ControlHandler
	// Guard answers agentjq's own PreToolUse hook (see answer.go).
	Guard GuardFunc
	// Init, when set, is sent as an initialize control request first.
	Init any
	// ControlTimeout bounds the wait for the agent's answer to one of
	// agentjq's own control requests (initialize, interrupt): then a
	// warning, and the session goes on without it. 0: 30s.
	ControlTimeout time.Duration
	// KeepStdinOpen holds the agent's stdin open while hooks or SDK MCP
	// servers are registered, until the session ends: on a normal end it
	// closes only once the agent has been quiet for a moment.
	KeepStdinOpen bool
	// AtEnd run once when the session is over (the agent exited or never
	// started), before the exit event: hosted servers are stopped there.
	AtEnd []func()

	// Watch sees each agent line of type system, assistant or user
	// before it passes on (the line is lent for the call): the events it
	// returns are written as agentjq's own, and a stop reason ends the
	// session as a cancelled context does, with the outcome error, the
	// "not found" status and the reason as its error (cmd's sandbox
	// watcher: what the sandbox blocked, an init line saying it is off).
	Watch func(typ, subtype string, line []byte) (events []any, stop string)

	// Tap sees every line in every direction, in order. The line is only
	// lent for the call: a tap that keeps it copies it. known is what the
	// bridge learnt of the line (an agent line it scanned: one JSON object,
	// and whether its strings hide text behind escapes), so that a
	// recorder need not scan it again.
	Tap func(dir protocol.Direction, line []byte, known protocol.Known)
	// TapErr, when set, waits until whatever the tap feeds has taken every
	// line tapped so far (a recording's queue written out) and reports its
	// failure (a write error): the session's outcome is then an error,
	// never a success. It is called at the end, before the exit event is
	// composed and again once the exit event is tapped.
	TapErr func() error

	// Forward, when set, makes the session a proxy for a client that
	// speaks the protocol itself (forward.go).
	Forward *Forward

	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// RedactEcho, when set, removes secrets from what agentjq itself
	// prints of an agent's non-JSON stdout line (stderr and the warning).
	RedactEcho func([]byte) []byte
	// Gate, when set, holds stdout while a prompt is open (OutputGate).
	Gate *OutputGate
	// Signals delivers SIGINT, SIGTERM and SIGPIPE from the caller.
	Signals <-chan os.Signal
	// OnStart, when set, is called once the agent has started (nil) or
	// failed to (the StartError Run will return), before anything is
	// written to it: a front end that answers its client only once the
	// session exists (serve's session.create) waits for it.
	OnStart func(error)
}

// Report is what happened.
type Report struct {
	Outcome   protocol.Outcome
	ExitCode  int
	AgentExit int // -1 when killed by a signal or never started
	Signal    string
	Turns     int
	Denials   int
	Err       string
}

// StartError is a failure to start the agent (not found, not executable).
type StartError struct{ Err error }

func (e *StartError) Error() string { return "starting the agent: " + e.Err.Error() }
func (e *StartError) Unwrap() error { return e.Err }

// ExitCode is 127, as a shell reports a command it cannot run.
func (e *StartError) ExitCode() int { return protocol.ExitNotFound }

// session is one run of the agent.
type session struct {
	opts  Options
	cmd   *proc.Cmd
	pid   int
	abort context.CancelFunc // ends the session as its context's end does
	// stopped is the reason Watch gave for ending the session.
	stopped atomic.Pointer[string]

	stdin agentStdin     // the agent's stdin (out.go)
	out   *asyncq.Writer // our stdout
	errq  *asyncq.Writer // our stderr (lossy: never holds anyone up)

	// mu guards the session's state, turns' and ctl's too.
	mu         sync.Mutex
	changed    chan struct{} // signalled when state the loop waits on changes
	turns      turnBook      // turns and background tasks in flight (turns.go)
	ctl        controls      // control requests either way (answer.go)
	lastResult []byte        // the last result line, raw
	// denied holds the tool_use_id of every denied call, whoever denied it:
	// agentjq answers and the agent's permission_denials name the same call.
	denied      map[string]bool
	sessionID   string
	versionSeen bool
	lastOutput  time.Time
	// owedSince is when the agent last began to owe us output (idleFor):
	// silence before it is not idleness.
	owedSince time.Time
	inputDone bool // our stdin reached EOF (or one-shot prompt sent)

	interrupted, timedOut, stalled, stdoutClosed bool
	// reaped: the session had ended normally but the agent would not exit
	// after its stdin closed, so agentjq terminated it.
	reaped bool

	ended      atomic.Bool // the exit event is written
	stderrTail tail
	infos      []lineInfo // the pump's, reused from chunk to chunk
	atEndOnce  sync.Once

	fwd *forwarder // nil unless Options.Forward
}

// Run runs a session to the end and reports its outcome. The error is
// non-nil only when the agent could not be started at all.
func Run(ctx context.Context, opts Options) (Report, error) {
	if opts.Grace <= 0 {
		opts.Grace = 5 * time.Second
	}
	if opts.ControlTimeout <= 0 {
		opts.ControlTimeout = 30 * time.Second
	}
	// Several goroutines report on stderr, each write a whole line; none
	// of them may block on it.
	errq := asyncq.NewWriter(opts.Stderr, asyncq.WriterOptions{Limit: 1 << 20, Lossy: true, DropNote: dropNote})
	opts.Stderr = lineWriter{errq}
	s := &session{
		opts:    opts,
		out:     asyncq.NewWriter(opts.Stdout, stdoutOptions(opts.Gate)),
		errq:    errq,
		changed: make(chan struct{}, 1),
		turns:   turnBook{queuedHint: -1, addedIDs: map[string]bool{}, background: map[string]bool{}},
		ctl: controls{pending: map[string]context.CancelFunc{}, withdraw: map[string]context.CancelFunc{},
			asked: map[string]bool{}, ours: map[string]*time.Timer{}, initAt: map[string]int{}},
		denied:     map[string]bool{},
		stderrTail: tail{max: 64 << 10},
	}
	s.turns.mu, s.turns.notify, s.ctl.s = &s.mu, s.notify, s
	s.stdin.tap = s.tapIn
	if opts.Gate != nil {
		opts.Gate.mu.Lock()
		opts.Gate.flush = s.out.Flushed
		opts.Gate.mu.Unlock()
	}
	if opts.Forward != nil {
		s.fwd = newForwarder(&s.opts)
		s.fwd.s = s
	}
	s.ctl.installGuard()
	ctx, s.abort = context.WithCancel(ctx)
	defer s.abort()
	return s.run(ctx)
}

func (s *session) run(ctx context.Context) (Report, error) {
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return Report{}, err
	}
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		return Report{}, err
	}
	proc.GrowPipe(stdoutR)
	stderrR, stderrW, err := os.Pipe()
	if err != nil {
		return Report{}, err
	}
	cmd := proc.Command(s.opts.Path, s.opts.Args...)
	cmd.Dir = s.opts.Dir
	cmd.Env = s.opts.Env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, stdoutW, stderrW
	// The pipes are *os.File, so Wait starts no copying goroutines; a
	// grandchild holding stdout is handled by the reader's own deadline
	// below. WaitDelay still bounds Wait should that ever change.
	cmd.WaitDelay = s.opts.Grace
	if err := cmd.Start(); err != nil {
		for _, f := range []*os.File{stdinR, stdinW, stdoutR, stdoutW, stderrR, stderrW} {
			f.Close()
		}
		serr := &StartError{err}
		if s.opts.OnStart != nil {
			s.opts.OnStart(serr)
		}
		s.runAtEnd()
		s.endOutputBy(time.Now().Add(s.opts.Grace))
		return Report{AgentExit: -1}, serr
	}
	if s.opts.OnStart != nil {
		s.opts.OnStart(nil)
	}
	stdinR.Close()
	stdoutW.Close()
	stderrW.Close()
	s.cmd, s.pid, s.stdin.file = cmd, cmd.Pid(), stdinW
	// Answers and turns queue here; only the input reader waits for room.
	s.stdin.q = asyncq.NewWriter(stdinW, asyncq.WriterOptions{Limit: 1 << 20, Closer: stdinW})
	s.lastOutput = time.Now()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	stdoutDone := make(chan struct{})
	stderrDone := make(chan struct{})
	watched := &pumpWatch{r: stdoutR}
	go func() { defer close(stdoutDone); s.readAgentStdout(ctx, watched) }()
	go func() { defer close(stderrDone); s.readAgentStderr(stderrR) }()

	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()

	if s.opts.Init != nil {
		s.ctl.sendOwnRequest("init", s.opts.Init)
	}
	if s.opts.HasPrompt {
		s.sendTurn(protocol.UserTurnWithSession(s.opts.Prompt, ""), true)
		s.setInputDone()
	} else if s.opts.Stdin != nil {
		go s.readInput(ctx)
	} else {
		s.setInputDone()
	}

	s.loop(ctx, exited)

	// The agent has exited (or was killed). From here on everything shares
	// one grace period: the readers drain what it wrote (a grandchild that
	// still holds the pipes is cut off), the exit event and stderr are
	// written, and whatever a peer would not take by then is abandoned.
	deadline := time.Now().Add(s.opts.Grace)
	s.stdin.forceClose()
	stdoutWait := time.Until(deadline)
	if s.out.StalledFor() >= s.opts.Grace {
		stdoutWait = 0
	}
	if !s.drained(stdoutDone, watched, stdoutWait) {
		stdoutR.Close()
		select {
		case <-stdoutDone:
		case <-time.After(100 * time.Millisecond):
			// Blocked handing lines to a stdout nobody reads.
			s.out.Abandon()
			<-stdoutDone
		}
	}
	if s.out.StalledFor() >= s.opts.Grace {
		// Nobody has read our stdout for a whole grace: the agent's last
		// lines and the exit event will not be read either.
		s.out.Abandon()
	}
	// A pump that took longer than the grace to pass the agent's last
	// lines on leaves the rest of the ending a grace of its own.
	deadline = later(deadline, time.Now().Add(s.opts.Grace))
	s.cmd.Kill()
	select {
	case <-stderrDone:
	case <-time.After(max(time.Until(deadline), 100*time.Millisecond)):
		stderrR.Close()
		<-stderrDone
	}
	stdoutR.Close()
	stderrR.Close()
	s.ctl.cancelPending()
	s.runAtEnd()
	if waitErr != nil && s.cmd.ProcessState == nil {
		s.endOutputBy(deadline)
		return Report{AgentExit: -1}, &StartError{waitErr}
	}
	// Whether stdout took the agent's lines is part of the outcome.
	s.out.Flushed(deadline)
	rep := s.finish()
	s.endOutputBy(deadline)
	return rep, nil
}

// endOutputBy writes out stdout and stderr, giving up on a stream its
// reader does not take by deadline (never less than a moment, so a
// reader that is merely slow still gets the exit event). What was lost is
// said on stderr, if stderr still takes it.
func (s *session) endOutputBy(deadline time.Time) {
	wait := func() time.Duration { return max(time.Until(deadline), 200*time.Millisecond) }
	if lost := s.out.Drain(wait(), s.opts.Grace); lost > 0 {
		fmt.Fprintf(s.opts.Stderr, "agentjq: stdout is not being read; gave up on the last %d bytes (the exit event among them)\n", lost)
	}
	if s.fwd != nil {
		s.fwd.drainEvents(wait(), s.opts.Grace)
	}
	s.errq.Drain(wait(), s.opts.Grace)
}

// loop waits for the end of the session, closing the agent's stdin when
// the input is done and nothing is in flight, and running the staged
// shutdown on signals and timeouts.
func (s *session) loop(ctx context.Context, exited <-chan struct{}) {
	var wall <-chan time.Time
	if s.opts.Timeout > 0 {
		t := time.NewTimer(s.opts.Timeout)
		defer t.Stop()
		wall = t.C
	}
	idleTick := make(<-chan time.Time)
	if s.opts.IdleTimeout > 0 {
		t := time.NewTicker(min(s.opts.IdleTimeout/4+time.Millisecond, time.Second))
		defer t.Stop()
		idleTick = t.C
	}
	var sd *shutdown
	outClosed := s.out.Closed()
	var esc escalation
	for {
		var stage <-chan time.Time
		if sd != nil {
			stage = sd.timer.C
		}
		select {
		case <-exited:
			return
		case <-ctx.Done():
			sd = s.escalate(sd, stageTerm)
		case <-s.changed:
			switch {
			case sd == nil && s.readyToClose():
				s.stdin.close()
				sd = &shutdown{stage: stageCloseStdin, timer: time.NewTimer(s.opts.Grace)}
			case sd != nil && sd.stage == stageInterrupt && !s.turnInFlight():
				// The interrupted turn has its result: no need to wait.
				sd = s.escalate(sd, stageCloseStdin)
			}
		case <-wall:
			s.mu.Lock()
			s.timedOut = true
			s.mu.Unlock()
			s.warn(protocol.WarnInternal, fmt.Sprintf("--timeout %s ran out; shutting the agent down", s.opts.Timeout))
			sd = s.escalate(sd, stageInterrupt)
		case <-idleTick:
			if sd == nil && s.idleFor() > s.opts.IdleTimeout {
				s.mu.Lock()
				s.stalled = true
				s.mu.Unlock()
				s.warn(protocol.WarnInternal, fmt.Sprintf("no output from the agent for %s (--idle-timeout); shutting it down", s.opts.IdleTimeout))
				sd = s.escalate(sd, stageInterrupt)
			}
		case sig := <-s.opts.Signals:
			if s.fwd != nil && s.fwd.forwardSignal(sig) {
				// The client's signals are the agent's; a third in a
				// row kills it, as under spawn.
				if esc.next(sig, time.Now()) == stageKill {
					sd = s.escalate(sd, stageKill)
				}
				continue
			}
			switch sig {
			case syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP:
				// The first ends the session gracefully, the next
				// escalates, the third kills (lifecycle.go).
				s.mu.Lock()
				s.interrupted = true
				s.mu.Unlock()
				sd = s.escalate(sd, esc.next(sig, time.Now()))
			case syscall.SIGPIPE:
				// With SIGPIPE notified, a write to any broken pipe
				// raises it, a hook or tool command's stdin too: only a
				// failed write to our stdout (closedC) means stdout is
				// gone.
			}
		case <-outClosed:
			outClosed = nil
			s.mu.Lock()
			s.stdoutClosed = true
			s.mu.Unlock()
			s.out.MarkClosed()
			if sd == nil || sd.stage < stageCloseStdin {
				sd = s.escalate(sd, stageCloseStdin)
			}
		case <-stage:
			if sd.stage == stageCloseStdin && !s.forcedShutdown() && s.silentFor() < s.opts.Grace {
				// Still writing after its stdin closed: finishing its work.
				sd.timer.Reset(s.opts.Grace)
				continue
			}
			if sd.stage == stageCloseStdin && !s.forcedShutdown() {
				s.mu.Lock()
				s.reaped = true
				s.mu.Unlock()
				s.warn(protocol.WarnInternal, fmt.Sprintf("the agent did not exit within %s of its stdin closing; terminating it", s.opts.Grace))
			}
			sd = s.escalate(sd, sd.stage+1)
		}
	}
}

// Shutdown stages, each tried for Grace before the next.
const (
	stageInterrupt = iota + 1 // ask the agent to stop the turn
	stageCloseStdin
	stageTerm
	stageKill
)

type shutdown struct {
	stage int
	timer *time.Timer
}

// escalate moves the shutdown to at least stage and acts on it.
func (s *session) escalate(sd *shutdown, stage int) *shutdown {
	if sd != nil {
		if stage <= sd.stage {
			return sd
		}
		sd.timer.Stop()
	}
	switch stage {
	case stageInterrupt:
		if s.turnInFlight() {
			s.ctl.sendOwnRequest("interrupt", map[string]string{"subtype": protocol.SubInterrupt})
		} else {
			// Nothing to interrupt: go straight to closing stdin.
			return s.escalate(sd, stageCloseStdin)
		}
	case stageCloseStdin:
		s.stdin.close()
	case stageTerm:
		// An agent that does not read its stdin never sees the EOF the
		// last stage queued: close the pipe under the writer.
		s.stdin.forceClose()
		s.cmd.Signal(syscall.SIGTERM)
	default:
		s.cmd.Kill()
		stage = stageKill
	}
	return &shutdown{stage: stage, timer: time.NewTimer(s.opts.Grace)}
}

// readyToClose: our input is done, no turn is in flight, no control
// request is pending and no background task runs. Closing the agent's
// stdin earlier would turn its next permission request into a denial.
func (s *session) readyToClose() bool {
	if s.fwd != nil {
		return s.fwd.forwardReadyToClose()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inputDone && s.turns.inFlightLocked() == 0 && len(s.ctl.pending) == 0 && len(s.ctl.ours) == 0 && len(s.turns.background) == 0 && s.settledLocked()
}

// silentFor is how long since the agent's last line.
func (s *session) silentFor() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return time.Since(s.lastOutput)
}

// forcedShutdown reports whether the shutdown was asked for (signal,
// timeout, closed stdout) rather than the session's normal end.
func (s *session) forcedShutdown() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.interrupted || s.timedOut || s.stalled || s.stdoutClosed || s.out.IsClosed()
}

func (s *session) turnInFlight() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.turns.inFlightLocked() > 0 || len(s.turns.background) > 0
}

// idleFor is how long the agent has been silent while it owed us output.
// Waiting for our input or for an approval is not idleness. It leaves
// lastOutput alone: that is the agent's real silence, which the end of a
// session waits on (settledLocked, silentFor).
func (s *session) idleFor() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if (s.turns.inFlightLocked() == 0 && len(s.turns.background) == 0 && len(s.ctl.ours) == 0) || len(s.ctl.pending) > 0 {
		s.owedSince = time.Now()
		return 0
	}
	return time.Since(later(s.lastOutput, s.owedSince))
}

func (s *session) notify() {
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

func (s *session) setInputDone() {
	s.mu.Lock()
	s.inputDone = true
	s.mu.Unlock()
	s.notify()
}

// sawOutput notes a chunk of agent output.
func (s *session) sawOutput() {
	s.mu.Lock()
	s.lastOutput = time.Now()
	s.turns.outputSeq++
	s.mu.Unlock()
}

// sendTurn sends a user turn and counts it in flight. Only the input
// reader waits for room in the agent's stdin: that is what holds a fast
// producer back.
func (s *session) sendTurn(line []byte, ours bool) {
	id, added := turnID(line), false
	s.stdin.q.WaitRoom(len(line)+50, 0, nil)
	s.stdin.mu.Lock()
	s.mu.Lock()
	if id == "" && s.opts.Profile.TurnIDs && s.turns.inFlightLocked() > 0 {
		// The agent may fold this turn into the next it runs: give it a
		// name the result will carry (turns.go).
		line, id = withNewTurnID(line)
		added = true
	}
	s.turns.sentLocked(id)
	if added {
		s.turns.addedIDs[id] = true
	}
	s.mu.Unlock()
	err := s.stdin.writeLocked(protocol.PartyAgentjq, line)
	s.stdin.mu.Unlock()
	if err != nil {
		s.mu.Lock()
		// Not sent: forget the turn counted above (the last one; inMu
		// kept any other from being counted since).
		if len(s.turns.open) > 0 {
			s.turns.open = s.turns.open[:len(s.turns.open)-1]
		}
		s.turns.n--
		s.mu.Unlock()
		s.warn(protocol.WarnInternal, "could not send a turn: "+err.Error())
		return
	}
	if ours && s.opts.Echo {
		s.outLine(line)
	}
}

// readInput turns our stdin into agent messages.
func (s *session) readInput(ctx context.Context) {
	defer s.setInputDone()
	lr := newLineReader(s.opts.Stdin)
	for {
		line, err := lr.next()
		if line != nil && s.stdin.q.Stopped() {
			// The session is shutting down: say so once, not per line.
			if len(bytes.TrimSpace(line)) > 0 {
				s.warnLine(protocol.WarnInternal, fmt.Sprintf("stdin:%d: the agent's stdin is closed; this line and any after it not sent", lr.n), lr.n)
			}
			return
		}
		if line != nil {
			s.inputLine(lr.n, line)
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				s.warn(protocol.WarnBadInput, "reading stdin: "+err.Error())
			}
			return
		}
		if ctx.Err() != nil {
			return
		}
	}
}

// inputLine sends one stdin line: a JSON object as it is, any other text
// as a user turn.
func (s *session) inputLine(n int, line []byte) {
	if s.fwd != nil {
		s.fwd.clientLine(line)
		return
	}
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 {
		return
	}
	if trimmed[0] != '{' {
		s.sendTurn(protocol.UserTurnWithSession(string(line), s.envelopeSession()), true)
		return
	}
	env, err := protocol.DecodeEnvelope(trimmed)
	if err != nil {
		msg := fmt.Sprintf("stdin:%d: %v; line not sent", n, err)
		fmt.Fprintf(s.opts.Stderr, "agentjq: %s\n", msg)
		s.warnLine(protocol.WarnBadInput, msg, n)
		return
	}
	if env.Type == protocol.TypeUser {
		s.sendTurn(trimmed, false)
		return
	}
	if env.Type == protocol.TypeControlResp {
		// agentjq answers every request the agent sends; a second answer
		// from the client would reach the agent as a duplicate.
		key, _, ok := protocol.RequestKey(protocol.Fields(env.Response, "request_id")[0])
		s.mu.Lock()
		dup := ok && s.ctl.asked[key]
		s.mu.Unlock()
		if dup {
			msg := fmt.Sprintf("stdin:%d: control_response for request %s, which agentjq answers itself; dropped", n, key)
			fmt.Fprintf(s.opts.Stderr, "agentjq: %s\n", msg)
			s.warnLine(protocol.WarnBadInput, msg, n)
			return
		}
	}
	if err := s.stdin.write(trimmed); err != nil {
		s.warn(protocol.WarnInternal, "could not send stdin line: "+err.Error())
	}
}

func (s *session) envelopeSession() string {
	if !s.opts.Profile.SessionInEnvelope {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessionID
}

// systemRouted reports whether agentjq acts on a system event of subtype.
func systemRouted(subtype string) bool {
	switch subtype {
	case "init", "task_started", "task_notification", "task_updated", "background_tasks_changed":
		return true
	}
	return false
}

func (s *session) system(subtype string, head protocol.Head, line []byte) {
	switch subtype {
	case "init":
		// system/init repeats every turn: the session id may change
		// (--resume), the version is checked once.
		sessionID := string(protocol.Unescape(head.SessionID))
		s.mu.Lock()
		if sessionID != "" {
			s.sessionID = sessionID
		}
		first := !s.versionSeen
		s.versionSeen = true
		s.mu.Unlock()
		if !first {
			return
		}
		var version string
		_ = json.Unmarshal(protocol.Fields(line, "claude_code_version")[0], &version)
		if version != "" && !protocol.VersionChecked(version) {
			msg := fmt.Sprintf("agent version %s was not checked by this agentjq (checked: %s); the protocol may have drifted",
				version, strings.Join(protocol.CheckedVersions, ", "))
			fmt.Fprintf(s.opts.Stderr, "agentjq: warning: %s\n", msg)
			s.warn(protocol.WarnVersion, msg)
		}
	case "task_started", "task_notification", "task_updated", "background_tasks_changed":
		s.turns.trackTask(subtype, line)
	}
}

func (s *session) nonJSON(n int, line []byte) {
	shown := line
	if s.opts.RedactEcho != nil {
		shown = s.opts.RedactEcho(shown) // whole: a cut could hide a key's shape
	}
	if len(shown) > 200 {
		shown = append(shown[:200:200], "..."...)
	}
	msg := fmt.Sprintf("agent stdout:%d: not JSON, not passed on: %s", n, shown)
	fmt.Fprintf(s.opts.Stderr, "agentjq: %s\n", msg)
	s.tap(protocol.DirErr, line, 0)
	s.warnLine(protocol.WarnNonJSON, msg, n)
}

// readAgentStderr copies the agent's stderr to ours as it comes, keeping
// the tail for error reports. It never blocks the agent.
func (s *session) readAgentStderr(r io.Reader) {
	br := bufio.NewReaderSize(r, 32<<10)
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			// Queued (or dropped, counted) if our stderr is not read:
			// never a stall of the agent.
			s.opts.Stderr.Write(line)
			s.mu.Lock()
			s.stderrTail.Write(line)
			s.mu.Unlock()
			s.tap(protocol.DirErr, bytes.TrimSuffix(line, []byte{'\n'}), 0)
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return
		}
	}
}

// finish computes the outcome and writes the exit event. What was tapped
// is written out first (TapErr waits for it), so that a recording whose
// last lines could not be written makes the exit event an error; the exit
// event is recorded before it is sent, so that a recording that cannot
// take it makes the event stdout gets an error too.
//
// tapErr is called without s.mu: a recorder behind a slow disk holds up
// only the end of the session.
func (s *session) finish() Report {
	tapErrOf := func() error {
		if s.opts.TapErr == nil {
			return nil
		}
		return s.opts.TapErr()
	}
	tapErr := tapErrOf()
	rep, ev := s.outcome(tapErr)
	if tapErr != nil || s.opts.TapErr == nil || s.fwd != nil {
		s.event(ev)
		// The exit event is the last line: a handler that ends late taps
		// and writes nothing more (the recording is closed after Run
		// returns).
		s.ended.Store(true)
		return rep
	}
	b := protocol.Marshal(ev)
	s.tap(protocol.DirEvent, b, 0)
	if err := tapErrOf(); err != nil {
		// Not recorded: the recording has failed already.
		rep, ev = s.outcome(err)
		b = protocol.Marshal(ev)
	}
	s.ended.Store(true)
	if !s.opts.NoEvents {
		s.outLine(b)
	}
	return rep
}

// outcome is the session's report and exit event; tapErr is the
// recording's failure, which makes any session an error.
func (s *session) outcome(tapErr error) (Report, protocol.Exit) {
	ending := s.stdin.q.Ending()
	s.mu.Lock()
	defer s.mu.Unlock()
	rep := Report{AgentExit: s.cmd.ProcessState.ExitCode(), Turns: s.turns.n, Denials: len(s.denied)}
	var sig syscall.Signal
	if ws, ok := s.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		sig = ws.Signal()
		rep.Signal = sig.String()
		rep.AgentExit = -1
	} else if rep.AgentExit > 128 {
		sig = syscall.Signal(rep.AgentExit - 128) // the reaper's 128+n
	}
	agentExit := rep.AgentExit
	switch {
	case s.reaped:
		agentExit = 0 // its work was done; we ended it
	case ending && len(s.turns.open) == 0 && (sig == syscall.SIGTERM || sig == syscall.SIGINT || sig == syscall.SIGHUP):
		// Idle, its stdin closed (the session's normal end), and ended by
		// a signal from whoever ended the session too (an ACP client such
		// as acpx signals the agent's descendants with the agent): no
		// turn was lost, so no crash.
		agentExit = 0
	}
	var last *protocol.Result
	if s.lastResult != nil {
		// A field of the wrong type leaves that field empty; the rest of
		// the result still decides.
		r, _ := protocol.DecodeResult(s.lastResult)
		last = &r
	}
	rep.Outcome = protocol.Decide(protocol.SessionFacts{
		TimedOut:     s.timedOut,
		Stalled:      s.stalled,
		Interrupted:  s.interrupted,
		StdoutClosed: s.stdoutClosed || s.out.IsClosed(),
		TurnInFlight: len(s.turns.open) > 0,
		AgentExit:    agentExit,
		LastResult:   last,
		Denials:      len(s.denied),
	})
	if tapErr != nil {
		// A session whose recording failed did not do what was asked.
		rep.Outcome = protocol.OutcomeError
	}
	rep.ExitCode = rep.Outcome.ExitCode()
	if s.fwd != nil {
		rep.ExitCode = s.fwd.forwardStatusLocked()
	}
	stopped := s.stopped.Load()
	if stopped != nil {
		rep.Outcome, rep.ExitCode = protocol.OutcomeError, protocol.ExitNotFound
	}
	ev := protocol.Exit{
		Type: protocol.TypeAgentjq, Subtype: protocol.EventExit,
		Outcome: rep.Outcome, Code: rep.ExitCode, Signal: rep.Signal,
		Turns: rep.Turns, Denials: rep.Denials,
	}
	if rep.AgentExit >= 0 {
		code := rep.AgentExit
		ev.AgentExit = &code
	}
	switch rep.Outcome {
	case protocol.OutcomeCrashed:
		rep.Err = fmt.Sprintf("the agent exited (%s) without the result of the turn in flight", exitDesc(rep))
		if t := strings.TrimSpace(s.stderrTail.String()); t != "" {
			rep.Err += "; its stderr ended with:\n" + lastLines(t, 10)
			ev.StderrTail = lastLines(t, 20)
		}
	case protocol.OutcomeError:
		switch {
		case stopped != nil:
			rep.Err = *stopped
		case tapErr != nil:
			rep.Err = tapErr.Error()
		default:
			rep.Err = last.ErrorText()
		}
	}
	ev.Error = rep.Err
	return rep, ev
}

func exitDesc(r Report) string {
	if r.Signal != "" {
		return "killed by " + r.Signal
	}
	return "status " + strconv.Itoa(r.AgentExit)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// drainCap bounds, in graces, how long the pump may go on with lines the
// agent wrote before it exited: a slow recorder or reader keeps its lines,
// but nothing holds the session's end for ever.
const drainCap = 4

// drained waits for the stdout pump to reach the end of what the agent
// wrote. It gives up (false) when the pump has waited wait on a pipe that
// yields nothing (a grandchild holds it open), when our stdout has not been
// read for a whole grace, or after drainCap graces. A pump still busy with
// lines is not cut off: those lines are the session's, and losing them
// (the result among them) would misreport it.
func (s *session) drained(done <-chan struct{}, r *pumpWatch, wait time.Duration) bool {
	if wait <= 0 {
		select {
		case <-done:
			return true
		default:
			return false
		}
	}
	start := time.Now()
	hard := start.Add(drainCap * s.opts.Grace)
	tick := time.NewTicker(min(max(s.opts.Grace/20, time.Millisecond), 50*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-done:
			return true
		case now := <-tick.C:
			if s.out.StalledFor() >= s.opts.Grace || now.After(hard) {
				return false
			}
			if since, reading := r.waitingSince(); reading && now.Sub(later(since, start)) >= wait {
				return false
			}
		}
	}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// stdinSettle is how long the agent must have been quiet before its stdin
// is closed at the end of a session that hosts hooks or MCP servers: the
// agent sends control requests right after a result or an initialize
// response (notifications/initialized, tools/list, Stop hooks), and one
// sent to a closed stdin is lost ("Stream closed").
const stdinSettle = 500 * time.Millisecond

// settledLocked reports whether stdin may close as far as KeepStdinOpen is
// concerned; when not yet, it arranges to be asked again. s.mu is held.
func (s *session) settledLocked() bool {
	if !s.opts.KeepStdinOpen {
		return true
	}
	wait := min(stdinSettle, s.opts.Grace) - time.Since(s.lastOutput)
	if wait <= 0 {
		return true
	}
	time.AfterFunc(wait+time.Millisecond, s.notify)
	return false
}

// runAtEnd runs Options.AtEnd once: hosted servers and their processes go
// before the exit event is written.
func (s *session) runAtEnd() {
	s.atEndOnce.Do(func() {
		for _, f := range s.opts.AtEnd {
			f()
		}
	})
}

// stdoutOptions are our stdout's: held while a prompt is open, when there
// is a gate.
func stdoutOptions(g *OutputGate) asyncq.WriterOptions {
	o := asyncq.WriterOptions{Limit: outQueue}
	if g != nil {
		o.Hold = g.wait
	}
	return o
}
