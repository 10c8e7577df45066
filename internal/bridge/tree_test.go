package bridge

import (
	"context"
	"io"
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/internal/testkit/proctest"
)

// Three SIGINTs within 30 ms to a session whose agent ignores SIGINT and
// SIGTERM and has left a setsid grandchild (as claude's Bash tool runs its
// commands): the session ends at once and nothing it started survives.
// Without the CLI: the agent is a shell script.
func TestThreeSIGINTsEndTheWholeTree(t *testing.T) {
	if runtime.GOOS != "linux" || testing.Short() {
		t.Skip("the tree guarantee is Linux's; starts processes")
	}
	marker := proctest.Marker(t)
	agent := `trap '' INT TERM; setsid sleep 3501 & sleep 3502 & read -r turn; echo '{"type":"system","subtype":"init","session_id":"s1"}'; while :; do sleep 1; done`
	sigs := make(chan os.Signal, 3)
	stdinR, stdinW, _ := os.Pipe()
	defer stdinW.Close()
	stdinW.Write([]byte("go\n"))
	go func() {
		deadline := time.Now().Add(10 * time.Second)
		for len(proctest.Find(marker)) < 4 && time.Now().Before(deadline) { // sh, its loop's sleep, the two sleeps
			time.Sleep(20 * time.Millisecond)
		}
		for i := 0; i < 3; i++ {
			sigs <- syscall.SIGINT
			time.Sleep(10 * time.Millisecond)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	rep, err := Run(ctx, Options{
		Profile: Profiles["claude"], Path: "/bin/sh", Args: []string{"-c", agent},
		Env:   append(os.Environ(), "AGENTJQ_TEST_MARKER="+marker),
		Stdin: stdinR, Stdout: io.Discard, Stderr: io.Discard, Signals: sigs, Grace: 5 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Outcome != protocol.OutcomeInterrupted || rep.Signal == "" {
		t.Errorf("outcome %s, signal %q: want interrupted, killed", rep.Outcome, rep.Signal)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %s: the third SIGINT must kill at once", d)
	}
	proctest.None(t, marker, 3*time.Second)
}
