package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentjq/agentjq/fixtures"
	"github.com/agentjq/agentjq/internal/testkit/apistub"
	"github.com/agentjq/agentjq/internal/testkit/livetest"
	"github.com/agentjq/agentjq/iostreams"
)

// TestLiveCheckGradesCrossVersion is the first real test of the grading:
// claude 2.1.332 against 2.1.328's fixtures. It runs when the live CLI is
// 2.1.332 (make test's pass for it). 2.1.332 adds three capabilities and
// two system/init keys (compatible) and no longer sends can_use_tool's
// optional server_policy_ask_only (a removed key: breaking).
func TestLiveCheckGradesCrossVersion(t *testing.T) {
	t.Parallel()
	const recorded, live = "2.1.328", "2.1.332"
	bin := livetest.Claude(t)
	if v := livetest.CLIVersion(t, bin); v != live {
		t.Skipf("the live CLI is %s; this test checks %s against %s's fixtures", v, live, recorded)
	}
	dir := fixtures.RecordingsDir(recorded)
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("%s's fixtures are gone (no longer a checked version): %v", recorded, err)
	}
	files := []string{filepath.Join(dir, "hello.rec"), filepath.Join(dir, "write-allow.rec"), filepath.Join(dir, "initialize.rec")}
	api := apistub.Start(t)
	ios, _, outb, errb := iostreams.Test()
	ios.Environ = livetest.Env(t, api.URL())
	code := Main(append([]string{"replay", "--check", "--bin", bin, "--timeout", "3m"}, files...), ios)
	out := outb.String()
	t.Logf("exit %d\n%s\nstderr: %s", code, out, errb)
	if code != 1 {
		t.Errorf("exit %d, want 1 (breaking: a removed key)", code)
	}
	for _, want := range []string{
		`compatible  ~ line 1→1 system/init: .capabilities[] +"mcp_call_soft_error_result_v1" (new member)`,
		`compatible  ~ line 1→1 system/init: .capabilities[] +"withdrawn_tools_v1" (new member)`,
		`compatible  ~ line 1→1 system/init: .capabilities[] +"get_usage_detached_v1" (new member)`,
		`compatible  ~ line 1→1 system/init: +.sandbox_enabled (new key)`,
		`compatible  ~ line 1→1 system/init: +.served_by_anthropic (new key)`,
		`breaking    ~ line 4→4 control_request/can_use_tool: -.request.server_policy_ask_only (key no longer sent)`,
		`compatible  ~ line 1→1 control_response/success: .response.response.capabilities[] +"mcp_call_soft_error_result_v1" (new member)`,
		`compatible  ~ line 1→1 control_response/success: .response.response.capabilities[] +"get_usage_detached_v1" (new member)`,
		"(claude " + recorded + ") and the live agent (claude " + live + ")",
		"summary of 3 recordings",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	// Nothing else is breaking: the one breaking finding is in write-allow.
	if n := strings.Count(out, "\nbreaking  "); n != 1 {
		t.Errorf("%d breaking findings, want 1", n)
	}
	for _, row := range []string{"hello.rec  ", "initialize.rec  "} {
		i := strings.Index(out, row)
		if i < 0 || !strings.HasPrefix(strings.Fields(out[i:])[3], "compatible") {
			t.Errorf("summary row %q is not compatible", row)
		}
	}
	if strings.Contains(errb.String(), "version_drift") || strings.Contains(errb.String(), "was not checked") {
		t.Errorf("a checked version was warned about: %s", errb)
	}
}
