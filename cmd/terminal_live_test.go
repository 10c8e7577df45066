package cmd

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/agentjq/agentjq/internal/testkit/livetest"
)

// screen collects what a pseudo-terminal shows.
type screen struct {
	mu   sync.Mutex
	seen bytes.Buffer
}

// show records what r (a pty's master) shows until a read fails; with
// bytesPerMS > 0 it takes that many bytes a millisecond, a slow terminal.
func (s *screen) show(r io.Reader, bytesPerMS int) {
	buf := make([]byte, 4096)
	if bytesPerMS > 0 {
		buf = buf[:bytesPerMS]
	}
	for {
		if bytesPerMS > 0 {
			time.Sleep(time.Millisecond)
		}
		n, err := r.Read(buf)
		s.mu.Lock()
		s.seen.Write(buf[:n])
		s.mu.Unlock()
		if err != nil {
			return
		}
	}
}

func (s *screen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen.String()
}

// waitFor waits until the screen shows want after offset from, and returns
// the offset just past it.
func (s *screen) waitFor(t *testing.T, from int, want string, d time.Duration) int {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		all := s.String()
		if i := strings.Index(all[min(from, len(all)):], want); i >= 0 {
			return from + i + len(want)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the terminal never showed %q; it shows:\n%s", want, s.String())
	return 0
}

// TestLiveTerminalTurnsAndPrompts: stdin is the terminal and no -p. The
// person types a turn; the agent asks to write a file; the "y" typed at
// the prompt answers the prompt (it is not sent as a turn), the file is
// written, and Ctrl-D ends the turns and the session.
func TestLiveTerminalTurnsAndPrompts(t *testing.T) {
	t.Parallel()
	claude, api, dir, bin := liveProcess(t)
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	defer ptmx.Close()
	cmd := exec.Command(bin, "spawn", "--bin", claude, "-C", dir, "--timeout", "90s", "--no-events")
	cmd.Env = livetest.Env(t, api.URL())
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	var sc screen
	go sc.show(ptmx, 0)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })

	ptmx.Write([]byte("please WRITE banana\n"))
	at := sc.waitFor(t, 0, "[y]es once", 60*time.Second)
	ptmx.Write([]byte("y\n"))
	// The answer reached the prompt: the agent wrote the file and said so.
	sc.waitFor(t, at, "The file is written.", 60*time.Second)
	if b, err := os.ReadFile(filepath.Join(dir, "banana.txt")); err != nil || string(b) != "banana\n" {
		t.Errorf("banana.txt: %q, %v", b, err)
	}
	for _, req := range api.MessagesRequests() {
		if bytes.Contains(req.Body, []byte(`"content":"y`)) || bytes.Contains(req.Body, []byte(`"text":"y"`)) {
			t.Errorf("the prompt's answer reached the model as a turn")
		}
	}
	ptmx.Write([]byte{4}) // Ctrl-D: no more turns
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("spawn: %v\n%s", err, sc.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("spawn did not end after Ctrl-D:\n%s", sc.String())
	}
}
