package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentjq/agentjq/internal/asyncq"
	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/internal/syncio"
	"github.com/agentjq/agentjq/internal/testkit/fakeagent"
)

// stalledWriter never returns from Write until the test ends: a peer that
// keeps its pipe open and stops reading. stuck is closed once a write is
// stuck in it.
type stalledWriter struct {
	release, stuck chan struct{}
	once           *sync.Once
}

func newStalledWriter(t *testing.T) stalledWriter {
	w := stalledWriter{make(chan struct{}), make(chan struct{}), new(sync.Once)}
	t.Cleanup(func() { close(w.release) })
	return w
}

func (w stalledWriter) Write(p []byte) (int, error) {
	w.once.Do(func() { close(w.stuck) })
	<-w.release
	return 0, io.ErrClosedPipe
}

// faultGrace is the grace of every fault case: each shutdown stage waits
// this long before the next.
const faultGrace = 300 * time.Millisecond

// faultCase is one fault: an agent scenario, the client's side, and what
// must come of it.
type faultCase struct {
	name     string
	scenario string
	stdin    func() io.Reader
	tweak    func(t *testing.T, o *Options)
	// signals are sent this long after the start, in order.
	signals []timedSignal
	// bound is the documented time the session may take: the stages it
	// goes through, each a grace, plus the grace after the agent's exit.
	bound   time.Duration
	outcome protocol.Outcome
	check   func(t *testing.T, r faultRun)
	// needsTreeKill: a descendant that left the process group; only the
	// process runner (subreaper) can end it. Reported apart.
	needsTreeKill bool
}

type timedSignal struct {
	after time.Duration
	sig   os.Signal
}

type faultRun struct {
	rep     Report
	stdout  string
	stderr  string
	log     string
	took    time.Duration
	hung    bool
	crashed any
	pids    []int
}

// manyTurns is more turns than a pipe holds, so an agent that stops
// reading blocks whoever writes them.
func manyTurns() io.Reader {
	return strings.NewReader(strings.Repeat("a turn that nobody will read, padded to make the pipe fill up quickly "+strings.Repeat("x", 900)+"\n", 4096))
}

func oneTurn() io.Reader { return strings.NewReader("hi\n") }

func faultCases() []faultCase {
	g := faultGrace
	return []faultCase{
		{
			name: "agent stops reading stdin while turns are piped in, then SIGTERM", scenario: "no-read",
			stdin:   manyTurns,
			signals: []timedSignal{{300 * time.Millisecond, syscall.SIGTERM}},
			// interrupt, close stdin, SIGTERM (ignored), SIGKILL, exit.
			bound: 300*time.Millisecond + 4*g, outcome: protocol.OutcomeInterrupted,
			check: func(t *testing.T, r faultRun) {
				if n := len(events(t, r.stdout, "warning")); n > 3 {
					t.Errorf("%d warnings: one per unsent line?", n)
				}
			},
		},
		{
			name: "stdout reader stalls with the pipe open, --timeout", scenario: "flood",
			stdin: oneTurn,
			tweak: func(t *testing.T, o *Options) { o.Stdout = newStalledWriter(t); o.Timeout = 300 * time.Millisecond },
			// The flood has no turn to interrupt after its first: close
			// stdin, SIGTERM, exit; the output is abandoned after a grace.
			bound: 300*time.Millisecond + 4*g, outcome: protocol.OutcomeTimeout,
		},
		{
			name: "stdout reader stalls with the pipe open, SIGINT three times", scenario: "flood",
			stdin: oneTurn,
			tweak: func(t *testing.T, o *Options) { o.Stdout = newStalledWriter(t) },
			signals: []timedSignal{{200 * time.Millisecond, syscall.SIGINT},
				{220 * time.Millisecond, syscall.SIGINT}, {240 * time.Millisecond, syscall.SIGINT}},
			bound: 240*time.Millisecond + 2*g, outcome: protocol.OutcomeInterrupted,
		},
		{
			name: "stderr is a pipe nobody reads, --timeout", scenario: "no-read",
			stdin: oneTurn,
			tweak: func(t *testing.T, o *Options) {
				o.Stderr = newStalledWriter(t)
				o.Timeout = 300 * time.Millisecond
				o.Env = append(o.Env, "AGENTJQ_FAKE_STDERR_NOISE=1")
			},
			bound: 300*time.Millisecond + 4*g, outcome: protocol.OutcomeTimeout,
		},
		{
			name: "agent floods a stderr nobody reads", scenario: "stderr-flood:8000000",
			stdin: oneTurn,
			tweak: func(t *testing.T, o *Options) { o.Stderr = newStalledWriter(t) },
			// A normal end: close stdin, exit, the grace for stderr.
			bound: 2*time.Second + 2*g, outcome: protocol.OutcomeSuccess,
		},
		{
			name: "agent never answers initialize", scenario: "no-init",
			stdin: oneTurn,
			tweak: func(t *testing.T, o *Options) {
				o.Init = map[string]string{"subtype": "initialize"}
				o.ControlTimeout = 300 * time.Millisecond
			},
			bound: 300*time.Millisecond + 2*g + time.Second, outcome: protocol.OutcomeSuccess,
			check: func(t *testing.T, r faultRun) {
				if !strings.Contains(r.stdout, "did not answer agentjq's init request") {
					t.Errorf("no warning about the unanswered initialize:\n%s", r.stdout)
				}
			},
		},
		{
			name: "agent ignores SIGTERM and stalls, --idle-timeout", scenario: "no-read",
			stdin: oneTurn,
			tweak: func(t *testing.T, o *Options) { o.IdleTimeout = 300 * time.Millisecond },
			// idle notice, interrupt, close stdin, SIGTERM (ignored), SIGKILL.
			bound: 300*time.Millisecond + 5*g, outcome: protocol.OutcomeStalled,
		},
		{
			name: "a child in its own session holds stdout", scenario: "setsid-child",
			stdin: oneTurn,
			bound: 2*time.Second + 2*g, outcome: protocol.OutcomeSuccess, needsTreeKill: true,
		},
		{
			name: "garbage on stdout", scenario: "garbage",
			stdin: oneTurn,
			bound: 2*time.Second + 2*g, outcome: protocol.OutcomeSuccess,
			check: func(t *testing.T, r faultRun) {
				if n := len(events(t, r.stdout, "warning")); n < 5 {
					t.Errorf("%d warnings for 6 bad lines", n)
				}
				for _, l := range agentLines(r.stdout) {
					if env, err := protocol.DecodeEnvelope([]byte(l)); err != nil {
						t.Errorf("a bad line was passed on: %.80q (%v)", l, env.Type)
					}
				}
			},
		},
		{
			name: "a 32 MiB line", scenario: "bigline:33554432",
			stdin: oneTurn,
			// What is judged is the line coming through whole, not how
			// fast: a grace of 300 ms is less than a loaded CI machine
			// may starve the writer for (this case failed so in CI with
			// the outcome success, the tail given up after it).
			tweak: func(t *testing.T, o *Options) { o.Grace = 2 * time.Second },
			bound: 10 * time.Second, outcome: protocol.OutcomeSuccess,
			check: func(t *testing.T, r faultRun) {
				lines := agentLines(r.stdout)
				if len(lines) != 2 || len(lines[0]) < 32<<20 || !json.Valid([]byte(lines[0])) {
					t.Errorf("the long line did not come through whole (%d lines)", len(lines))
				}
			},
		},
		{
			name: "agent crashes", scenario: "crash",
			stdin: oneTurn,
			bound: 2 * g, outcome: protocol.OutcomeCrashed,
		},
		{
			name: "numeric request_id", scenario: "numeric-id",
			stdin: oneTurn,
			bound: 2*time.Second + 2*g, outcome: protocol.OutcomeDenied,
			check: func(t *testing.T, r faultRun) {
				if !strings.Contains(r.log, `"request_id":7,`) {
					t.Errorf("the answer does not echo request_id 7 as a number:\n%s", r.log)
				}
			},
		},
		{
			// Valid JSON deeper than the scanner reads: the permission
			// request and the PreToolUse hook are each denied once, the
			// deep result still ends the turn (else the session would wait
			// for it forever), none is passed on.
			name: "requests and a result nested deeper than the scanner reads", scenario: "deep-request",
			stdin: oneTurn,
			bound: 2*time.Second + 2*g, outcome: protocol.OutcomeDenied,
			check: func(t *testing.T, r faultRun) {
				got := responses(r.log)
				_, dup1 := got["deep1#dup"]
				_, dup2 := got["deep2#dup"]
				if dup1 || dup2 || len(got) != 2 {
					t.Errorf("want exactly one answer each to deep1 and deep2; got %v", got)
				}
				inner, _ := got["deep1"]["response"].(map[string]any)
				msg, _ := inner["message"].(string)
				if inner["behavior"] != protocol.Deny || !strings.Contains(msg, "nesting deeper than 10000") {
					t.Errorf("answer to deep1 = %v, want a deny saying \"nesting deeper than 10000\"", got["deep1"])
				}
				hook, _ := got["deep2"]["response"].(map[string]any)
				spec, _ := hook["hookSpecificOutput"].(map[string]any)
				reason, _ := spec["permissionDecisionReason"].(string)
				if got["deep2"]["subtype"] != "success" || spec["permissionDecision"] != protocol.Deny || !strings.Contains(reason, "nesting deeper than 10000") {
					t.Errorf("answer to deep2 = %v, want a PreToolUse deny saying \"nesting deeper than 10000\"", got["deep2"])
				}
				decs := events(t, r.stdout, "decision")
				if len(decs) != 2 || decs[0]["behavior"] != protocol.Deny || decs[0]["tool"] != "Bash" ||
					decs[1]["behavior"] != protocol.Deny || decs[1]["tool"] != "mcp__x__y" || decs[1]["via"] != protocol.ViaHook {
					t.Errorf("decision events %v, want a deny of Bash and a deny of mcp__x__y via the hook", decs)
				}
				if strings.Contains(r.stderr, "not JSON") || !strings.Contains(r.stderr, "nesting deeper than 10000") {
					t.Errorf("stderr does not say the lines are too deep:\n%s", r.stderr)
				}
				for _, l := range agentLines(r.stdout) {
					if strings.Contains(l, "[[[[") {
						t.Errorf("a too-deep line was passed on: %.80s", l)
					}
				}
			},
		},
	}
}

// TestFaultSuite runs every fault case and reports hangs, orphans and
// crashes as figures; all must be 0. Each case is bounded: a session that
// outlives its documented shutdown time by more than a second counts as a
// hang (its agent is then killed so the suite goes on).
func TestFaultSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("fault suite: spawns fake agents")
	}
	var hangs, orphans, crashes, treeOrphans, slow int
	var report []string
	for _, fc := range faultCases() {
		t.Run(fc.name, func(t *testing.T) {
			r := runFault(t, fc)
			line := fmt.Sprintf("%-70s %7s (bound %s) outcome %s", fc.name, r.took.Round(time.Millisecond), fc.bound, r.rep.Outcome)
			switch {
			case r.crashed != nil:
				crashes++
				t.Errorf("crash: %v", r.crashed)
			case r.hung:
				hangs++
				t.Errorf("hang: still running after %s", r.took)
			case r.took > fc.bound+time.Second:
				slow++
				t.Errorf("took %s, documented bound %s", r.took, fc.bound)
			}
			if !r.hung && r.crashed == nil && r.rep.Outcome != fc.outcome {
				t.Errorf("outcome %s, want %s\nstdout tail: %.400s\nstderr: %.400s", r.rep.Outcome, fc.outcome, tailOf(r.stdout), r.stderr)
			}
			for _, pid := range r.pids {
				if waitDead(pid, 2*time.Second) != nil {
					if fc.needsTreeKill {
						treeOrphans++
						line += fmt.Sprintf("; pid %d left its process group and survived", pid)
					} else {
						orphans++
						t.Errorf("orphan: pid %d outlived the session", pid)
					}
					syscall.Kill(pid, syscall.SIGKILL)
				}
			}
			if fc.check != nil && !r.hung && r.crashed == nil {
				fc.check(t, r)
			}
			report = append(report, line)
		})
	}
	t.Logf("fault suite: %d cases, hangs %d, orphans %d, crashes %d, over their bound %d; setsid descendants left for the process runner: %d\n%s",
		len(faultCases()), hangs, orphans, crashes, slow, treeOrphans, strings.Join(report, "\n"))
	if hangs+orphans+crashes+slow > 0 {
		t.Errorf("hangs %d, orphans %d, crashes %d, over bound %d: all must be 0", hangs, orphans, crashes, slow)
	}
}

func tailOf(s string) string {
	if len(s) > 400 {
		return s[len(s)-400:]
	}
	return s
}

func runFault(t *testing.T, fc faultCase) faultRun {
	logPath := filepath.Join(t.TempDir(), "fake.log")
	var out, errb syncio.Buffer
	sigs := make(chan os.Signal, 8)
	opts := Options{
		Profile: Profiles["claude"],
		Path:    os.Args[0],
		Env:     append(os.Environ(), fakeagent.Scenario+"="+fc.scenario, fakeagent.Log+"="+logPath),
		Stdin:   fc.stdin(),
		Stdout:  &out,
		Stderr:  &errb,
		Grace:   faultGrace,
		Signals: sigs,
	}
	if fc.tweak != nil {
		fc.tweak(t, &opts)
	}
	type result struct {
		rep     Report
		crashed any
	}
	done := make(chan result, 1)
	start := time.Now()
	go func() {
		var res result
		defer func() {
			res.crashed = recover()
			done <- res
		}()
		res.rep, _ = Run(context.Background(), opts)
	}()
	// Time counts from the agent's start (its first log line): on a busy
	// machine starting a process can take a while, and no bound is about
	// that.
	ready := make(chan time.Time, 1)
	go func() {
		for time.Since(start) < fc.bound+5*time.Second {
			if b, _ := os.ReadFile(logPath); strings.Contains(string(b), "PID ") {
				ready <- time.Now()
				return
			}
			time.Sleep(2 * time.Millisecond)
		}
		ready <- start
	}()
	var once sync.Once
	var r faultRun
	select {
	case start = <-ready:
	case res := <-done:
		r.rep, r.crashed = res.rep, res.crashed
		r.took = time.Since(start)
		r.stdout, r.stderr = out.String(), errb.String()
		logb, _ := os.ReadFile(logPath)
		r.log, r.pids = string(logb), logPids(logPath)
		return r
	}
	for _, s := range fc.signals {
		time.AfterFunc(s.after, func() { sigs <- s.sig })
	}
	select {
	case res := <-done:
		r.rep, r.crashed = res.rep, res.crashed
	case <-time.After(fc.bound + 5*time.Second):
		r.hung = true
		once.Do(func() {
			for _, pid := range logPids(logPath) {
				syscall.Kill(-pid, syscall.SIGKILL)
				syscall.Kill(pid, syscall.SIGKILL)
			}
		})
	}
	r.took = time.Since(start)
	logb, _ := os.ReadFile(logPath)
	r.stdout, r.stderr, r.log = out.String(), errb.String(), string(logb)
	r.pids = logPids(logPath)
	return r
}

// logPids are the pids the fake agent logged: its own and its children's.
func logPids(path string) []int {
	b, _ := os.ReadFile(path)
	var pids []int
	for _, l := range strings.Split(string(b), "\n") {
		for _, p := range []string{"PID ", "CHILD ", "GRANDCHILD "} {
			if strings.HasPrefix(l, p) {
				if pid, err := strconv.Atoi(strings.TrimPrefix(l, p)); err == nil {
					pids = append(pids, pid)
				}
			}
		}
	}
	return pids
}

// TestClientAnswerToAgentRequestDropped: a control_response the client
// writes for a request agentjq answers itself never reaches the agent.
func TestClientAnswerToAgentRequestDropped(t *testing.T) {
	const id = "ee25409c-b461-406a-9d17-8717dbd9e419"
	stdinR, stdinW := io.Pipe()
	r := runFake(t, "capture:write-allow", "", func(o *Options) {
		o.Stdin = stdinR
		logPath := fakeLog(o.Env)
		go func() {
			defer stdinW.Close()
			io.WriteString(stdinW, "go\n")
			// Wait until agentjq has answered, then answer again.
			waitLogged(logPath, `"request_id":"`+id+`"`, 10*time.Second)
			io.WriteString(stdinW, `{"type":"control_response","response":{"subtype":"success","request_id":"`+id+`","response":{"behavior":"allow","updatedInput":{}}}}`+"\n")
		}()
	})
	if _, dup := responses(r.log)[id+"#dup"]; dup {
		t.Errorf("the agent got two answers for %s:\n%s", id, r.log)
	}
	if !strings.Contains(r.stderr, "which agentjq answers itself; dropped") {
		t.Errorf("no warning on stderr: %q", r.stderr)
	}
	if len(events(t, r.stdout, "warning")) == 0 {
		t.Error("no warning event")
	}
}

// TestTapFailureIsAnError: a recording that failed makes the session's
// outcome an error, not a success.
func TestTapFailureIsAnError(t *testing.T) {
	r := runFake(t, "capture:hello", "hi\n", func(o *Options) {
		o.Tap = func(protocol.Direction, []byte, protocol.Known) {}
		o.TapErr = func() error { return fmt.Errorf("recording x.ndjson: no space left on device") }
	})
	if r.rep.Outcome != protocol.OutcomeError || r.rep.ExitCode == 0 {
		t.Errorf("outcome %s/%d, want error", r.rep.Outcome, r.rep.ExitCode)
	}
	ex := events(t, r.stdout, "exit")
	if len(ex) != 1 || ex[0]["code"] == float64(0) || !strings.Contains(fmt.Sprint(ex[0]["error"]), "no space left") {
		t.Errorf("exit event %v", ex)
	}
}

// TestTapFailureOfTheExitEvent: a recording that fails only when the exit
// event is written still makes the exit event stdout gets an error, and
// the tap is asked to write out before the exit event is composed.
func TestTapFailureOfTheExitEvent(t *testing.T) {
	var mu sync.Mutex
	var exitTapped bool
	var asked []bool // for each TapErr call: was the exit event tapped
	r := runFake(t, "capture:hello", "hi\n", func(o *Options) {
		o.Tap = func(dir protocol.Direction, line []byte, _ protocol.Known) {
			mu.Lock()
			defer mu.Unlock()
			if dir == protocol.DirEvent && strings.Contains(string(line), `"subtype":"exit"`) {
				exitTapped = true
			}
		}
		o.TapErr = func() error {
			mu.Lock()
			defer mu.Unlock()
			asked = append(asked, exitTapped)
			if exitTapped {
				return fmt.Errorf("recording x.ndjson: write: no space left on device")
			}
			return nil
		}
	})
	if len(asked) != 2 || asked[0] || !asked[1] {
		t.Errorf("TapErr asked %v, want once before and once after the exit event was tapped", asked)
	}
	if r.rep.Outcome != protocol.OutcomeError || r.rep.ExitCode != protocol.ExitError {
		t.Errorf("outcome %s/%d, want error", r.rep.Outcome, r.rep.ExitCode)
	}
	ex := events(t, r.stdout, "exit")
	if len(ex) != 1 || ex[0]["code"] != float64(protocol.ExitError) || !strings.Contains(fmt.Sprint(ex[0]["error"]), "no space left") {
		t.Errorf("exit event %v", ex)
	}
}

// TestOutputGateHoldsStdout: while a prompt holds the gate, nothing more
// reaches stdout; after the release everything does, in order.
func TestOutputGateHoldsStdout(t *testing.T) {
	var out syncio.Buffer
	g := NewOutputGate()
	q := asyncq.NewWriter(&out, asyncq.WriterOptions{Limit: outQueue, Hold: g.wait})
	g.flush = q.Flushed
	q.Send([]byte("before\n"), nil)
	release := g.Hold()
	if got := out.String(); got != "before\n" {
		t.Fatalf("Hold did not let the earlier line out first: %q", got)
	}
	q.Send([]byte("during\n"), nil)
	time.Sleep(100 * time.Millisecond)
	if got := out.String(); got != "before\n" {
		t.Fatalf("a line got past the held gate: %q", got)
	}
	release()
	q.Flushed(time.Now().Add(5 * time.Second))
	if got := out.String(); got != "before\nduring\n" {
		t.Errorf("after the release: %q", got)
	}
	if lost := q.Drain(time.Second, time.Second); lost != 0 {
		t.Errorf("lost %d bytes", lost)
	}
}

// TestStalledWriterIsAbandoned: a stdout that never takes a write does not
// hold drain beyond its deadline, and what was lost is counted.
func TestStalledWriterIsAbandoned(t *testing.T) {
	w := newStalledWriter(t)
	q := asyncq.NewWriter(w, asyncq.WriterOptions{Limit: outQueue})
	q.Send([]byte("first\n"), nil)
	<-w.stuck
	q.Send([]byte("second\n"), nil)
	start := time.Now()
	lost := q.Drain(200*time.Millisecond, 300*time.Millisecond)
	if d := time.Since(start); d > time.Second {
		t.Errorf("drain took %s", d)
	}
	if lost == 0 {
		t.Error("no bytes reported lost")
	}
	if q.Send([]byte("late\n"), nil) {
		t.Error("a put after abandon was taken")
	}
}

// slowReader takes 64 KiB at a time, pausing before each: a pipeline
// stage that is slow but keeps reading.
type slowReader struct {
	mu    sync.Mutex
	n     int
	pause time.Duration
}

func (r *slowReader) Write(p []byte) (int, error) {
	total := 0
	for len(p) > 0 {
		time.Sleep(r.pause)
		k := min(len(p), 64<<10)
		r.mu.Lock()
		r.n += k
		r.mu.Unlock()
		p, total = p[k:], total+k
	}
	return total, nil
}

// TestSlowReaderGetsALongLine: a reader that keeps taking a long line,
// if slowly, is neither taken for stalled nor cut off at the drain's
// deadline; it gets every byte. (A 32 MiB line written in one call to the
// pipe of a loaded CI machine once looked stalled for a whole grace.)
func TestSlowReaderGetsALongLine(t *testing.T) {
	r := &slowReader{pause: 10 * time.Millisecond}
	q := asyncq.NewWriter(r, asyncq.WriterOptions{Limit: outQueue})
	line := bytes.Repeat([]byte("a"), 4<<20) // 64 writes of 64 KiB: 0.64 s at least
	q.Send(line, nil)
	q.Send([]byte("\n"), nil)
	time.Sleep(400 * time.Millisecond)
	if d := q.StalledFor(); d >= 300*time.Millisecond {
		t.Errorf("a reader taking 64 KiB every 10 ms looks stalled for %s", d)
	}
	if lost := q.Drain(100*time.Millisecond, 300*time.Millisecond); lost != 0 {
		t.Errorf("drain gave up on %d bytes of a reader that kept reading", lost)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.n != len(line)+1 {
		t.Errorf("the reader got %d bytes, want %d", r.n, len(line)+1)
	}
}

// tricklingReader takes a byte every 10 ms: a peer that keeps a write
// alive without really reading.
type tricklingReader struct{}

func (tricklingReader) Write(p []byte) (int, error) {
	for range p {
		time.Sleep(10 * time.Millisecond)
	}
	return len(p), nil
}

// TestTricklingReaderIsAbandoned: progress is a segment taken, not a byte,
// so a reader that takes a byte now and then cannot hold drain open: it is
// given up after the stall bound, like one that takes nothing.
func TestTricklingReaderIsAbandoned(t *testing.T) {
	q := asyncq.NewWriter(tricklingReader{}, asyncq.WriterOptions{Limit: outQueue})
	q.Send(bytes.Repeat([]byte("a"), 4<<10), nil) // 40 s at its pace
	start := time.Now()
	lost := q.Drain(100*time.Millisecond, 300*time.Millisecond)
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("drain took %s for a reader taking a byte per 10 ms", d)
	}
	if lost == 0 {
		t.Error("no bytes reported lost")
	}
}
