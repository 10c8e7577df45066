package cmd

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agentjq/agentjq/internal/protocol"
)

// TestExitCodesTellTheTruth: bad durations and recording paths are usage
// errors, and approve test fails on a file it cannot read as a session.
func TestExitCodesTellTheTruth(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	policy := filepath.Join(dir, "p.json")
	os.WriteFile(policy, []byte(`{"allow":["Read"]}`), 0o644)
	empty := filepath.Join(dir, "empty.ndjson")
	os.WriteFile(empty, nil, 0o644)
	blank := filepath.Join(dir, "blank.ndjson")
	os.WriteFile(blank, []byte("\n  \n"), 0o644)
	garbage := filepath.Join(dir, "garbage.ndjson")
	os.WriteFile(garbage, []byte("this is not\x00 a session\n{\"half\":\n"), 0o644)
	missing := filepath.Join(dir, "no", "such", "dir", "rec.ndjson")
	for _, c := range []struct {
		name string
		args []string
		want int
	}{
		{"negative --timeout", []string{"spawn", "--timeout", "-1s", "-p", "hi"}, protocol.ExitUsage},
		{"negative --idle-timeout", []string{"spawn", "--idle-timeout", "-5m", "-p", "hi"}, protocol.ExitUsage},
		{"negative --approval-timeout", []string{"spawn", "--approval-timeout", "-1ms", "-p", "hi"}, protocol.ExitUsage},
		{"record -o into a missing directory", []string{"record", "-o", missing, "-p", "hi"}, protocol.ExitUsage},
		{"spawn --record into a missing directory", []string{"spawn", "--record", missing, "-p", "hi"}, protocol.ExitUsage},
		{"approve test on an empty file", []string{"approve", "test", "--policy", policy, empty}, protocol.ExitError},
		{"approve test on a blank file", []string{"approve", "test", "--policy", policy, blank}, protocol.ExitError},
		{"approve test on garbage", []string{"approve", "test", "--policy", policy, garbage}, protocol.ExitError},
	} {
		t.Run(c.name, func(t *testing.T) {
			ios, _, errb := fakeIO(t, "echo-turns", "")
			if got := Main(c.args, ios); got != c.want {
				t.Errorf("exit %d, want %d; stderr: %s", got, c.want, errb.String())
			}
		})
	}
}
