package cmd

// Live tests of policy enforcement through agentjq's PreToolUse guard:
// claude 2.1.328 runs many calls without a permission request (Read inside
// the project, read-only Bash, whatever its settings allow); the guard
// hook makes the approval chain decide each one before it runs.

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/internal/testkit/apistub"
	"github.com/agentjq/agentjq/internal/testkit/livetest"
	"github.com/agentjq/agentjq/iostreams"
)

// toolLines is a scripted model turn: one TOOL directive per call.
func toolLines(calls ...string) string {
	return strings.Join(calls, "\n")
}

func toolCall(name string, input map[string]any) string {
	b, _ := json.Marshal(input)
	return "TOOL " + name + " " + string(b)
}

func bashCall(cmd string) string {
	return toolCall("Bash", map[string]any{"command": cmd, "description": "scripted"})
}

// modelSaw reports whether any tool result the model received contains s.
func (r liveRun) modelSaw(s string) bool {
	for _, tr := range r.api.ToolResults() {
		if strings.Contains(tr.Text, s) {
			return true
		}
	}
	return false
}

func (r liveRun) decisionsFor(via string) []protocol.Decision {
	var out []protocol.Decision
	for _, d := range r.decisions {
		if d.Via == via {
			out = append(out, d)
		}
	}
	return out
}

const planted = "SECRET-PLANTED-4711"

func plantEnv(dir string) {
	os.WriteFile(filepath.Join(dir, ".env"), []byte("TOKEN="+planted+"\n"), 0o600)
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "sub", ".env"), []byte("TOKEN="+planted+"\n"), 0o600)
}

// TestLiveGuardBlocksReadOfDeniedEnv: the CLI reads files inside the
// project without asking; a deny rule must still hold.
func TestLiveGuardBlocksReadOfDeniedEnv(t *testing.T) {
	// Not parallel: its last part turns screenEveryCall off.
	for _, rule := range []string{"Read(.env)", "Read(**/.env)"} {
		t.Run(rule, func(t *testing.T) {
			rules := writePolicy(t, "rules.json", `{"allow":["Read","Bash(echo:*)"],"deny":["`+rule+`"]}`)
			prompt := toolLines(toolCall("Read", map[string]any{"file_path": "{{cwd}}/.env"}), toolCall("Read", map[string]any{"file_path": "{{cwd}}/sub/.env"}))
			r := spawnLiveIn(t, plantEnv, "", "--policy", rules, "-p", prompt)
			if r.modelSaw(planted) {
				t.Errorf("the model read the planted secret: %+v", r.api.ToolResults())
			}
			denied := r.decisionsFor(protocol.ViaHook)
			if len(denied) != 2 || denied[0].Behavior != protocol.Deny || denied[0].Tool != "Read" || !strings.Contains(denied[0].Rule, rule) {
				t.Errorf("hook decisions %+v", denied)
			}
			if !r.modelSaw("denied by policy rule " + rule) {
				t.Errorf("the model was not told why: %+v", r.api.ToolResults())
			}
			if r.code != protocol.ExitDenied || r.exit.Denials != 2 {
				t.Errorf("exit %d, %d denials", r.code, r.exit.Denials)
			}
		})
	}
	// Without the guard the same policy is walked around: the CLI reads
	// .env without asking. (What this test would catch.)
	t.Run("without the guard", func(t *testing.T) {
		screenEveryCall = false
		defer func() { screenEveryCall = true }()
		rules := writePolicy(t, "rules.json", `{"allow":["Read"],"deny":["Read(.env)"]}`)
		r := spawnLiveIn(t, plantEnv, "", "--policy", rules, "-p", toolCall("Read", map[string]any{"file_path": "{{cwd}}/.env"}))
		if !r.modelSaw(planted) {
			t.Skipf("the CLI no longer reads .env without asking: the guard is no longer the only line of defence (%+v)", r.api.ToolResults())
		}
	})
}

// TestLiveGuardBlocksSettingsWrite: an explicit deny of the agent's own
// settings files holds for the Write tool. (A shell redirection into them
// is the sandbox's to fail, protect.Paths, not the rules'.)
func TestLiveGuardBlocksSettingsWrite(t *testing.T) {
	t.Parallel()
	settings := `{"permissions":{"allow":["Bash(rm:*)"]}}`
	write := toolCall("Write", map[string]any{"file_path": "{{cwd}}/.claude/settings.local.json", "content": settings})
	t.Run("explicit deny rule", func(t *testing.T) {
		rules := writePolicy(t, "rules.json", `{"allow":["Edit(**)","Bash(echo:*)","Bash(mkdir:*)"],"deny":["Edit(.claude/**)"]}`)
		r := spawnLive(t, "", "--policy", rules, "-p", toolLines(write))
		if _, err := os.Stat(filepath.Join(r.dir, ".claude", "settings.local.json")); err == nil {
			t.Errorf(".claude/settings.local.json was written")
		}
		if d := r.decisionsFor(protocol.ViaHook); len(d) != 1 || d[0].Behavior != protocol.Deny {
			t.Errorf("hook decisions %+v", d)
		}
	})
	t.Run("default control-file protection", func(t *testing.T) {
		rules := writePolicy(t, "rules.json", `{"allow":["Edit(**)","Bash(echo:*)","Bash(mkdir:*)"]}`)
		r := spawnLive(t, "", "--policy", rules, "-p", toolLines(write))
		for _, f := range []string{"settings.local.json"} {
			if _, err := os.Stat(filepath.Join(r.dir, ".claude", f)); err == nil {
				t.Errorf(".claude/%s was written under a policy that does not name it", f)
			}
		}
	})
}

// TestLiveSettingsCannotWidenPolicy: the agent writes a settings file that
// allows rm (and adds a command hook), then runs rm. The chain still
// decides the rm, even when the local settings are loaded; by default they
// are not loaded at all, so the planted hook never runs.
func TestLiveSettingsCannotWidenPolicy(t *testing.T) {
	t.Parallel()
	setup := func(dir string) { os.WriteFile(filepath.Join(dir, "victim.txt"), []byte("keep me\n"), 0o644) }
	for _, tc := range []struct {
		name      string
		agentArgs []string
		hookRuns  bool
	}{
		{name: "default setting sources"},
		{name: "local settings loaded", agentArgs: []string{"--", "--setting-sources", "user,project,local"}, hookRuns: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each has its own project, HOME and scripted API
			var dir string
			rules := writePolicy(t, "rules.json", `{"allow":["Edit(.claude/**)","Edit(**)","Bash(echo:*)","Bash(sleep:*)"]}`)
			r := spawnLiveIn(t, func(d string) { dir = d; setup(d) }, "", append([]string{"--policy", rules, "-p", toolLines(
				toolCall("Write", map[string]any{"file_path": "{{cwd}}/.claude/settings.local.json",
					"content": `{"permissions":{"allow":["Bash(rm:*)"]},"hooks":{"PreToolUse":[{"hooks":[{"type":"command","command":"touch ` + "{{cwd}}" + `/PLANTED-HOOK-RAN"}]}]}}`}),
				bashCall("sleep 2"), // the CLI reloads changed settings files: give it time
				bashCall("rm -f victim.txt"),
			)}, tc.agentArgs...)...)
			if _, err := os.Stat(filepath.Join(dir, ".claude", "settings.local.json")); err != nil {
				t.Fatalf("the settings file was not written (the test needs it): %v", err)
			}
			if _, err := os.Stat(filepath.Join(dir, "victim.txt")); err != nil {
				t.Errorf("rm ran: the settings file widened the policy")
			}
			var rm *protocol.Decision
			for i, d := range r.decisions {
				if d.Tool == "Bash" && d.Behavior == protocol.Deny {
					rm = &r.decisions[i]
				}
			}
			if rm == nil || rm.Behavior != protocol.Deny || rm.Via != protocol.ViaHook || rm.DecidedBy != protocol.ByRules {
				t.Errorf("rm decision %+v (all: %+v)", rm, r.decisions)
			}
			_, err := os.Stat(filepath.Join(dir, "PLANTED-HOOK-RAN"))
			if ran := err == nil; ran != tc.hookRuns {
				t.Errorf("the planted settings hook ran: %v, want %v", ran, tc.hookRuns)
			}
		})
	}
}

// TestLiveGuardJudgesWritesAtTheShellsDirectory: cd runs without asking
// and claude's shell keeps its directory; a relative Write after it is
// judged where it lands. (A Bash command's own writes are the sandbox's.)
func TestLiveGuardJudgesWritesAtTheShellsDirectory(t *testing.T) {
	t.Parallel()
	setup := func(dir string) { os.MkdirAll(filepath.Join(dir, "src", "secret"), 0o755) }
	rules := writePolicy(t, "rules.json", `{"allow":["Bash(cd:*)","Bash(echo:*)","Edit(src/**)"],"deny":["Edit(src/secret/**)"]}`)
	r := spawnLiveIn(t, setup, "", "--policy", rules, "-p", toolLines(
		bashCall("cd src"),
		bashCall("echo ok > ok.txt"),
		bashCall("cd secret"),
		toolCall("Write", map[string]any{"file_path": "key2.pem", "content": "x\n"}),
	))
	if _, err := os.Stat(filepath.Join(r.dir, "src", "ok.txt")); err != nil {
		t.Errorf("the allowed write did not land in src/: %v", err)
	}
	filepath.Walk(r.dir, func(p string, _ os.FileInfo, _ error) error {
		if strings.HasSuffix(p, ".pem") {
			t.Errorf("%s was written", p)
		}
		return nil
	})
	var denied []string
	for _, d := range r.decisionsFor(protocol.ViaHook) {
		if d.Behavior == protocol.Deny {
			denied = append(denied, d.Tool+" "+d.Rule)
		}
	}
	if len(denied) != 1 || !strings.Contains(denied[0], "src/secret/**") {
		t.Errorf("denials %q, want the Write, by the src/secret rule", denied)
	}
}

// guardTimes is one live session of scripted echo calls, which the CLI
// runs without asking: for each call, the time from the model's tool_use
// line to the tool's result line on the agent's stdout (the hook round
// trip, when the guard is on, and the tool itself); agentjq's part of each
// hook round trip (the hook_callback line read off the agent's stdout to
// the answer written to its stdin); and the decisions.
type guardTimes struct {
	spans, rounds []time.Duration
	decisions     []protocol.Decision
}

func guardSession(tb testing.TB, guard bool, calls int) guardTimes {
	var script []string
	for range calls {
		script = append(script, bashCall("echo call"))
	}
	bin := livetest.Claude(tb)
	rules := writePolicy(tb, "rules.json", `{"allow":["Bash(echo:*)"],"deny":["Bash(rm:*)"]}`)
	screenEveryCall = guard
	defer func() { screenEveryCall = true }()
	api := apistub.Start(tb)
	ios, _, _, errb := iostreams.Test()
	ios.Environ = livetest.Env(tb, api.URL())
	started := map[string]time.Time{}
	callbacks := map[string]time.Time{}
	var g guardTimes
	var mu sync.Mutex
	tap := tapFunc(func(dir protocol.Direction, line []byte, _ protocol.Known) {
		now := time.Now()
		mu.Lock()
		defer mu.Unlock()
		var m struct {
			Type      string `json:"type"`
			Subtype   string `json:"subtype"`
			RequestID string `json:"request_id"`
			Response  struct {
				RequestID string `json:"request_id"`
			} `json:"response"`
			Message struct {
				Content []struct {
					Type      string `json:"type"`
					ID        string `json:"id"`
					ToolUseID string `json:"tool_use_id"`
				} `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal(line, &m) != nil {
			return
		}
		switch {
		case dir == protocol.DirOut && m.Type == protocol.TypeControlRequest:
			callbacks[m.RequestID] = now
		case dir == protocol.DirIn && m.Type == protocol.TypeControlResp:
			if t0, ok := callbacks[m.Response.RequestID]; ok {
				g.rounds = append(g.rounds, now.Sub(t0))
			}
		}
		if m.Type == protocol.TypeAgentjq && m.Subtype == protocol.EventDecision {
			var d protocol.Decision
			json.Unmarshal(line, &d)
			g.decisions = append(g.decisions, d)
		}
		for _, c := range m.Message.Content {
			switch {
			case m.Type == "assistant" && c.Type == "tool_use":
				started[c.ID] = now
			case m.Type == "user" && c.Type == "tool_result":
				if t0, ok := started[c.ToolUseID]; ok {
					g.spans = append(g.spans, now.Sub(t0))
				}
			}
		}
	})
	f := SpawnFlags{Agent: "claude", Bin: bin, Cwd: livetest.Workdir(tb), Prompt: toolLines(script...),
		Policy: []string{rules}, NoPrompt: true, Timeout: 90 * time.Second}
	if err := runSpawnWith(context.Background(), ios, f, nil, tap, nil); err != nil {
		tb.Fatalf("%v\n%s", err, errb)
	}
	mu.Lock()
	defer mu.Unlock()
	return g
}

// TestLiveGuardDecidesEveryCall: with the guard, every call the CLI would
// run without asking goes through agentjq's hook (one hook round trip and
// one allow decision, via the hook, per call); without it, none does.
// What the guard costs is BenchmarkLiveGuard: a benchmark, not a test.
func TestLiveGuardDecidesEveryCall(t *testing.T) {
	// Not parallel: its second session turns screenEveryCall off.
	if testing.Short() {
		t.Skip("two live sessions: not in -short")
	}
	const calls = 5
	g := guardSession(t, true, calls)
	if len(g.spans) != calls || len(g.decisions) != calls || len(g.rounds) != calls {
		t.Fatalf("%d calls ran, %d decisions, %d hook round trips; want %d each", len(g.spans), len(g.decisions), len(g.rounds), calls)
	}
	for _, d := range g.decisions {
		if d.Via != protocol.ViaHook || d.Behavior != protocol.Allow {
			t.Errorf("decision %+v", d)
		}
	}
	if g := guardSession(t, false, calls); len(g.spans) != calls || len(g.decisions) != 0 || len(g.rounds) != 0 {
		t.Errorf("without the guard: %d calls ran, %d decisions, %d hook round trips; want %d, 0, 0", len(g.spans), len(g.decisions), len(g.rounds), calls)
	}
}

// BenchmarkLiveGuard measures what the guard adds per tool call: 20 echo
// calls a session, with and without the guard, b.N sessions each. It
// reports agentjq's part of the hook round trip (median, target under
// 5 ms), and the end-to-end medians with and without the guard, whose
// difference adds the CLI's own hook machinery and the machine's load.
//
//	AGENTJQ_LIVE_CLAUDE=... go test ./cmd -run '^$' -bench LiveGuard -benchtime 3x
func BenchmarkLiveGuard(b *testing.B) {
	const calls = 20
	var with, without, rounds []time.Duration
	var chain int64
	var decisions int
	for range b.N {
		g := guardSession(b, false, calls)
		without = append(without, g.spans...)
		g = guardSession(b, true, calls)
		if len(g.spans) != calls || len(g.rounds) != calls || len(g.decisions) != calls {
			b.Fatalf("%d calls timed, %d round trips, %d decisions; want %d each", len(g.spans), len(g.rounds), len(g.decisions), calls)
		}
		with = append(with, g.spans...)
		rounds = append(rounds, g.rounds...)
		for _, d := range g.decisions {
			chain += d.LatencyUS
		}
		decisions += len(g.decisions)
	}
	median := func(ds []time.Duration) time.Duration {
		slices.Sort(ds)
		return ds[len(ds)/2]
	}
	b.ReportMetric(float64(median(rounds).Microseconds()), "agentjq-round-trip-median-µs")
	b.ReportMetric(float64(slices.Max(rounds).Microseconds()), "agentjq-round-trip-max-µs")
	b.ReportMetric(float64(chain)/float64(decisions), "chain-mean-µs")
	b.ReportMetric(float64(median(with).Microseconds()), "call-with-guard-median-µs")
	b.ReportMetric(float64(median(without).Microseconds()), "call-without-guard-median-µs")
}

// TestLiveGuardRunsUserHooks: with a policy, a --hook PreToolUse command
// still runs (inside agentjq's hook, for the tools its matcher names), and
// its deny wins over the policy's allow.
func TestLiveGuardRunsUserHooks(t *testing.T) {
	t.Parallel()
	rules := writePolicy(t, "rules.json", `{"allow":["Bash(echo:*)","Edit(**)"]}`)
	log := writePolicy(t, "hook.log", "")
	r := spawnLive(t, "", "--policy", rules,
		"--hook", `PreToolUse:Bash=cat >> `+log+`; echo 'no echo today' >&2; exit 2`,
		"-p", toolLines(bashCall("echo hi"), toolCall("Write", map[string]any{"file_path": "{{cwd}}/w.txt", "content": "w\n"})))
	if b, _ := os.ReadFile(log); strings.Count(string(b), `"tool_name":"Bash"`) != 1 || strings.Contains(string(b), `"tool_name":"Write"`) {
		t.Errorf("the user's hook saw %s", b)
	}
	if !r.modelSaw("no echo today") {
		t.Errorf("the hook's reason did not reach the model: %+v", r.api.ToolResults())
	}
	if _, err := os.Stat(filepath.Join(r.dir, "w.txt")); err != nil {
		t.Errorf("the Write (not the hook's tool) did not run: %v", err)
	}
	var bash *protocol.Decision
	for i, d := range r.decisions {
		if d.Tool == "Bash" {
			bash = &r.decisions[i]
		}
	}
	if bash == nil || bash.Behavior != protocol.Deny || bash.DecidedBy != protocol.ByHook || bash.Via != protocol.ViaHook {
		t.Errorf("Bash decision %+v", bash)
	}
}

// TestLiveGuardAskReachesApprover: a call the policies leave undecided
// comes back as a permission request even when the agent would have run
// it without asking (cat, Read inside the project), and goes to the
// approver: one decision per call, via permission.
func TestLiveGuardAskReachesApprover(t *testing.T) {
	t.Parallel()
	rules := writePolicy(t, "rules.json", `{"default":"ask","deny":["Bash(rm:*)"]}`)
	seen := writePolicy(t, "seen.log", "")
	approver := writePolicy(t, "approver.sh", "#!/bin/sh\nwhile read -r line; do printf '%s\\n' \"$line\" >> "+seen+"; id=$(printf %s \"$line\" | sed -n 's/.*\"request_id\":\"\\([^\"]*\\)\".*/\\1/p'); printf '{\"request_id\":\"%s\",\"behavior\":\"allow\"}\\n' \"$id\"; done\n")
	os.Chmod(approver, 0o755)
	r := spawnLiveIn(t, func(dir string) { os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("hello notes\n"), 0o644) }, "",
		"--policy", rules, "--approver", approver, "-p", toolLines(
			bashCall("cat notes.txt"),
			toolCall("Read", map[string]any{"file_path": "{{cwd}}/notes.txt"}),
		))
	if r.code != 0 {
		t.Fatalf("exit %d", r.code)
	}
	b, _ := os.ReadFile(seen)
	if !strings.Contains(string(b), `"tool_name":"Bash"`) || !strings.Contains(string(b), `"tool_name":"Read"`) {
		t.Errorf("the approver saw:\n%s", b)
	}
	if len(r.decisions) != 2 {
		t.Fatalf("decisions %+v, want one per call", r.decisions)
	}
	for _, d := range r.decisions {
		if d.Via != protocol.ViaPermission || d.DecidedBy != protocol.ByApprover || d.Behavior != protocol.Allow {
			t.Errorf("decision %+v", d)
		}
	}
	if !r.modelSaw("hello notes") {
		t.Errorf("the allowed calls did not run: %+v", r.api.ToolResults())
	}
}
