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
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentjq/agentjq/approve"
	"github.com/agentjq/agentjq/internal/syncio"
	"github.com/agentjq/agentjq/protocol"
)

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

	// Approver answers can_use_tool; nil denies everything.
	Approver approve.Decider
	// Handlers answer other agent control requests by subtype.
	Handlers map[string]ControlHandler
	// Init, when set, is sent as an initialize control request first.
	Init any
	// KeepStdinOpen holds the agent's stdin open while hooks or SDK MCP
	// servers are registered, until the session ends: on a normal end it
	// closes only once the agent has been quiet for a moment.
	KeepStdinOpen bool
	// AtEnd run once when the session is over (the agent exited or never
	// started), before the exit event: hosted servers are stopped there.
	AtEnd []func()

	// Tap sees every line in every direction, in order. The line is only
	// lent for the call: a tap that keeps it copies it.
	Tap func(dir protocol.Direction, line []byte)

	// Forward, when set, makes the session a proxy for a client that
	// speaks the protocol itself (forward.go).
	Forward *Forward

	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Signals delivers SIGINT, SIGTERM and SIGPIPE from the caller.
	Signals <-chan os.Signal
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
	opts Options
	cmd  *exec.Cmd
	pid  int

	stdinMu sync.Mutex
	stdin   io.WriteCloser // agent's stdin; nil once closed

	out *outWriter

	mu         sync.Mutex
	changed    chan struct{} // signalled when state the loop waits on changes
	inFlight   int           // turns sent whose result has not come
	lastSent   time.Time
	pending    map[string]context.CancelFunc // agent requests being answered
	withdraw   map[string]context.CancelFunc // cancels a request the agent withdrew
	ours       map[string]bool               // our own control requests awaiting replies
	background map[string]bool               // background task ids
	lastResult []byte                        // the last result line, raw
	turns      int
	// denied holds the tool_use_id of every denied call, whoever denied it:
	// agentjq answers and the agent's permission_denials name the same call.
	denied      map[string]bool
	sessionID   string
	versionSeen bool
	lastOutput  time.Time
	inputDone   bool // our stdin reached EOF (or one-shot prompt sent)

	interrupted, timedOut, stalled, stdoutClosed bool
	// reaped: the session had ended normally but the agent would not exit
	// after its stdin closed, so agentjq terminated it.
	reaped bool

	stderrTail tail
	reqSeq     int
	atEndOnce  sync.Once

	fwd *forwarder // nil unless Options.Forward
}

// Run runs a session to the end and reports its outcome. The error is
// non-nil only when the agent could not be started at all.
func Run(ctx context.Context, opts Options) (Report, error) {
	if opts.Grace <= 0 {
		opts.Grace = 5 * time.Second
	}
	if opts.Approver == nil {
		opts.Approver = approve.Default
	}
	if opts.Stderr == nil {
		opts.Stderr = io.Discard
	}
	// Several goroutines report on stderr; each write is a whole line.
	opts.Stderr = &syncio.Writer{W: opts.Stderr}
	s := &session{
		opts:       opts,
		out:        newOutWriter(opts.Stdout),
		changed:    make(chan struct{}, 1),
		pending:    map[string]context.CancelFunc{},
		withdraw:   map[string]context.CancelFunc{},
		ours:       map[string]bool{},
		background: map[string]bool{},
		denied:     map[string]bool{},
		stderrTail: tail{max: 64 << 10},
	}
	if opts.Forward != nil {
		s.fwd = newForwarder(&s.opts)
	}
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
	growPipe(stdoutR)
	stderrR, stderrW, err := os.Pipe()
	if err != nil {
		return Report{}, err
	}
	cmd := exec.Command(s.opts.Path, s.opts.Args...)
	cmd.Dir = s.opts.Dir
	cmd.Env = s.opts.Env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, stdoutW, stderrW
	// The pipes are *os.File, so Wait starts no copying goroutines; a
	// grandchild holding stdout is handled by the reader's own deadline
	// below. WaitDelay still bounds Wait should that ever change.
	cmd.WaitDelay = s.opts.Grace
	ownProcessGroup(cmd)
	if err := cmd.Start(); err != nil {
		for _, f := range []*os.File{stdinR, stdinW, stdoutR, stdoutW, stderrR, stderrW} {
			f.Close()
		}
		s.runAtEnd()
		return Report{AgentExit: -1}, &StartError{err}
	}
	stdinR.Close()
	stdoutW.Close()
	stderrW.Close()
	s.cmd, s.pid, s.stdin = cmd, cmd.Process.Pid, stdinW
	s.lastOutput = time.Now()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	stdoutDone := make(chan struct{})
	stderrDone := make(chan struct{})
	go func() { defer close(stdoutDone); s.readAgentStdout(ctx, stdoutR) }()
	go func() { defer close(stderrDone); s.readAgentStderr(stderrR) }()

	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()

	if s.opts.Init != nil {
		s.sendOwnRequest("init", s.opts.Init)
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

	// The agent has exited (or was killed). Let the readers drain what it
	// wrote; a grandchild that still holds the pipes is cut off after the
	// grace period, and the process group is cleaned up either way.
	select {
	case <-stdoutDone:
	case <-time.After(s.opts.Grace):
		stdoutR.Close()
		<-stdoutDone
	}
	signalGroup(s.pid, sigKILL)
	select {
	case <-stderrDone:
	case <-time.After(s.opts.Grace):
		stderrR.Close()
		<-stderrDone
	}
	stdoutR.Close()
	stderrR.Close()
	s.cancelPending()
	s.runAtEnd()
	if waitErr != nil && s.cmd.ProcessState == nil {
		return Report{AgentExit: -1}, &StartError{waitErr}
	}
	return s.finish(), nil
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
	var sigints int
	var lastSigint time.Time
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
				s.closeStdin()
				sd = s.startShutdown(stageCloseStdin)
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
			if s.fwd != nil && s.forwardSignal(sig) {
				continue
			}
			switch sig {
			case syscall.SIGINT:
				now := time.Now()
				if now.Sub(lastSigint) > 5*time.Second {
					sigints = 0
				}
				sigints++
				lastSigint = now
				s.mu.Lock()
				s.interrupted = true
				s.mu.Unlock()
				switch sigints {
				case 1:
					sd = s.escalate(sd, stageInterrupt)
				case 2:
					sd = s.escalate(sd, stageTerm)
				default:
					sd = s.escalate(sd, stageKill)
				}
			case syscall.SIGTERM, syscall.SIGHUP:
				s.mu.Lock()
				s.interrupted = true
				s.mu.Unlock()
				sd = s.escalate(sd, stageInterrupt)
			case syscall.SIGPIPE:
				// With SIGPIPE notified, a write to any broken pipe
				// raises it, a hook or tool command's stdin too: only a
				// failed write to our stdout means stdout is gone.
				if s.out.flush(); s.out.isClosed() {
					s.markStdoutClosed()
				}
			}
		case <-s.out.closedC:
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

func (s *session) startShutdown(stage int) *shutdown {
	return &shutdown{stage: stage, timer: time.NewTimer(s.opts.Grace)}
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
			s.sendOwnRequest("interrupt", map[string]string{"subtype": protocol.SubInterrupt})
		} else {
			// Nothing to interrupt: go straight to closing stdin.
			return s.escalate(sd, stageCloseStdin)
		}
	case stageCloseStdin:
		s.closeStdin()
	case stageTerm:
		s.closeStdin()
		signalGroup(s.pid, sigTERM)
	default:
		signalGroup(s.pid, sigKILL)
		stage = stageKill
	}
	return s.startShutdown(stage)
}

// readyToClose: our input is done, no turn is in flight, no control
// request is pending and no background task runs. Closing the agent's
// stdin earlier would turn its next permission request into a denial.
func (s *session) readyToClose() bool {
	if s.fwd != nil {
		return s.forwardReadyToClose()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inputDone && s.inFlight == 0 && len(s.pending) == 0 && len(s.ours) == 0 && len(s.background) == 0 && s.settledLocked()
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
	return s.interrupted || s.timedOut || s.stalled || s.stdoutClosed || s.out.isClosed()
}

func (s *session) turnInFlight() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inFlight > 0 || len(s.background) > 0
}

// idleFor is how long the agent has been silent while it owed us output.
// Waiting for our input or for an approval is not idleness.
func (s *session) idleFor() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if (s.inFlight == 0 && len(s.background) == 0 && len(s.ours) == 0) || len(s.pending) > 0 {
		s.lastOutput = time.Now()
		return 0
	}
	return time.Since(s.lastOutput)
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

func (s *session) markStdoutClosed() {
	s.mu.Lock()
	s.stdoutClosed = true
	s.mu.Unlock()
	s.out.markClosed()
}

// writeAgent writes one line to the agent's stdin.
func (s *session) writeAgent(line []byte) error {
	if s.fwd != nil {
		return s.writeAgentAs(protocol.PartyAgentjq, line)
	}
	s.stdinMu.Lock()
	defer s.stdinMu.Unlock()
	if s.stdin == nil {
		return errors.New("the agent's stdin is closed")
	}
	if s.opts.Tap != nil {
		s.opts.Tap(protocol.DirIn, line)
	}
	buf := make([]byte, 0, len(line)+1)
	buf = append(append(buf, line...), '\n')
	_, err := s.stdin.Write(buf)
	return err
}

func (s *session) closeStdin() {
	s.stdinMu.Lock()
	defer s.stdinMu.Unlock()
	if s.stdin != nil {
		s.stdin.Close()
		s.stdin = nil
	}
}

// sendTurn sends a user turn and counts it in flight.
func (s *session) sendTurn(line []byte, ours bool) {
	s.mu.Lock()
	s.inFlight++
	s.turns++
	s.lastSent = time.Now()
	s.mu.Unlock()
	if err := s.writeAgent(line); err != nil {
		s.mu.Lock()
		s.inFlight--
		s.mu.Unlock()
		s.warn(protocol.WarnInternal, "could not send a turn: "+err.Error())
		return
	}
	if ours && s.opts.Echo {
		s.out.line(line, true)
	}
}

// sendOwnRequest sends a control request of agentjq's own; its reply is
// passed through like any other line.
func (s *session) sendOwnRequest(kind string, body any) {
	s.mu.Lock()
	s.reqSeq++
	id := "agentjq-" + kind + "-" + strconv.Itoa(s.reqSeq)
	s.ours[id] = true
	s.mu.Unlock()
	if err := s.writeAgent(protocol.ControlRequest(id, body)); err != nil {
		s.mu.Lock()
		delete(s.ours, id)
		s.mu.Unlock()
	}
}

// readInput turns our stdin into agent messages.
func (s *session) readInput(ctx context.Context) {
	defer s.setInputDone()
	lr := newLineReader(s.opts.Stdin)
	for {
		line, err := lr.next()
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
		s.clientLine(line)
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
	if err := s.writeAgent(trimmed); err != nil {
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

// control routes the control messages of the agent.
func (s *session) control(ctx context.Context, env protocol.Envelope) {
	switch env.Type {
	case protocol.TypeControlRequest:
		req := append([]byte(nil), env.Request...)
		hctx, cancel := context.WithCancelCause(ctx)
		s.mu.Lock()
		s.pending[env.RequestID] = func() { cancel(context.Canceled) }
		s.withdraw[env.RequestID] = func() { cancel(errWithdrawn) }
		s.mu.Unlock()
		go s.answer(hctx, env.RequestID, req)
	case protocol.TypeControlCancel:
		s.mu.Lock()
		withdraw := s.withdraw[env.RequestID]
		s.mu.Unlock()
		if withdraw != nil {
			withdraw()
		}
	case protocol.TypeControlResp:
		id := env.ResponseID()
		s.mu.Lock()
		delete(s.ours, id)
		s.mu.Unlock()
		s.notify()
	}
}

func (s *session) tap(dir protocol.Direction, line []byte) {
	if s.opts.Tap != nil {
		s.opts.Tap(dir, line)
	}
}

// result counts a turn done. Only what the session needs now is read; the
// last result is kept raw and decoded once, for the outcome.
func (s *session) result(line []byte) {
	f := protocol.Fields(line, "permission_denials", "queued_turn_count")
	// Only the ids are needed: read them where they lie rather than decode
	// the inputs they come with.
	var denials []string
	if len(f[0]) > 2 { // not "[]"
		for _, d := range protocol.Elements(f[0]) {
			id, _ := protocol.String(protocol.Fields(d, "tool_use_id")[0])
			denials = append(denials, id)
		}
	}
	var queued *int
	if f[1] != nil {
		if q, err := strconv.Atoi(string(f[1])); err == nil {
			queued = &q
		}
	}
	s.mu.Lock()
	s.lastResult = append(s.lastResult[:0], line...)
	for _, key := range denials {
		if key == "" {
			key = "result-" + strconv.Itoa(len(s.denied))
		}
		s.denied[key] = true
	}
	if s.inFlight > 0 {
		s.inFlight--
	}
	// Turns written while one runs may be folded into it: one result for
	// several turns. The agent says how many are still queued; trust it
	// unless we wrote a turn so recently it may not have been read yet.
	if queued != nil && s.inFlight > *queued && time.Since(s.lastSent) > time.Second {
		s.inFlight = *queued
	}
	s.mu.Unlock()
	s.notify()
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
		s.sessionID = sessionID
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
		s.trackTask(subtype, line)
	}
}

// trackTask follows background tasks: the session is not over while one
// runs, even after the turn's result.
func (s *session) trackTask(subtype string, line []byte) {
	var t struct {
		TaskID     string `json:"task_id"`
		Background bool   `json:"is_backgrounded"`
		Status     string `json:"status"`
		Patch      struct {
			Status string `json:"status"`
		} `json:"patch"`
		Tasks []struct {
			TaskID string `json:"task_id"`
		} `json:"tasks"`
	}
	if json.Unmarshal(line, &t) != nil {
		return
	}
	s.mu.Lock()
	switch subtype {
	case "task_started":
		if t.Background {
			s.background[t.TaskID] = true
		}
	case "task_notification":
		delete(s.background, t.TaskID)
	case "task_updated":
		if terminalTaskStatus(t.Patch.Status) {
			delete(s.background, t.TaskID)
		}
	case "background_tasks_changed":
		s.background = map[string]bool{}
		for _, task := range t.Tasks {
			s.background[task.TaskID] = true
		}
	}
	s.mu.Unlock()
	s.notify()
}

func terminalTaskStatus(st string) bool {
	switch st {
	case "completed", "failed", "killed", "cancelled", "stopped", "error":
		return true
	}
	return false
}

func (s *session) nonJSON(n int, line []byte) {
	shown := line
	if len(shown) > 200 {
		shown = append(shown[:200:200], "..."...)
	}
	msg := fmt.Sprintf("agent stdout:%d: not JSON, not passed on: %s", n, shown)
	fmt.Fprintf(s.opts.Stderr, "agentjq: %s\n", msg)
	s.tap(protocol.DirErr, line)
	s.warnLine(protocol.WarnNonJSON, msg, n)
}

// readAgentStderr copies the agent's stderr to ours as it comes, keeping
// the tail for error reports. It never blocks the agent.
func (s *session) readAgentStderr(r io.Reader) {
	br := bufio.NewReaderSize(r, 32<<10)
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			s.opts.Stderr.Write(line)
			s.mu.Lock()
			s.stderrTail.Write(line)
			s.mu.Unlock()
			s.tap(protocol.DirErr, bytes.TrimSuffix(line, []byte{'\n'}))
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return
		}
	}
}

// event writes one of agentjq's own events, unless --no-events.
func (s *session) event(v any) {
	b := protocol.Marshal(v)
	if s.fwd != nil {
		s.fwd.event(s, protocol.PartyAgentjq, b)
		return
	}
	s.tap(protocol.DirEvent, b)
	if !s.opts.NoEvents {
		s.out.line(b, true)
	}
}

func (s *session) warn(code, msg string) { s.warnLine(code, msg, 0) }

func (s *session) warnLine(code, msg string, line int) {
	w := protocol.NewWarning(code, msg)
	w.Line = line
	s.event(w)
}

func (s *session) cancelPending() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.pending {
		c()
	}
}

// finish computes the outcome and writes the exit event.
func (s *session) finish() Report {
	rep, ev := s.outcome()
	s.event(ev)
	s.out.flush()
	return rep
}

func (s *session) outcome() (Report, protocol.Exit) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rep := Report{AgentExit: s.cmd.ProcessState.ExitCode(), Turns: s.turns, Denials: len(s.denied)}
	if ws, ok := s.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		rep.Signal = ws.Signal().String()
		rep.AgentExit = -1
	}
	agentExit := rep.AgentExit
	if s.reaped {
		agentExit = 0 // its work was done; we ended it
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
		StdoutClosed: s.stdoutClosed || s.out.isClosed(),
		TurnInFlight: s.inFlight > 0,
		AgentExit:    agentExit,
		LastResult:   last,
		Denials:      len(s.denied),
	})
	rep.ExitCode = rep.Outcome.ExitCode()
	if s.fwd != nil {
		rep.ExitCode = s.forwardStatusLocked()
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
		rep.Err = last.ErrorText()
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
