package proc

import (
	"bufio"
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentjq/agentjq/internal/testkit/proctest"
)

// parentEnv makes this test binary a stand-in for agentjq: it starts the
// command in $PROC_TEST_CMD through Shell, says "started", and waits to be
// killed.
const parentEnv = "PROC_TEST_PARENT"

func TestMain(m *testing.M) {
	if os.Getenv(parentEnv) != "" {
		c := Shell(os.Getenv("PROC_TEST_CMD"))
		c.Stdout = os.Stdout
		if err := c.Start(); err != nil {
			os.Exit(3)
		}
		_ = c.Wait()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// markedEnv is the environment of a command whose processes carry marker.
func markedEnv(marker string) []string {
	return append(os.Environ(), "PROC_TEST_MARKER="+marker)
}

func needLinux(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the reaper is Linux only")
	}
	if testing.Short() {
		t.Skip("starts processes")
	}
}

func TestRunOutputsAndStatus(t *testing.T) {
	r := Run(context.Background(), Spec{Command: `read x; echo "got $x"; echo oops >&2; exit 3`, Stdin: []byte("hi\n")})
	if string(r.Stdout) != "got hi\n" || string(r.Stderr) != "oops\n" || r.ExitCode != 3 || r.TimedOut || r.Cancelled || r.Err != nil {
		t.Errorf("%+v", r)
	}
}

func TestRunEnvAndDir(t *testing.T) {
	dir := t.TempDir()
	r := Run(context.Background(), Spec{Command: `echo "$FOO $(pwd)"`, Dir: dir, Env: []string{"FOO=bar", "PATH=" + os.Getenv("PATH")}})
	if got := strings.TrimSpace(string(r.Stdout)); got != "bar "+dir {
		t.Errorf("got %q", got)
	}
}

func TestRunOutputCap(t *testing.T) {
	r := Run(context.Background(), Spec{Command: `head -c 100000 /dev/zero; head -c 5000 /dev/zero >&2`, MaxOutput: 1000})
	if len(r.Stdout) != 1000 || len(r.Stderr) != 1000 || !r.Truncated || r.ExitCode != 0 {
		t.Errorf("len %d/%d truncated %v exit %d", len(r.Stdout), len(r.Stderr), r.Truncated, r.ExitCode)
	}
}

func TestRunCommandNotFound(t *testing.T) {
	r := Run(context.Background(), Spec{Command: `no-such-command-agentjq`, Env: []string{"PATH=/nonexistent"}})
	if r.ExitCode != 127 {
		t.Errorf("%+v", r)
	}
}

// The timeout and a cancel end the command and what it left in the
// background, which holds the pipes open: Run still returns.
func TestRunTimeoutAndCancelEndTheTree(t *testing.T) {
	needLinux(t)
	marker := proctest.Marker(t)
	start := time.Now()
	r := Run(context.Background(), Spec{Command: `sleep 300 & setsid sleep 301 & wait`, Env: markedEnv(marker), Timeout: 300 * time.Millisecond})
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("took %s", el)
	}
	if !r.TimedOut || r.ExitCode != -1 {
		t.Errorf("%+v", r)
	}
	proctest.None(t, marker, 3*time.Second)

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	r = Run(ctx, Spec{Command: `setsid sleep 302 & wait`, Env: markedEnv(marker)})
	if !r.Cancelled || r.TimedOut {
		t.Errorf("%+v", r)
	}
	proctest.None(t, marker, 3*time.Second)
}

// A command that exits leaves nothing behind: not a background job, not
// a setsid grandchild, not a double-forked daemon.
func TestExitEndsTheTree(t *testing.T) {
	needLinux(t)
	marker := proctest.Marker(t)
	c := Shell(`sleep 300 & setsid sleep 301 & (setsid sh -c 'sleep 302 &' &) ; exit 4`)
	c.Env = markedEnv(marker)
	err := c.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 4 {
		t.Fatalf("err %v, want exit status 4", err)
	}
	proctest.None(t, marker, 3*time.Second)
}

// Kill ends a running command and its setsid grandchild, and Wait then
// reports the command as killed by SIGKILL.
func TestKill(t *testing.T) {
	needLinux(t)
	marker := proctest.Marker(t)
	c := Shell(`setsid sleep 300 & echo ready; wait`)
	c.Env = markedEnv(marker)
	out, _ := c.StdoutPipe()
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	if l, _ := bufio.NewReader(out).ReadString('\n'); l != "ready\n" {
		t.Fatalf("read %q", l)
	}
	c.Kill()
	_ = c.Wait()
	ws := c.ProcessState.Sys().(syscall.WaitStatus)
	if !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Errorf("status %v, want killed", c.ProcessState)
	}
	proctest.None(t, marker, 3*time.Second)
}

// Signal reaches the command (not only its reaper), which may handle it;
// its own status comes back.
func TestSignalAndStatus(t *testing.T) {
	needLinux(t)
	c := Shell(`trap 'exit 7' TERM; echo ready; while :; do sleep 0.05; done`)
	out, _ := c.StdoutPipe()
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	bufio.NewReader(out).ReadString('\n')
	if err := c.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_ = c.Wait()
	if c.ProcessState.ExitCode() != 7 {
		t.Errorf("status %v, want exit 7", c.ProcessState)
	}

	c = Shell(`kill -TERM $$`)
	_ = c.Run()
	if ws := c.ProcessState.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Errorf("status %v, want killed by SIGTERM", c.ProcessState)
	}
}

func TestStartErrors(t *testing.T) {
	c := Command("/nonexistent/agentjq-agent")
	err := c.Start()
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "/nonexistent/agentjq-agent") {
		t.Errorf("err %v, want not found naming the path", err)
	}
	if err := Command("no-such-program-agentjq").Start(); !errors.Is(err, exec.ErrNotFound) {
		t.Errorf("err %v, want exec.ErrNotFound", err)
	}
	c = Command("/bin/true")
	c.Dir = "/nonexistent-dir"
	if err := c.Start(); err == nil {
		t.Error("started in a missing directory")
	}
}

// SIGKILL of agentjq: the reaper notices (the kernel closes its pipe) and
// ends the command's whole tree, setsid grandchildren included.
func TestSIGKILLOfParentEndsTheTree(t *testing.T) {
	needLinux(t)
	marker := proctest.Marker(t)
	parent := exec.Command(os.Args[0])
	parent.Env = append(markedEnv(marker), parentEnv+"=1",
		"PROC_TEST_CMD=sleep 300 & setsid sleep 301 & (setsid sh -c 'sleep 302 & echo ready' &); wait")
	out, _ := parent.StdoutPipe()
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	if l, _ := bufio.NewReader(out).ReadString('\n'); l != "ready\n" {
		t.Fatalf("read %q", l)
	}
	if n := len(proctest.Find(marker)); n < 4 {
		t.Fatalf("only %d marked processes before the kill", n)
	}
	parent.Process.Kill()
	parent.Wait()
	proctest.None(t, marker, 3*time.Second)
}

func TestReadLineCap(t *testing.T) {
	in := strings.NewReader("short\n" + strings.Repeat("x", 1<<20) + "\nafter\nlast")
	br := bufio.NewReaderSize(in, 4096)
	for _, want := range []string{"short\n", "", "after\n", "last"} {
		l, err := ReadLine(br, 1000)
		if want == "" {
			if !errors.Is(err, ErrLineTooLong) || l != nil {
				t.Errorf("long line: %q %v", l, err)
			}
			if err := SkipLine(br); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if string(l) != want {
			t.Errorf("got %q %v, want %q", l, err, want)
		}
	}
}

func TestWithoutAgentCredentials(t *testing.T) {
	got := WithoutAgentCredentials([]string{"PATH=/bin", "ANTHROPIC_API_KEY=k", "AWS_SECRET_ACCESS_KEY=s", "AWS_PROFILE=p",
		"CLAUDE_CODE_OAUTH_TOKEN=t", "ANTHROPIC_AUTH_TOKEN=a", "ANTHROPIC_BASE_URL=u", "MY_AWS_THING=x"})
	if strings.Join(got, " ") != "PATH=/bin ANTHROPIC_BASE_URL=u MY_AWS_THING=x" {
		t.Errorf("got %q", got)
	}
}
