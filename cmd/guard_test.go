package cmd

import (
	"encoding/json"
	"io"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/agentjq/agentjq/hooks"
	"github.com/agentjq/agentjq/iostreams"
)

// fakeBin is an executable file standing for the agent.
func fakeBin(t *testing.T) string {
	t.Helper()
	p := writePolicy(t, "claude", "#!/bin/sh\nexit 0\n")
	os.Chmod(p, 0o755)
	return p
}

func initHooks(t *testing.T, init any) map[string][]hooks.Matcher {
	t.Helper()
	b, _ := json.Marshal(init)
	var m struct {
		Hooks map[string][]hooks.Matcher `json:"hooks"`
	}
	json.Unmarshal(b, &m)
	return m.Hooks
}

// TestSessionRegistersGuard: the guard hook goes into the initialize
// request whenever the chain decides more than the default, for claude.
func TestSessionRegistersGuard(t *testing.T) {
	t.Parallel()
	rules := writePolicy(t, "rules.json", `{"allow":["Read"]}`)
	tty := func() (io.ReadWriteCloser, error) { return nil, iostreams.ErrNoTTY }
	for _, tc := range []struct {
		name  string
		f     SpawnFlags
		guard bool
	}{
		{"policy", SpawnFlags{Policy: []string{rules}}, true},
		{"approver", SpawnFlags{Approver: "cat"}, true},
		{"default deny only", SpawnFlags{NoPrompt: true}, false},
		{"no terminal opens", SpawnFlags{}, false},
		{"context profile", SpawnFlags{Agent: "context", Policy: []string{rules}}, false},
		{"policy and user hooks", SpawnFlags{Policy: []string{rules}, HostFlags: HostFlags{Hook: []string{"PreToolUse:Bash=true", "Stop=true"}}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ios, _, _, _ := iostreams.Test()
			ios.OpenTTY = tty
			tc.f.Bin = fakeBin(t)
			tc.f.Cwd = t.TempDir()
			if tc.f.Agent == "" {
				tc.f.Agent = "claude"
			}
			opts, chain, err := sessionOptions(ios, tc.f, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer chain.Close()
			reg := initHooks(t, opts.Init)
			pre := reg["PreToolUse"]
			got := len(pre) == 1 && slices.Equal(pre[0].HookCallbackIDs, []string{hooks.GuardID}) && pre[0].Matcher == ""
			if got != tc.guard || (opts.Guard != nil) != tc.guard {
				t.Errorf("guard registered %v (init %+v), want %v", got, opts.Init, tc.guard)
			}
			if tc.guard && !opts.KeepStdinOpen {
				t.Errorf("stdin is not held open with the guard")
			}
			if len(tc.f.Hook) > 0 && (len(reg["Stop"]) != 1 || len(pre) != 1) {
				t.Errorf("user hooks: %+v (their PreToolUse runs inside the guard, Stop on its own)", reg)
			}
		})
	}
}

func TestSessionSettingSources(t *testing.T) {
	t.Parallel()
	ios, _, _, _ := iostreams.Test()
	f := SpawnFlags{Agent: "claude", Bin: fakeBin(t), Cwd: t.TempDir(), NoPrompt: true}
	opts, chain, err := sessionOptions(ios, f, nil)
	if err != nil {
		t.Fatal(err)
	}
	chain.Close()
	if !strings.Contains(strings.Join(opts.Args, " "), "--setting-sources user") {
		t.Errorf("args %q", opts.Args)
	}
	opts, chain, _ = sessionOptions(ios, f, []string{"--setting-sources=user,project"})
	chain.Close()
	if n := strings.Count(strings.Join(opts.Args, " "), "--setting-sources"); n != 1 {
		t.Errorf("the user's --setting-sources is not the only one: %q", opts.Args)
	}
	f.Agent = "context"
	opts, chain, _ = sessionOptions(ios, f, nil)
	chain.Close()
	if slices.Contains(opts.Args, "--setting-sources") {
		t.Errorf("context got --setting-sources: %q", opts.Args)
	}
}
