package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/internal/testkit/livetest"
)

// waitsRun is one spawn session of the waits tests: its exit status, its
// stdout's lines decoded, stderr and what the fake agent read.
type waitsRun struct {
	code   int
	lines  []map[string]any
	stdout string
	stderr string
	log    string
}

// spawnWaits runs spawn with this test binary as the agent playing
// scenario; --timeout bounds a regression (a hang ends as a timeout).
func spawnWaits(t *testing.T, scenario string, env []string, args ...string) waitsRun {
	t.Helper()
	livetest.SkipShort(t, "runs this test binary as the agent and approver scripts")
	ios, out, errb := fakeIO(t, scenario, "go\n")
	ios.Environ = append(ios.Environ, env...)
	logPath := ""
	for _, e := range ios.Environ {
		if v, ok := strings.CutPrefix(e, "AGENTJQ_FAKE_LOG="); ok {
			logPath = v
		}
	}
	code := Main(append([]string{"spawn", "--bin", os.Args[0], "--timeout", "60s"}, args...), ios)
	r := waitsRun{code: code, stdout: out.String(), stderr: errb.String()}
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("stdout line is not JSON: %.200s", l)
		}
		r.lines = append(r.lines, m)
	}
	b, _ := os.ReadFile(logPath)
	r.log = string(b)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		}
	})
	return r
}

// events are the agentjq events of subtype.
func (r waitsRun) events(subtype string) []map[string]any {
	var evs []map[string]any
	for _, m := range r.lines {
		if m["type"] == "agentjq" && m["subtype"] == subtype {
			evs = append(evs, m)
		}
	}
	return evs
}

func (r waitsRun) outcome() string {
	if ex := r.events("exit"); len(ex) == 1 {
		s, _ := ex[0]["outcome"].(string)
		return s
	}
	return ""
}

// approverScript writes a co-process approver that runs body for each
// request, with $id the request's id.
func approverScript(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "approver.sh")
	src := "#!/bin/sh\nwhile IFS= read -r line; do\n  id=$(printf '%s' \"$line\" | sed -n 's/.*\"request_id\":\"\\([^\"]*\\)\".*/\\1/p')\n" + body + "\ndone\n"
	if err := writeFile(p, []byte(src), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// Waiting for an approval is not idleness: an approver that takes longer
// than --idle-timeout does not end the session as stalled, and the
// session ends once the turn has its result.
func TestSpawnIdleTimeoutWhileApproving(t *testing.T) {
	t.Parallel()
	approver := approverScript(t, `  sleep 3; printf '{"request_id":"%s","behavior":"allow"}\n' "$id"`)
	r := spawnWaits(t, "ask-quietly", nil, "--idle-timeout", "1s", "--approver", approver)
	if r.code != 0 || r.outcome() != string(protocol.OutcomeSuccess) {
		t.Fatalf("exit %d, outcome %q; want 0, success", r.code, r.outcome())
	}
	dec := r.events("decision")
	if len(dec) != 1 || dec[0]["behavior"] != "allow" || dec[0]["decided_by"] != protocol.ByApprover {
		t.Errorf("decisions %v, want the approver's allow", dec)
	}
	for _, w := range r.events("warning") {
		if strings.Contains(w["message"].(string), "idle-timeout") {
			t.Errorf("warned of idleness while the approver decided: %v", w)
		}
	}
}

// The agent withdraws a request (control_cancel_request) while the
// approver decides: the session does not hang, nothing is sent for the
// withdrawn request, the approver's late answer is dropped, and the next
// request is answered.
func TestSpawnWithdrawWhileApproving(t *testing.T) {
	t.Parallel()
	deciding := filepath.Join(t.TempDir(), "deciding")
	approver := approverScript(t, `  if [ "$id" = wd1 ]; then : > `+deciding+`; sleep 2; fi
  printf '{"request_id":"%s","behavior":"allow"}\n' "$id"`)
	r := spawnWaits(t, "withdraw", []string{"AGENTJQ_FAKE_WAIT_FILE=" + deciding}, "--approver", approver)
	if r.code != 0 || r.outcome() != string(protocol.OutcomeSuccess) {
		t.Fatalf("exit %d, outcome %q; want 0, success", r.code, r.outcome())
	}
	if strings.Contains(r.log, `"request_id":"wd1"`) {
		t.Errorf("something was sent for the withdrawn request:\n%s", r.log)
	}
	if !strings.Contains(r.log, `"request_id":"wd2"`) {
		t.Errorf("the request after the withdrawn one was not answered:\n%s", r.log)
	}
	byID := map[string]map[string]any{}
	for _, d := range r.events("decision") {
		byID[d["request_id"].(string)] = d
	}
	if d := byID["wd1"]; d == nil || d["behavior"] != "cancelled" {
		t.Errorf("wd1's decision %v, want cancelled", d)
	}
	if d := byID["wd2"]; d == nil || d["behavior"] != "allow" || d["decided_by"] != protocol.ByApprover {
		t.Errorf("wd2's decision %v, want the approver's allow", d)
	}
	if strings.Contains(r.stderr, "not waiting") {
		t.Errorf("the withdrawn request's late answer was reported as a stray:\n%s", r.stderr)
	}
}

// An approver that prints lines which are not answers (chatter, or an
// answer in the old form without request_id) gets the request denied at
// once, with a message that says what was wrong with the line, instead
// of a session waiting for an answer that never comes.
func TestSpawnApproverNonAnswerDenies(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ line, want string }{
		{`Sure, go ahead!`, "not an answer (not JSON: Sure, go ahead!)"},
		{`{"behavior":"allow"}`, "without request_id"},
	} {
		t.Run(c.line, func(t *testing.T) {
			approver := approverScript(t, `  printf '%s\n' '`+c.line+`'`)
			r := spawnWaits(t, "ask-quietly", nil, "--approver", approver)
			if r.code != protocol.ExitDenied || r.outcome() != string(protocol.OutcomeDenied) {
				t.Fatalf("exit %d, outcome %q; want %d, denied", r.code, r.outcome(), protocol.ExitDenied)
			}
			dec := r.events("decision")
			if len(dec) != 1 || dec[0]["behavior"] != "deny" || dec[0]["decided_by"] != protocol.ByError || !strings.Contains(dec[0]["message"].(string), c.want) {
				t.Errorf("decisions %v, want a deny saying %q", dec, c.want)
			}
			if !strings.Contains(r.log, `"request_id":"quiet1","response":{"behavior":"deny"`) {
				t.Errorf("the agent did not get the deny:\n%s", r.log)
			}
		})
	}
}

// The real CLI, with an approver slower than --idle-timeout: the time
// the approver takes is not the agent's silence, so the session neither
// stalls nor hangs after its result. The CLI's own start-up does count
// as silence (it owes agentjq's initialize and the turn), and it took
// 5.5s at load 10 on 2 cores: with 1s the session stalled (exit 125)
// before the approver was asked, and 10s left less than twice that. So
// the timeout is 20s and the approver takes 22s. (The idle tick is then
// 1s, slower than the 500ms settle before stdin closes: that the idle
// check must not postpone the settle is TestSpawnIdleTimeoutWhileApproving's
// to show, with a 1s timeout and the fake agent.)
func TestLiveSpawnIdleTimeoutWithApprover(t *testing.T) {
	t.Parallel()
	approver := approverScript(t, `  sleep 22; printf '{"request_id":"%s","behavior":"allow"}\n' "$id"`)
	r := spawnLive(t, "", "--approver", approver, "--idle-timeout", "20s", "-p", "please WRITE banana")
	if r.code != 0 || r.exit.Outcome != protocol.OutcomeSuccess {
		t.Fatalf("exit %d, outcome %s; want 0, success", r.code, r.exit.Outcome)
	}
	if len(r.decisions) != 1 || r.decisions[0].Behavior != "allow" || r.decisions[0].DecidedBy != protocol.ByApprover {
		t.Errorf("decisions %+v, want the approver's allow", r.decisions)
	}
}
