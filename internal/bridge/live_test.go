package bridge

// Live tests: the bridge driving the real claude CLI, offline, against the
// scripted Messages API (internal/testkit/apistub). They skip when the CLI is not
// installed, and fail instead when AGENTJQ_REQUIRE_LIVE=1.

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/internal/syncio"
	"github.com/agentjq/agentjq/internal/testkit/apistub"
	"github.com/agentjq/agentjq/internal/testkit/livetest"
)

// liveCLIs are the CLIs to try: the one this pass of the live suite runs
// (make test runs the live tests once per checked version).
func liveCLIs(t *testing.T) map[string]string {
	bin := livetest.Claude(t)
	return map[string]string{livetest.CLIVersion(t, bin): bin}
}

// burst is how a try writes its turns: groups of lines with a pause after
// each group.
type burst struct {
	name   string
	groups []int
	pause  time.Duration
}

// TestLiveFoldedTurnsEnd pipes many turns at once and in bursts. The CLI
// folds turns that queue while one runs (fewer results than turns); every
// try must still end by itself, successfully, with every turn counted.
func TestLiveFoldedTurnsEnd(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("live: runs the claude CLI")
	}
	patterns := []burst{
		{"five at once", []int{5}, 0},
		{"twelve at once", []int{12}, 0},
		{"bursts of three", []int{3, 3, 3}, 150 * time.Millisecond},
		{"one by one", []int{1, 1, 1, 1, 1, 1}, 40 * time.Millisecond},
		{"two bursts a second apart", []int{4, 4}, time.Second},
	}
	for version, bin := range liveCLIs(t) {
		t.Run(version, func(t *testing.T) {
			for try := range 10 {
				p := patterns[try%len(patterns)]
				t.Run(fmt.Sprintf("%d %s", try, p.name), func(t *testing.T) {
					t.Parallel() // each try has its own scripted API
					liveBurst(t, bin, apistub.Start(t).URL(), p)
				})
			}
		})
	}
}

func liveBurst(t *testing.T, bin, apiURL string, p burst) {
	stdinR, stdinW := io.Pipe()
	total := 0
	go func() {
		defer stdinW.Close()
		for _, n := range p.groups {
			var b strings.Builder
			for range n {
				total++
				fmt.Fprintf(&b, "HELLO %d\n", total)
			}
			if _, err := io.WriteString(stdinW, b.String()); err != nil {
				return
			}
			time.Sleep(p.pause)
		}
	}()
	want := 0
	for _, n := range p.groups {
		want += n
	}
	var out, errb syncio.Buffer
	path, args := Command(Profiles["claude"], bin, "linux", PassFlags{}, nil)
	dir := filepath.Join(t.TempDir(), "project")
	os.Mkdir(dir, 0o755)
	opts := Options{
		Profile: Profiles["claude"], Path: path, Args: args, Dir: dir,
		Env:   livetest.Env(t, apiURL),
		Stdin: stdinR, Stdout: &out, Stderr: &errb,
		Grace: 2 * time.Second,
	}
	// No --timeout: the session must end by itself. The context is the
	// test's own bound; hitting it is a hang.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := time.Now()
	rep, err := Run(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	if ctx.Err() != nil {
		t.Fatalf("hang: the session did not end within 60s (outcome %s)\nstderr:\n%s", rep.Outcome, errb.String())
	}
	results := 0
	for _, l := range agentLines(out.String()) {
		if env, err := protocol.DecodeEnvelope([]byte(l)); err == nil && env.Type == protocol.TypeResult {
			results++
		}
	}
	if rep.ExitCode != 0 || rep.Outcome != protocol.OutcomeSuccess || rep.Turns != want {
		t.Fatalf("exit %d outcome %s turns %d (want 0 success %d); %d results\nstderr:\n%s", rep.ExitCode, rep.Outcome, rep.Turns, want, results, errb.String())
	}
	if results < 1 || results > want {
		t.Errorf("%d results for %d turns", results, want)
	}
	t.Logf("%d turns, %d results, %s", want, results, time.Since(start).Round(time.Millisecond))
}
