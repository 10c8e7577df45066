package cmd

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/agentjq/agentjq/internal/testkit/fakeagent"
	"github.com/agentjq/agentjq/internal/testkit/livetest"
)

// onTerminal runs a shell command line with a new pseudo-terminal as its
// controlling terminal and its stdin, stdout and stderr, as a person's
// shell would; the returned screen collects what the terminal shows. A
// terminal that shows at most bytesPerMS (0: as fast as it can) is a
// slow one, as over ssh: its writers block.
func onTerminal(t *testing.T, line string, env []string, bytesPerMS int) (*screen, *os.File, <-chan error) {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	t.Cleanup(func() { ptmx.Close() })
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 50, Cols: 200}); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/sh", "-c", line)
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	sc := &screen{}
	go sc.show(ptmx, bytesPerMS)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	return sc, ptmx, done
}

// TestViewSharesTheTerminalWithThePrompt: `spawn | filter --view` on one
// terminal. The agent writes a burst of lines, asks to use a tool, and
// goes on writing while the prompt is open. What the terminal shows from
// the prompt's first line to the answer typed is the prompt's text alone:
// no line of the view lands in it, also when the terminal is slow and the
// view lags behind what spawn held back. After the answer the held lines
// follow and the session ends.
func TestViewSharesTheTerminalWithThePrompt(t *testing.T) {
	t.Parallel()
	livetest.SkipShort(t, "runs agentjq built from source and this test binary as the agent")
	bin := buildAgentjq(t)
	for _, c := range []struct {
		burst, bytesPerMS int
		turnTyped         bool // no -p: the turn is typed on the terminal too
	}{{3, 0, false}, {3000, 0, false}, {30000, 0, false}, {3000, 100, false}, {3000, 100, true}} {
		burst := c.burst
		t.Run(fmt.Sprintf("burst %d, terminal %d B/ms, turn typed %v", burst, c.bytesPerMS, c.turnTyped), func(t *testing.T) {
			dir := t.TempDir()
			env := append(os.Environ(), fakeagent.Scenario+"=ask-while-talking:"+strconv.Itoa(burst),
				fakeagent.Log+"="+filepath.Join(dir, "fake.log"), "AGENTJQ_GRACE=2s", "NO_COLOR=1", "TERM=dumb")
			line := shellQuote(bin) + " spawn --bin " + shellQuote(os.Args[0]) + " -C " + shellQuote(dir) +
				" --timeout 60s"
			if !c.turnTyped {
				line += " -p go"
			}
			line += " | " + shellQuote(bin) + " filter --view --color never"
			sc, ptmx, done := onTerminal(t, line, env, c.bytesPerMS)
			if c.turnTyped {
				ptmx.Write([]byte("go\n"))
			}

			const head = "agentjq: the agent wants to use Write"
			const ask = "[y]es once / [a]lways / [n]o (deny with a message) / [i]nterrupt: "
			end := sc.waitFor(t, 0, ask, 30*time.Second)
			// The agent keeps talking while the person reads the prompt.
			time.Sleep(500 * time.Millisecond)
			ptmx.Write([]byte("y\n"))
			sc.waitFor(t, end, "view line after", 30*time.Second)
			if c.turnTyped {
				ptmx.Write([]byte{4}) // Ctrl-D: no more turns
			}
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("the pipeline: %v\n%s", err, sc.String())
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("the pipeline did not end:\n%s", sc.String())
			}

			all := sc.String()
			start := strings.Index(all, head)
			if start < 0 {
				t.Fatalf("no prompt on the terminal:\n%s", all)
			}
			answered := strings.Index(all[start:], ask+"y\r\n")
			if answered < 0 {
				t.Fatalf("the typed answer does not follow the prompt at once; from the prompt on the terminal shows:\n%q", clipMiddle(all[start:], 4000))
			}
			prompt := all[start : start+answered+len(ask)]
			want := head + "\r\n  file_path: banana.txt\r\n  content (2 lines):\r\n    | banana\r\n    | \r\n" + ask
			if prompt != want {
				t.Errorf("the prompt on the terminal is not the prompt's text alone:\n got %q\nwant %q", clipMiddle(prompt, 4000), want)
			}
			// Everything the agent wrote before it asked is shown, before
			// the prompt or, when the view lags behind (a slow terminal,
			// a loaded machine), after the answer: which of the two is a
			// matter of speed, not of behaviour, so it is not asserted.
			if !strings.Contains(all, "view line before "+strconv.Itoa(burst-1)+"\r\n") {
				t.Errorf("the view never showed its last line from before the prompt")
			}
			if !strings.Contains(all[start+answered:], "view line during") {
				t.Errorf("the lines held while the prompt was open did not follow the answer")
			}
		})
	}
}

// shellQuote quotes s for /bin/sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// clipMiddle shortens s to about n bytes, keeping its ends.
func clipMiddle(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n/2] + " … " + s[len(s)-n/2:]
}
