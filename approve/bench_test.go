package approve_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/agentjq/agentjq/approve"
	"github.com/agentjq/agentjq/cmd"
	"github.com/agentjq/agentjq/internal/protocol"
)

// TestMain lets this test binary stand in for agentjq, so the co-process
// benchmark runs the real `agentjq approve` without building it.
func TestMain(m *testing.M) {
	if os.Getenv("AGENTJQ_APPROVE_TEST_MAIN") == "1" {
		os.Exit(cmd.Main(os.Args[1:], cmd.SystemIO()))
	}
	os.Exit(m.Run())
}

const benchRules = `{
  "allow": ["Bash(git status)", "Bash(git log:*)", "Bash(go test:*)", "Bash(echo:*)", "Read(src/**)", "Edit(src/**)", "WebFetch(domain:example.com)", "mcp__probe"],
  "deny": ["Bash(rm:*)", "Bash(curl:*)", "Read(.env)", "Edit(//etc/**)"]
}`

const benchJQ = `if .tool_name == "Bash" and (.input.command | startswith("terraform apply")) then
  {behavior: "allow", updatedInput: (.input | .command += " -dry-run")}
elif .tool_name == "Bash" and (.input.command | test("^rm ")) then "deny"
elif .tool_name == "Read" and (.input.file_path | startswith(.cwd)) then "allow"
else empty end`

func benchRequest() *approve.Request {
	return &approve.Request{RequestID: "r", CanUseTool: protocol.CanUseTool{Subtype: "can_use_tool", ToolName: "Bash",
		Input: json.RawMessage(`{"command":"git status && go test ./... 2>&1 | echo done","description":"run tests"}`), ToolUseID: "toolu_1"}, Cwd: "/p"}
}

func chainFor(b testing.TB, name, src string) *approve.Chain {
	p := filepath.Join(b.TempDir(), name)
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		b.Fatal(err)
	}
	c, err := approve.NewChain(approve.ChainOptions{Policies: []string{p}, Cwd: "/p"})
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// benchMedian runs decide b.N times and reports the median latency.
func benchMedian(b *testing.B, d approve.Decider, req *approve.Request, want string) {
	ctx := context.Background()
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		v, _ := d.Decide(ctx, req)
		lat = append(lat, time.Since(t0))
		if v.Behavior != want {
			b.Fatalf("got %+v", v)
		}
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1e3, "median-µs")
}

func BenchmarkRulesDecision(b *testing.B) {
	benchMedian(b, chainFor(b, "r.json", benchRules), benchRequest(), protocol.Allow)
}

func BenchmarkRulesDecisionPath(b *testing.B) {
	req := benchRequest()
	req.ToolName, req.Input = "Edit", json.RawMessage(`{"file_path":"/p/src/a/b.go","old_string":"x","new_string":"y"}`)
	benchMedian(b, chainFor(b, "r.json", benchRules), req, protocol.Allow)
}

func BenchmarkJQPolicy(b *testing.B) {
	req := benchRequest()
	req.Input = json.RawMessage(`{"command":"terraform apply -auto-approve","description":"apply"}`)
	benchMedian(b, chainFor(b, "p.jq", benchJQ), req, protocol.Allow)
}

// coProcessRun sends n requests one at a time through `agentjq approve`
// running as a co-process, as spawn's --approver would.
func coProcessRun(t testing.TB, n int) time.Duration {
	policy := filepath.Join(t.TempDir(), "r.json")
	if err := os.WriteFile(policy, []byte(benchRules), 0o644); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cp := approve.NewCoProcess(approve.ApproverOptions{
		Command: fmt.Sprintf("'%s' approve --policy '%s'", self, policy),
		Env:     append(os.Environ(), "AGENTJQ_APPROVE_TEST_MAIN=1"),
		Stderr:  os.Stderr,
		Timeout: 10 * time.Second,
	})
	defer cp.Close()
	ctx := context.Background()
	req := benchRequest()
	if v, _ := cp.Decide(ctx, req); v.Behavior != protocol.Allow { // start-up not timed
		t.Fatalf("warm-up: %+v", v)
	}
	start := time.Now()
	for i := 0; i < n; i++ {
		req.RequestID = fmt.Sprintf("r%d", i)
		if i%2 == 1 {
			req.Input = json.RawMessage(`{"command":"rm -rf /"}`)
		} else {
			req.Input = json.RawMessage(`{"command":"git status && go test ./..."}`)
		}
		v, _ := cp.Decide(ctx, req)
		want := protocol.Allow
		if i%2 == 1 {
			want = protocol.Deny
		}
		if v.Behavior != want || v.Source != protocol.ByApprover {
			t.Fatalf("request %d: %+v", i, v)
		}
	}
	return time.Since(start)
}

func BenchmarkCoProcess10k(b *testing.B) {
	for i := 0; i < b.N; i++ {
		d := coProcessRun(b, 10000)
		b.ReportMetric(d.Seconds(), "s/10k")
	}
}

// TestCoProcessThroughput keeps the co-process path honest in plain test
// runs: 1,000 round trips, with a generous bound for shared machines.
func TestCoProcessThroughput(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a co-process")
	}
	if d := coProcessRun(t, 1000); d > 5*time.Second {
		t.Errorf("1,000 requests took %v", d)
	}
}

func TestExamplePolicies(t *testing.T) {
	dir := filepath.Join("..", "examples", "policies")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".json") || strings.HasSuffix(e.Name(), ".jq") {
			n++
			if _, err := approve.NewChain(approve.ChainOptions{Policies: []string{filepath.Join(dir, e.Name())}, Home: "/home/u"}); err != nil {
				t.Errorf("%s: %v", e.Name(), err)
			}
		}
	}
	if n < 2 {
		t.Errorf("%d example policies", n)
	}
}
