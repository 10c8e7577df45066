package approve

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentjq/agentjq/internal/protocol"
)

// The Bash analysis is checked against real bash. A command the analysis
// calls allowed by the trace policy is run by bash in a sandbox whose PATH
// holds only logging stubs (and the real wrappers, which run the stubs):
// every program it runs must be one the policy allows. What it writes is
// the sandbox's to hold, not the analysis's.

const tracePolicy = `{"allow": ["Bash(echo:*)", "Bash(printf:*)", "Bash(ls:*)", "Bash(cat:*)", "Bash(git status)"]}`

// traceAllowed reports whether a program the stubs logged is allowed.
func traceAllowed(name string, args []string) bool {
	switch name {
	case "ls", "cat", "echo", "printf":
		return true
	case "git":
		return len(args) == 1 && args[0] == "status"
	}
	return false
}

var stubNames = []string{"rm", "curl", "touch", "git", "ls", "cat", "wc", "grep", "head", "sh", "bash", "sudo",
	"tee", "cp", "mv", "dd", "sort", "python3", "make", "echo", "printf", "id", "mktemp", "sleep", "true", "false"}

// realWrappers run the command they are given: the real program is used,
// so that what it runs reaches the stubs.
var realWrappers = []string{"env", "timeout", "nice", "xargs", "find", "nohup", "stdbuf"}

type traceSandbox struct {
	root, stubs, log string
	rs               *RuleSet
}

func newTraceSandbox(t testing.TB) *traceSandbox {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	s := &traceSandbox{stubs: t.TempDir(), root: t.TempDir()}
	s.log = filepath.Join(s.stubs, "exec.log")
	stub := "#!/bin/sh\nprintf '%s\\n' \"${0##*/} $*\" >> \"$TRACE_LOG\"\n"
	for _, n := range stubNames {
		if err := os.WriteFile(filepath.Join(s.stubs, n), []byte(stub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range realWrappers {
		if p, err := exec.LookPath(n); err == nil {
			_ = os.Symlink(p, filepath.Join(s.stubs, n))
		}
	}
	f, err := ParseRulesFile("trace.json", []byte(tracePolicy), s.root)
	if err != nil {
		t.Fatal(err)
	}
	s.rs = NewRuleSet([]*RulesFile{f}, s.root)
	return s
}

func (s *traceSandbox) decide(cmd string, dir string) Verdict {
	in, _ := json.Marshal(map[string]string{"command": cmd})
	return s.rs.decide(&Request{CanUseTool: protocol.CanUseTool{ToolName: "Bash", Input: in}, Cwd: dir})
}

// check runs cmd if the analysis allows it and reports what bash did that
// the policy does not allow.
func (s *traceSandbox) check(t testing.TB, cmd string) (allowed bool, problems []string) {
	dir, err := os.MkdirTemp(s.root, "run")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if v := s.decide(cmd, dir); v.Behavior != protocol.Allow {
		return false, nil
	}
	return true, s.run(cmd, dir)
}

// run runs cmd in dir under bash and reports what it did that the trace
// policy does not allow.
func (s *traceSandbox) run(cmd, dir string) (problems []string) {
	for _, d := range []string{"out", "home", "sub"} {
		_ = os.Mkdir(filepath.Join(dir, d), 0o755)
	}
	_ = os.WriteFile(filepath.Join(dir, "f"), []byte("x\n"), 0o644)
	_ = os.Remove(s.log)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, "bash", "-c", cmd)
	c.Dir = dir
	c.Env = []string{"PATH=" + s.stubs, "HOME=" + filepath.Join(dir, "home"), "TRACE_LOG=" + s.log}
	c.Stdin = strings.NewReader("f\n")
	_ = c.Run()
	if log, err := os.ReadFile(s.log); err == nil {
		for _, line := range strings.Split(strings.TrimSpace(string(log)), "\n") {
			f := strings.Fields(line)
			if len(f) > 0 && !traceAllowed(f[0], f[1:]) {
				problems = append(problems, "ran "+line)
			}
		}
	}
	return problems
}

// genCommand builds a command from the constructs the analysis must model.
func genCommand(r *rand.Rand, depth int) string {
	good := []string{"echo hi", "ls", "cat f", "git status", "echo $x", "printf '%s' a", "ls -la out", "cat < f"}
	bad := []string{"rm -rf sub", "touch pwned", "curl u", "git push", "id", "sh -c 'touch p'"}
	if depth <= 0 || r.Intn(3) == 0 {
		if r.Intn(4) == 0 {
			return bad[r.Intn(len(bad))]
		}
		return good[r.Intn(len(good))]
	}
	a := genCommand(r, depth-1)
	b := genCommand(r, depth-1)
	forms := []string{
		"%[1]s; %[2]s", "%[1]s && %[2]s", "%[1]s || %[2]s", "%[1]s | %[2]s", "echo $(%[1]s)", "echo `%[1]s`",
		"(%[1]s)", "{ %[1]s; }", "if %[1]s; then %[2]s; fi", "for i in 1 2; do %[1]s; done",
		"x='a[$(touch pwned)]'; echo $((x)); %[1]s", "x='a[$(touch pwned)]'; [[ $x -eq 0 ]]; %[1]s",
		"x=y; y='a[$(touch pwned)]'; echo ${!x}; %[1]s", "eval \"%[1]s\"", "bash -c '%[1]s'",
		"env %[1]s", "env -i %[1]s", "timeout 5 %[1]s", "nice -n 1 %[1]s", "command %[1]s", "echo f | xargs %[1]s",
		"find . -maxdepth 0 -exec %[1]s \\;", "%[1]s > out/r", "%[1]s > r", "%[1]s >> out/../r2",
		"cd out && %[1]s > r3", "cd out; %[1]s > ../r4", "cd sub && cd .. && %[1]s > out/r5", "x=out; %[1]s > $x/r6",
		"HOME=. %[1]s", "IFS=x; %[1]s", "declare -n r=x; %[1]s", "printf -v 'a[$(touch pwned)]' x; %[1]s",
		"test -v 'a[$(touch pwned)]'; %[1]s", "%[1]s 2>&1", "exec %[1]s", "a=(1 2); echo ${a[$(touch pwned)]}; %[1]s",
		"echo ${x:-$(%[1]s)}", "echo ${x:=$(touch pwned)}", "cat <<E\n$(%[1]s)\nE", "cat <<'E'\n$(touch pwned)\nE",
		"f() { %[1]s; }; f", "case x in x) %[1]s;; esac", "while false; do %[1]s; done", "trap 'touch pwned' EXIT; %[1]s",
		"time %[1]s", "! %[1]s", "%[1]s & wait", "%[1]s | tee out/t", "%[1]s | tee t", "y=1; %[1]s", "x=$(%[1]s); %[2]s",
		"(( 1 + 2 )); %[1]s", "echo $(( 2 * 3 )); %[1]s", "read -r line < f; %[1]s", "set -e; %[1]s", "cd sub; %[1]s > r7",
		"echo ${#x} ${x%%.go}; %[1]s", "ls > out/$(touch pwned)", "%[1]s > /dev/null", "echo a | cat > out/c",
	}
	return fmt.Sprintf(forms[r.Intn(len(forms))], a, b)
}

func TestBashTraceReference(t *testing.T) {
	if testing.Short() {
		t.Skip("runs bash a few hundred times")
	}
	s := newTraceSandbox(t)
	r := rand.New(rand.NewSource(12))
	allowed, total := 0, 400
	for range total {
		cmd := genCommand(r, 3)
		ok, problems := s.check(t, cmd)
		if ok {
			allowed++
		}
		for _, p := range problems {
			t.Errorf("allowed %q, but bash %s", cmd, p)
		}
	}
	// A reference that allows nothing checks nothing.
	if allowed < total/10 {
		t.Errorf("only %d of %d generated commands were allowed", allowed, total)
	}
	t.Logf("%d of %d generated commands allowed and checked against bash", allowed, total)
}

// TestBashTraceSeesViolations keeps the reference honest: it must see a
// program the policy does not allow.
func TestBashTraceSeesViolations(t *testing.T) {
	if testing.Short() {
		t.Skip("runs bash")
	}
	s := newTraceSandbox(t)
	for _, cmd := range []string{"x='a[$(touch pwned)]'; echo $((x))", "env git push", "echo f | xargs rm"} {
		dir := t.TempDir()
		if p := s.run(cmd, dir); len(p) == 0 {
			t.Errorf("%q: the reference saw nothing", cmd)
		}
		if v := s.decide(cmd, dir); v.Behavior == protocol.Allow {
			t.Errorf("%q: allowed", cmd)
		}
	}
	if p := s.run("echo hi > out/ok; git status; ls", t.TempDir()); len(p) != 0 {
		t.Errorf("an allowed command: %v", p)
	}
}

func FuzzBashTrace(f *testing.F) {
	r := rand.New(rand.NewSource(1))
	for range 40 {
		f.Add(genCommand(r, 3))
	}
	s := newTraceSandbox(f)
	f.Fuzz(func(t *testing.T, cmd string) {
		if len(cmd) > 2000 || strings.ContainsRune(cmd, 0) {
			return
		}
		if _, problems := s.check(t, cmd); len(problems) > 0 {
			t.Errorf("allowed %q, but bash %s", cmd, strings.Join(problems, "; "))
		}
	})
}
