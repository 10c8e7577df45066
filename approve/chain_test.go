package approve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentjq/agentjq/fixtures"
	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/internal/syncio"
	"github.com/agentjq/agentjq/internal/testkit/livetest"
)

func bashReq(cmd string) *Request {
	return &Request{RequestID: "r1", CanUseTool: protocol.CanUseTool{Subtype: "can_use_tool", ToolName: "Bash",
		Input: json.RawMessage(`{"command":` + quoteJSON(cmd) + `}`), ToolUseID: "toolu_1"}, Cwd: "/p"}
}

func writePolicy(t *testing.T, name, src string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestJQPolicy(t *testing.T) {
	src := `if .tool_name == "Bash" and (.input.command | startswith("terraform apply")) then
  {behavior: "allow", updatedInput: (.input | .command += " -dry-run")}
elif .tool_name == "Bash" and (.input.command | test("^rm ")) then
  {behavior: "deny", message: "no rm in \(.cwd)"}
elif .tool_name == "Read" then "allow"
elif .tool_name == "Explode" then error("boom")
elif .tool_name == "AskUserQuestion" then {answers: {(.input.questions[0].question): .input.questions[0].options[0].label}}
elif .tool_name == "Weird" then 42
else empty end`
	p, err := ParseJQPolicy("p.jq", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	p.Stderr = &stderr
	ctx := context.Background()

	v, _ := p.Decide(ctx, bashReq("terraform apply"))
	if v.Behavior != protocol.Allow || string(v.UpdatedInput) != `{"command":"terraform apply -dry-run"}` || v.Source != protocol.ByJQ {
		t.Errorf("rewrite: %+v %s", v, v.UpdatedInput)
	}
	v, _ = p.Decide(ctx, bashReq("rm x"))
	if v.Behavior != protocol.Deny || v.Message != "no rm in /p" {
		t.Errorf("deny: %+v", v)
	}
	v, _ = p.Decide(ctx, bashReq("make"))
	if v.Behavior != "" {
		t.Errorf("no output must be no opinion: %+v", v)
	}
	r := bashReq("")
	r.ToolName, r.Input = "Read", json.RawMessage(`{"file_path":"/x"}`)
	if v, _ = p.Decide(ctx, r); v.Behavior != protocol.Allow || string(v.UpdatedInput) != `{"file_path":"/x"}` {
		t.Errorf("string allow: %+v", v)
	}
	for _, tool := range []string{"Explode", "Weird"} {
		stderr.Reset()
		r.ToolName = tool
		v, _ = p.Decide(ctx, r)
		if v.Behavior != protocol.Deny || v.Source != protocol.ByError || !strings.Contains(stderr.String(), "p.jq") {
			t.Errorf("%s: %+v, stderr %q", tool, v, stderr.String())
		}
	}
	r.ToolName, r.Input = "AskUserQuestion", json.RawMessage(`{"questions":[{"question":"Pet?","options":[{"label":"Cats"}]}]}`)
	if v, _ = p.Decide(ctx, r); v.Behavior != protocol.Allow || !strings.Contains(string(v.UpdatedInput), `"answers":{"Pet?":"Cats"}`) {
		t.Errorf("answers: %+v %s", v, v.UpdatedInput)
	}

	_, err = ParseJQPolicy("bad.jq", []byte("if .x then\n  \"allow\" els \"deny\" end"))
	var pe *PolicyError
	if !errors.As(err, &pe) || pe.Line != 2 || !strings.HasPrefix(err.Error(), "bad.jq:2:") {
		t.Errorf("parse error: %v", err)
	}
}

func TestJQPolicyTimeout(t *testing.T) {
	p, err := ParseJQPolicy("loop.jq", []byte(`def f: f; f`))
	if err != nil {
		t.Fatal(err)
	}
	c := &Chain{jq: []*JQPolicy{p}}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	v, _ := c.Decide(ctx, bashReq("x"))
	if v.Behavior != protocol.Deny || v.Source != protocol.ByTimeout || time.Since(start) > 5*time.Second {
		t.Errorf("got %+v after %v", v, time.Since(start))
	}
}

func TestChainOrder(t *testing.T) {
	rules := writePolicy(t, "r.json", `{"allow": ["Bash(git:*)"], "ask": ["Bash(make deploy)"], "deny": ["Bash(rm:*)"], "default": "ask"}`)
	jq := writePolicy(t, "p.jq", `if .input.command == "make" then "allow" elif .input.command == "git push" then "deny" else empty end`)
	c, err := NewChain(ChainOptions{Policies: []string{rules, jq}, Cwd: "/p"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cases := []struct{ cmd, behavior, source string }{
		{"git push", protocol.Allow, protocol.ByRules}, // rules come first
		{"rm x", protocol.Deny, protocol.ByRules},
		{"make", protocol.Allow, protocol.ByJQ},
		{"make deploy", protocol.Deny, protocol.ByDefault}, // ask, and nobody to ask
		{"ls", protocol.Deny, protocol.ByDefault},
	}
	for _, tc := range cases {
		v, err := c.Decide(context.Background(), bashReq(tc.cmd))
		if err != nil || v.Behavior != tc.behavior || v.Source != tc.source || (v.Behavior == protocol.Deny && v.Message == "") {
			t.Errorf("%q: %+v %v, want %s by %s", tc.cmd, v, err, tc.behavior, tc.source)
		}
	}
}

func TestChainLoadErrors(t *testing.T) {
	bad := writePolicy(t, "bad.json", "{\n  \"deny\": [\"Bash(rm:*\"]\n}")
	_, err := NewChain(ChainOptions{Policies: []string{bad}})
	if err == nil || !strings.HasSuffix(strings.SplitN(err.Error(), ": ", 2)[0], "bad.json:2:12") {
		t.Errorf("got %v", err)
	}
	badjq := writePolicy(t, "bad.jq", `.tool_name ==`)
	if _, err := NewChain(ChainOptions{Policies: []string{badjq}}); err == nil || !strings.Contains(err.Error(), "bad.jq:1:") {
		t.Errorf("got %v", err)
	}
	if _, err := NewChain(ChainOptions{Policies: []string{"/nonexistent.json"}}); err == nil {
		t.Error("a missing file must fail")
	}
}

func TestCoProcessApprover(t *testing.T) {
	livetest.SkipShort(t, "runs approver scripts")
	c, err := NewChain(ChainOptions{Approver: "./testdata/echo-approver.sh", Stderr: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		v, _ := c.Decide(ctx, bashReq("git status"))
		if v.Behavior != protocol.Allow || v.Source != protocol.ByApprover || string(v.UpdatedInput) != `{"command":"git status"}` {
			t.Fatalf("allow: %+v", v)
		}
		v, _ = c.Decide(ctx, bashReq("rm x"))
		if v.Behavior != protocol.Deny || v.Message != "approver says no" {
			t.Fatalf("deny: %+v", v)
		}
	}
}

func TestCoProcessCrashGarbageTimeout(t *testing.T) {
	livetest.SkipShort(t, "runs approver scripts")
	var stderr bytes.Buffer
	cp := NewCoProcess(ApproverOptions{Command: "./testdata/crash-approver.sh", Stderr: &syncio.Writer{W: &stderr}})
	defer cp.Close()
	ctx := context.Background()
	want := []string{"exited", "exited", "crashed again"}
	for i, w := range want {
		v, _ := cp.Decide(ctx, bashReq("git status"))
		if v.Behavior != protocol.Deny || !strings.Contains(v.Message, w) {
			t.Errorf("request %d: %+v, want a deny saying %q", i, v, w)
		}
	}

	slow := NewCoProcess(ApproverOptions{Command: "./testdata/slow-approver.sh", Timeout: 200 * time.Millisecond})
	defer slow.Close()
	start := time.Now()
	v, _ := slow.Decide(ctx, bashReq("x"))
	if v.Behavior != protocol.Deny || v.Source != protocol.ByTimeout || time.Since(start) > 4*time.Second {
		t.Errorf("timeout: %+v after %v", v, time.Since(start))
	}
	cctx, cancel := context.WithCancel(ctx)
	time.AfterFunc(100*time.Millisecond, cancel)
	if _, err := slow.Decide(cctx, bashReq("x")); !errors.Is(err, context.Canceled) {
		t.Errorf("cancel: %v", err)
	}
}

// Answers are matched by request_id: an answer for another request and a
// second answer are reported and never count, not even for the next
// request.
func TestCoProcessMatchesByRequestID(t *testing.T) {
	var stderr bytes.Buffer
	cp := NewCoProcess(ApproverOptions{Command: "./testdata/stray-approver.sh", Stderr: &syncio.Writer{W: &stderr}, Timeout: 5 * time.Second})
	defer cp.Close()
	for i := 0; i < 4; i++ {
		req := bashReq("git status")
		req.RequestID = fmt.Sprintf("req-%d", i)
		v, err := cp.Decide(context.Background(), req)
		if err != nil || v.Behavior != protocol.Deny || v.Message != "no from "+req.RequestID {
			t.Errorf("%s: %+v %v, want the deny for this request", req.RequestID, v, err)
		}
	}
	for _, w := range []string{`request "other-req-0"`, `request "req-0", which is not waiting`} {
		if !strings.Contains(stderr.String(), w) {
			t.Errorf("stderr lacks %q: %s", w, stderr.String())
		}
	}
}

// A line that is not an answer (chatter, JSON of another shape, an answer
// in the old form without request_id) denies the request waiting at
// once, saying what was wrong with the line, instead of being skipped
// while the request waits for ever. The approver's real answer, written
// after it, is dropped; the next request is answered as usual.
func TestCoProcessNonAnswerDenies(t *testing.T) {
	livetest.SkipShort(t, "runs approver scripts")
	cases := []struct{ line, want string }{
		{`Sure, go ahead!`, "is not an answer (not JSON: Sure, go ahead!)"},
		{`{"behavior":"allow"}`, `without request_id (every answer must name the request it answers: {"behavior":"allow"})`},
		{`{"type":"control_response","response":{"subtype":"success","response":{"behavior":"allow"}}}`, "without request_id"},
		{`{"decision":"allow"}`, "is not an answer"},
		{`[1,2]`, "is not an answer"},
	}
	for _, c := range cases {
		t.Run(c.line, func(t *testing.T) {
			var stderr bytes.Buffer
			// The first request gets the line, then its real answer; the
			// second only its answer. No timeout would end the wait: the
			// answer must come from the line.
			script := `n=0; while IFS= read -r line; do n=$((n+1)); id=$(printf '%s' "$line" | sed -n 's/.*"request_id":"\([^"]*\)".*/\1/p'); ` +
				`if [ $n = 1 ]; then printf '%s\n' '` + c.line + `'; fi; printf '{"request_id":"%s","behavior":"allow"}\n' "$id"; done`
			cp := NewCoProcess(ApproverOptions{Command: script, Stderr: &syncio.Writer{W: &stderr}, Timeout: time.Hour})
			defer cp.Close()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // only so a regression ends
			defer cancel()
			first := bashReq("git status")
			first.RequestID = "first"
			v, err := cp.Decide(ctx, first)
			if err != nil || v.Behavior != protocol.Deny || v.Source != protocol.ByError || !strings.Contains(v.Message, c.want) {
				t.Fatalf("first request: %+v %v, want a deny saying %q", v, err, c.want)
			}
			second := bashReq("git status")
			second.RequestID = "second"
			if v, err := cp.Decide(ctx, second); err != nil || v.Behavior != protocol.Allow {
				t.Errorf("second request: %+v %v, want its own allow\nstderr: %s", v, err, stderr.String())
			}
			if !strings.Contains(stderr.String(), "request first denied") {
				t.Errorf("stderr does not report the deny: %s", stderr.String())
			}
			if strings.Contains(stderr.String(), "which is not waiting") {
				t.Errorf("the first request's late answer was reported as a stray: %s", stderr.String())
			}
		})
	}
}

// Requests reach the approver one at a time in the order Decide was
// called.
func TestCoProcessKeepsOrder(t *testing.T) {
	log := filepath.Join(t.TempDir(), "seen")
	cp := NewCoProcess(ApproverOptions{Command: `while IFS= read -r line; do id=$(printf '%s' "$line" | sed -n 's/.*"request_id":"\([^"]*\)".*/\1/p'); echo "$id" >> ` + log + `; sleep 0.05; printf '{"request_id":"%s","behavior":"allow"}\n' "$id"; done`, Stderr: io.Discard})
	defer cp.Close()
	var wg sync.WaitGroup
	var want []string
	for i := 0; i < 6; i++ {
		req := bashReq("x")
		req.RequestID = fmt.Sprintf("r%d", i)
		want = append(want, req.RequestID)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if v, _ := cp.Decide(context.Background(), req); v.Behavior != protocol.Allow {
				t.Errorf("%s: %+v", req.RequestID, v)
			}
		}()
		time.Sleep(15 * time.Millisecond) // each call starts after the previous one queued
	}
	wg.Wait()
	got, _ := os.ReadFile(log)
	if strings.Join(strings.Fields(string(got)), " ") != strings.Join(want, " ") {
		t.Errorf("the approver saw %q, want %q", got, want)
	}
}

// A line without a newline is capped: the request is denied with a clear
// error. (What agentjq allocates meanwhile, bounded by the cap, is
// BenchmarkCoProcessLineCap: a memory figure is a benchmark, not a test.)
func TestCoProcessLineCap(t *testing.T) {
	if v := coProcessLineCap(); v.Behavior != protocol.Deny || !strings.Contains(v.Message, "over 16 MiB") {
		t.Errorf("%+v", v)
	}
}

func coProcessLineCap() Verdict {
	cp := NewCoProcess(ApproverOptions{Command: `read -r line; head -c 40000000 /dev/zero | tr '\0' x; sleep 30`, Stderr: io.Discard})
	defer cp.Close()
	v, _ := cp.Decide(context.Background(), bashReq("x"))
	return v
}

// 100 MB of hook output is capped: the request is denied with a clear
// error (BenchmarkHookOutputCap: what it allocates).
func TestHookApproverOutputCap(t *testing.T) {
	if v := hookOutputCap(); v.Behavior != protocol.Deny || !strings.Contains(v.Message, "more than 16 MiB") {
		t.Errorf("%+v", v)
	}
}

func hookOutputCap() Verdict {
	h := NewHook(ApproverOptions{Command: `cat >/dev/null; head -c 100000000 /dev/zero`, Stderr: io.Discard})
	v, _ := h.Decide(context.Background(), bashReq("x"))
	return v
}

func TestHookApprover(t *testing.T) {
	livetest.SkipShort(t, "runs approver scripts")
	cases := []struct {
		script, behavior, msg string
	}{
		{`cat >/dev/null; echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}'`, protocol.Allow, ""},
		{`cat >/dev/null; echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"nope"}}'`, protocol.Deny, "nope"},
		{`cat >/dev/null; echo 'blocked by hook' >&2; exit 2`, protocol.Deny, "blocked by hook"},
		{`cat >/dev/null; exit 1`, protocol.Deny, "failed"},
		{`cat >/dev/null; echo garbage`, protocol.Deny, "cannot read"},
		{`cat >/dev/null`, "", ""},
		{`cat >/dev/null; echo '{"decision":"block","reason":"old style"}'`, protocol.Deny, "old style"},
		{`grep -q '"hook_event_name":"PreToolUse"' && grep -q . ; echo '{"decision":"approve"}'`, protocol.Allow, ""},
		{`cat >/dev/null; echo '{"hookSpecificOutput":{"permissionDecision":"allow","updatedInput":{"command":"git status --short"}}}'`, protocol.Allow, ""},
	}
	for _, tc := range cases {
		h := NewHook(ApproverOptions{Command: tc.script, Stderr: io.Discard})
		v, err := h.Decide(context.Background(), bashReq("git status"))
		if err != nil || v.Behavior != tc.behavior || !strings.Contains(v.Message, tc.msg) {
			t.Errorf("%s: %+v %v, want %q %q", tc.script, v, err, tc.behavior, tc.msg)
		}
	}
	h := NewHook(ApproverOptions{Command: `cat >/dev/null; echo '{"hookSpecificOutput":{"permissionDecision":"allow","updatedInput":{"command":"git status --short"}}}'`})
	v, _ := h.Decide(context.Background(), bashReq("git status"))
	if string(v.UpdatedInput) != `{"command":"git status --short"}` {
		t.Errorf("updatedInput: %s", v.UpdatedInput)
	}
	h = NewHook(ApproverOptions{Command: "sleep 10", Timeout: 200 * time.Millisecond})
	start := time.Now()
	if v, _ := h.Decide(context.Background(), bashReq("x")); v.Behavior != protocol.Deny || time.Since(start) > 5*time.Second {
		t.Errorf("timeout: %+v after %v", v, time.Since(start))
	}
}

func TestServe(t *testing.T) {
	rules := writePolicy(t, "r.json", `{"allow": ["mcp__probe", "Bash(echo:*)"], "answers": {"Pet": "Dogs"}}`)
	c, err := NewChain(ChainOptions{Policies: []string{rules}, Cwd: "/home/user/project"})
	if err != nil {
		t.Fatal(err)
	}
	var in bytes.Buffer
	for _, name := range []string{"mcp-ping", "ask-answer", "rmrf-deny", "write-allow"} {
		b, err := fixtures.Capture(name, "out")
		if err != nil {
			t.Fatal(err)
		}
		in.Write(b)
	}
	in.WriteString("not json\n")
	// Valid JSON nested deeper than the scanner reads: answered (denied),
	// not left unanswered as "not JSON"; an allowed command does not
	// make it an allow.
	deep := strings.Repeat("[", protocol.MaxDepth+1) + strings.Repeat("]", protocol.MaxDepth+1)
	in.WriteString(`{"type":"control_request","request_id":"deep1","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"echo hi","x":` + deep + `},"tool_use_id":"toolu_deep1"}}` + "\n")
	var out, stderr bytes.Buffer
	bad, err := Serve(context.Background(), &in, &out, c, ServeOptions{Stderr: &stderr})
	if err != nil || bad != 1 {
		t.Fatalf("bad %d, err %v, stderr %s", bad, err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := []string{protocol.Allow, protocol.Allow, protocol.Deny, protocol.Deny, protocol.Deny}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), out.String())
	}
	for i, l := range lines {
		var resp struct {
			Type     string `json:"type"`
			Response struct {
				Subtype  string                    `json:"subtype"`
				Response protocol.PermissionResult `json:"response"`
			} `json:"response"`
		}
		if err := json.Unmarshal([]byte(l), &resp); err != nil {
			t.Fatal(err)
		}
		r := resp.Response.Response
		if resp.Type != "control_response" || r.Behavior != want[i] {
			t.Errorf("line %d: %s", i, l)
		}
		if r.Behavior == protocol.Allow && len(r.UpdatedInput) == 0 || r.Behavior == protocol.Deny && r.Message == "" {
			t.Errorf("line %d incomplete: %s", i, l)
		}
	}
	if !strings.Contains(lines[1], `"answers":{"Do you prefer cats or dogs?":"Dogs"}`) {
		t.Errorf("answer: %s", lines[1])
	}
	if !strings.Contains(lines[4], `"request_id":"deep1"`) || !strings.Contains(lines[4], "nesting deeper than 10000") || !strings.Contains(lines[4], `"toolUseID":"toolu_deep1"`) {
		t.Errorf("answer to the deep request: %s", lines[4])
	}
}

// TestServeFollowsUnaskedBash: claude runs a cd without asking; agentjq
// approve reads it from the assistant line, so the relative write that
// follows is judged in the directory the shell is in (a wrong allow
// otherwise). A call seen on the stream and then asked about is followed
// once: twice would judge the write in a directory the shell is not in.
func TestServeFollowsUnaskedBash(t *testing.T) {
	dir := t.TempDir()
	rules := writePolicy(t, "r.json", `{"allow":["Bash(cd:*)","Bash(echo:*)","Edit(./**)"],"deny":["Edit(sec/**)","Edit(a/a/**)"]}`)
	toolUse := func(id, cmd string) string {
		return `{"type":"assistant","message":{"content":[{"type":"tool_use","id":"` + id + `","name":"Bash","input":{"command":` + quoteJSON(cmd) + `}}]}}` + "\n"
	}
	ask := func(id, cmd string) string {
		return `{"type":"control_request","request_id":"r-` + id + `","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":` + quoteJSON(cmd) + `},"tool_use_id":"` + id + `"}}` + "\n"
	}
	// The shell's directory is followed for the file tools' relative
	// paths; a Bash command's own writes are the sandbox's.
	edit := func(id, path string) string {
		return `{"type":"control_request","request_id":"r-` + id + `","request":{"subtype":"can_use_tool","tool_name":"Edit","input":{"file_path":` + quoteJSON(path) + `,"old_string":"a","new_string":"b"},"tool_use_id":"` + id + `"}}` + "\n"
	}
	initLine := `{"type":"system","subtype":"init","cwd":` + quoteJSON(dir) + `,"session_id":"s1"}` + "\n"
	for _, tc := range []struct {
		name, stream string
		want         []string
	}{
		{"no cd", initLine + edit("w1", "k"), []string{protocol.Allow}},
		{"an unasked cd into a denied directory", initLine + toolUse("c1", "cd sec") + edit("w1", "k"),
			[]string{protocol.Deny}},
		{"a cd seen, then asked about", initLine + toolUse("c1", "cd a") + ask("c1", "cd a") + edit("w1", "k"),
			[]string{protocol.Allow, protocol.Allow}},
		{"an unreadable Bash input: the shell's directory is unknown", initLine +
			`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"c1","name":"Bash","input":{"command":"cd a","Command":"cd sec"}}]}}` + "\n" +
			edit("w1", "k"), []string{protocol.Deny}},
	} {
		c, err := NewChain(ChainOptions{Policies: []string{rules}, Cwd: dir})
		if err != nil {
			t.Fatal(err)
		}
		var out, stderr bytes.Buffer
		if _, err := Serve(context.Background(), strings.NewReader(tc.stream), &out, c, ServeOptions{Stderr: &stderr}); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if len(lines) != len(tc.want) {
			t.Errorf("%s: %d answers, want %d:\n%s", tc.name, len(lines), len(tc.want), out.String())
			continue
		}
		for i, l := range lines {
			if !strings.Contains(l, `"behavior":"`+tc.want[i]+`"`) {
				t.Errorf("%s: answer %d: %s, want %s", tc.name, i, l, tc.want[i])
			}
		}
	}
}

// An approver does not inherit the agent's credentials unless
// PassCredentials.
func TestApproverGetsNoCredentials(t *testing.T) {
	for _, pass := range []bool{false, true} {
		envFile := filepath.Join(t.TempDir(), "env")
		c, err := NewChain(ChainOptions{Approver: "env > " + envFile + "; exit 0", ApproverFormat: "hook", Stderr: io.Discard,
			Env: append(os.Environ(), "ANTHROPIC_API_KEY=sk-ant-secret-xyz", "AWS_SESSION_TOKEN=aws-xyz"), PassCredentials: pass})
		if err != nil {
			t.Fatal(err)
		}
		c.Decide(context.Background(), bashReq("x"))
		c.Close()
		env, err := os.ReadFile(envFile)
		if err != nil {
			t.Fatal(err)
		}
		for _, secret := range []string{"sk-ant-secret-xyz", "aws-xyz"} {
			if got := strings.Contains(string(env), secret); got != pass {
				t.Errorf("PassCredentials %v: approver env holds %s: %v", pass, secret, got)
			}
		}
	}
}

// A request withdrawn before its turn at the approver came (the agent's
// control_cancel_request while the request before it was decided) never
// reaches the approver, even when the approver is free by then: the
// approver does not see it, nor get stopped for it, and the next request
// is answered as usual.
func TestCoProcessWithdrawnNeverSent(t *testing.T) {
	livetest.SkipShort(t, "runs approver scripts")
	log := filepath.Join(t.TempDir(), "seen")
	cp := NewCoProcess(ApproverOptions{Command: `echo started >> ` + log + `; while IFS= read -r line; do id=$(printf '%s' "$line" | sed -n 's/.*"request_id":"\([^"]*\)".*/\1/p'); echo "$id" >> ` + log + `; printf '{"request_id":"%s","behavior":"allow"}\n' "$id"; done`, Stderr: io.Discard, Timeout: time.Minute})
	defer cp.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for i := range 20 {
		req := bashReq("x")
		req.RequestID = fmt.Sprintf("withdrawn-%d", i)
		if _, err := cp.Decide(ctx, req); !errors.Is(err, context.Canceled) {
			t.Fatalf("%s: %v, want context.Canceled", req.RequestID, err)
		}
	}
	next := bashReq("x")
	next.RequestID = "next"
	if v, err := cp.Decide(context.Background(), next); err != nil || v.Behavior != protocol.Allow {
		t.Errorf("next request: %+v %v", v, err)
	}
	got, _ := os.ReadFile(log)
	if strings.Join(strings.Fields(string(got)), " ") != "started next" {
		t.Errorf("the approver's log %q, want it started once, for the next request only", got)
	}
}

// An approver whose stdout is held open by a process outside its tree
// (here the test itself, through /proc) does not hold agentjq once it is
// stopped: a request it never answers is denied at its timeout, and
// Close returns.
func TestCoProcessStopsWithStdoutHeldElsewhere(t *testing.T) {
	livetest.SkipShort(t, "runs approver scripts")
	if runtime.GOOS != "linux" {
		t.Skip("opens the approver's stdout through /proc")
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	cp := NewCoProcess(ApproverOptions{Command: `echo $$ > ` + pidFile + `; while IFS= read -r line; do :; done`, Stderr: io.Discard, Timeout: 5 * time.Second})
	heldC := make(chan *os.File, 1)
	go func() {
		defer close(heldC)
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			b, err := os.ReadFile(pidFile)
			if err != nil || len(bytes.TrimSpace(b)) == 0 {
				continue
			}
			if f, err := os.OpenFile("/proc/"+string(bytes.TrimSpace(b))+"/fd/1", os.O_WRONLY, 0); err == nil {
				heldC <- f
			}
			return
		}
	}()
	done := make(chan Verdict, 1)
	go func() {
		v, _ := cp.Decide(context.Background(), bashReq("x"))
		cp.Close()
		done <- v
	}()
	select {
	case v := <-done:
		if v.Behavior != protocol.Deny || v.Source != protocol.ByTimeout {
			t.Errorf("%+v, want a deny at the timeout", v)
		}
	case <-time.After(time.Minute):
		t.Fatal("Decide and Close did not return: the held stdout kept agentjq waiting")
	}
	if held := <-heldC; held == nil {
		t.Error("the test never held the approver's stdout (nothing was tested)")
	} else {
		held.Close()
	}
}
