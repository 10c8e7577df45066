package shellcmd

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentjq/agentjq/internal/livetest"
)

func TestRunOutputsAndStatus(t *testing.T) {
	livetest.SkipShort(t, "runs shell commands")
	r := Run(context.Background(), Spec{Command: `read x; echo "got $x"; echo oops >&2; exit 3`, Stdin: []byte("hi\n")})
	if string(r.Stdout) != "got hi\n" || string(r.Stderr) != "oops\n" || r.ExitCode != 3 || r.TimedOut || r.Cancelled || r.Err != nil {
		t.Errorf("%+v", r)
	}
}

func TestRunEnvAndDir(t *testing.T) {
	livetest.SkipShort(t, "runs shell commands")
	dir := t.TempDir()
	r := Run(context.Background(), Spec{Command: `echo "$FOO $(pwd)"`, Dir: dir, Env: []string{"FOO=bar", "PATH=" + os.Getenv("PATH")}})
	if got := strings.TrimSpace(string(r.Stdout)); got != "bar "+dir {
		t.Errorf("got %q", got)
	}
}

// alive reports whether pid is a live (not zombie) process.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && len(s) > i+2 {
		return s[i+2] != 'Z'
	}
	return true
}

func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d outlived its command", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func bgPid(t *testing.T, r Result) int {
	t.Helper()
	pid, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(r.Stdout), "\n", 2)[0]))
	if err != nil {
		t.Fatalf("no pid in %q", r.Stdout)
	}
	return pid
}

func TestTimeoutKillsTheGroup(t *testing.T) {
	livetest.SkipShort(t, "runs shell commands")
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc")
	}
	start := time.Now()
	// The background sleep keeps the pipes open: Run must still return.
	r := Run(context.Background(), Spec{Command: `sleep 30 & echo $!; wait`, Timeout: 300 * time.Millisecond})
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("took %s", el)
	}
	if !r.TimedOut || r.ExitCode != -1 {
		t.Errorf("%+v", r)
	}
	waitGone(t, bgPid(t, r))
}

func TestCancelKillsTheGroup(t *testing.T) {
	livetest.SkipShort(t, "runs shell commands")
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc")
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	r := Run(ctx, Spec{Command: `sleep 30 & echo $!; wait`})
	if !r.Cancelled || r.TimedOut {
		t.Errorf("%+v", r)
	}
	waitGone(t, bgPid(t, r))
}

func TestOutputCap(t *testing.T) {
	livetest.SkipShort(t, "runs shell commands")
	r := Run(context.Background(), Spec{Command: `head -c 100000 /dev/zero`, MaxOutput: 1000})
	if len(r.Stdout) != 1000 || !r.Truncated || r.ExitCode != 0 {
		t.Errorf("len %d truncated %v exit %d", len(r.Stdout), r.Truncated, r.ExitCode)
	}
}

func TestCommandNotFound(t *testing.T) {
	livetest.SkipShort(t, "runs shell commands")
	r := Run(context.Background(), Spec{Command: `no-such-command-agentjq`, Env: []string{"PATH=/nonexistent"}})
	if r.ExitCode != 127 {
		t.Errorf("%+v", r)
	}
}
