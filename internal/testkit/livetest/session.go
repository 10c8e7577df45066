package livetest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentjq/agentjq/internal/syncio"
)

// Session is the real CLI running under a test, driven directly over its
// stdio: the test writes frames with Send and reads stdout lines with Next.
// It is killed (process group) when the test ends or its timeout passes.
type Session struct {
	tb     testing.TB
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	ctx    context.Context
	cancel context.CancelFunc
	stderr syncio.Buffer

	// stdout lines are queued without bound so that the reader never
	// blocks the CLI, whether or not the test reads them.
	mu       sync.Mutex
	queue    [][]byte
	eof      bool
	notify   chan struct{}
	readDone chan struct{}

	closeOnce sync.Once
	waitOnce  sync.Once
	waitErr   error
	waitDone  chan struct{}
}

// Options configure Spawn.
type Options struct {
	// APIURL is the stand-in's URL (apistub.Server.URL()).
	APIURL string
	// Args are the CLI's flags; nil means StreamArgs().
	Args []string
	// Dir is the CLI's cwd; "" means a fresh Workdir.
	Dir string
	// Env replaces Env(tb, APIURL) when not nil.
	Env []string
	// Timeout bounds the whole session (default 60s): then the process
	// group is killed and Next fails.
	Timeout time.Duration
}

// Spawn starts the claude CLI found by Claude (skipping the test when there
// is none).
func Spawn(tb testing.TB, opts Options) *Session {
	tb.Helper()
	bin := Claude(tb)
	if opts.Args == nil {
		opts.Args = StreamArgs()
	}
	if opts.Dir == "" {
		opts.Dir = Workdir(tb)
	}
	if opts.Env == nil {
		opts.Env = Env(tb, opts.APIURL)
	}
	if opts.Timeout == 0 {
		opts.Timeout = 60 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), opts.Timeout)
	cmd := exec.CommandContext(ctx, bin, opts.Args...)
	cmd.Dir = opts.Dir
	cmd.Env = opts.Env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	s := &Session{tb: tb, cmd: cmd, ctx: ctx, cancel: cancel,
		notify: make(chan struct{}, 1), readDone: make(chan struct{}), waitDone: make(chan struct{})}
	cmd.Stderr = &s.stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		cancel()
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		tb.Fatal(err)
	}
	s.stdin = stdin
	if err := cmd.Start(); err != nil {
		cancel()
		tb.Fatalf("start %s: %v", bin, err)
	}
	go s.read(stdout)
	tb.Cleanup(func() {
		cancel()
		_ = s.Wait()
		if tb.Failed() {
			tb.Logf("claude stderr:\n%s", s.Stderr())
		}
	})
	return s
}

func (s *Session) read(stdout io.Reader) {
	defer close(s.readDone)
	r := bufio.NewReaderSize(stdout, 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		s.mu.Lock()
		if len(bytes.TrimSpace(line)) > 0 {
			s.queue = append(s.queue, bytes.TrimRight(line, "\r\n"))
		}
		if err != nil {
			s.eof = true
		}
		s.mu.Unlock()
		select {
		case s.notify <- struct{}{}:
		default:
		}
		if err != nil {
			return
		}
	}
}

// Send writes v as one compact JSON line on the CLI's stdin.
func (s *Session) Send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = s.stdin.Write(append(b, '\n'))
	return err
}

// SendUser writes a user turn with text content.
func (s *Session) SendUser(text string) error {
	return s.Send(map[string]any{
		"type":               "user",
		"message":            map[string]any{"role": "user", "content": text},
		"parent_tool_use_id": nil,
		"session_id":         "",
	})
}

// Allow answers a can_use_tool request with allow and updatedInput.
func (s *Session) Allow(requestID string, updatedInput any) error {
	return s.respond(requestID, map[string]any{"behavior": "allow", "updatedInput": updatedInput})
}

// Deny answers a can_use_tool request with deny and message.
func (s *Session) Deny(requestID, message string) error {
	return s.respond(requestID, map[string]any{"behavior": "deny", "message": message})
}

func (s *Session) respond(requestID string, response any) error {
	return s.Send(map[string]any{
		"type": "control_response",
		"response": map[string]any{
			"subtype":    "success",
			"request_id": requestID,
			"response":   response,
		},
	})
}

// CloseStdin closes the CLI's stdin (the end of the session for it). Later
// calls do nothing.
func (s *Session) CloseStdin() error {
	err := error(nil)
	s.closeOnce.Do(func() { err = s.stdin.Close() })
	return err
}

// ErrEOF is returned by Next when stdout has ended.
var ErrEOF = errors.New("livetest: claude stdout ended")

// Next returns the next stdout line, waiting at most d (and never past the
// session's timeout).
func (s *Session) Next(d time.Duration) ([]byte, error) {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		s.mu.Lock()
		if len(s.queue) > 0 {
			line := s.queue[0]
			s.queue = s.queue[1:]
			s.mu.Unlock()
			return line, nil
		}
		eof := s.eof
		s.mu.Unlock()
		if eof {
			return nil, ErrEOF
		}
		select {
		case <-s.notify:
		case <-t.C:
			return nil, fmt.Errorf("livetest: no line from claude within %v", d)
		case <-s.ctx.Done():
			return nil, fmt.Errorf("livetest: session timeout: %w", s.ctx.Err())
		}
	}
}

// Wait waits for the CLI to exit and its stdout to end (bounded by the
// session's timeout) and returns its exit error (an *exec.ExitError for a
// non-zero exit). Lines not yet read stay available to Next.
func (s *Session) Wait() error {
	s.waitOnce.Do(func() {
		// exec closes stdout once the process exits: let the reader
		// reach EOF first so that no line is lost.
		select {
		case <-s.readDone:
		case <-s.ctx.Done():
		}
		s.waitErr = s.cmd.Wait()
		close(s.waitDone)
	})
	<-s.waitDone
	return s.waitErr
}

// ExitCode waits for the CLI and returns its exit code (-1 when killed).
func (s *Session) ExitCode() int {
	_ = s.Wait()
	return s.cmd.ProcessState.ExitCode()
}

// Stderr is what the CLI wrote on stderr so far.
func (s *Session) Stderr() string { return s.stderr.String() }
