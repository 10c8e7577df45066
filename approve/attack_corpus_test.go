package approve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentjq/agentjq/internal/protocol"
)

// The attack corpus (testdata/attack-corpus.txt) was written as an attacker
// would, without reading the other corpora: each row is a policy, a tool
// call and the verdict the policy's author meant. A row is checked on both
// paths a call takes: the permission request (Decide) and the PreToolUse
// hook (Screen), where an allow means "no objection" and lets a call the
// agent would not ask about run. A row that must not be allowed must be
// neither; a row that must stay allowed must be allowed by Decide.
//
// The file's lines:
//
//	== CLASS                 the class the rows below attack
//	policy JSON              the rules file for the rows below
//	policy jq PROGRAM        a jq policy instead
//	also jq PROGRAM          a jq policy besides the rules file, for the rows below
//	after COMMAND            a Bash call decided before the next row (repeatable)
//	deny|allow TOOL INPUT    a row: INPUT is the command for Bash, JSON otherwise;
//	                         TOOL "Bash:json" takes the Bash input as JSON
//
// In inputs, {p} is the project, {h} the home directory, {o} a directory
// outside both (in policies too). # starts a comment line.

type attackRow struct {
	line   int
	class  string
	policy string
	jq     bool
	alsoJQ string
	before []string
	tool   string
	input  string
	want   string
}

func readAttackCorpus(t *testing.T, name string) []attackRow {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var rows []attackRow
	var class, policy, alsoJQ string
	var jq bool
	var before []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		verb, rest, _ := strings.Cut(line, " ")
		switch verb {
		case "==":
			class = rest
		case "also":
			alsoJQ, _ = strings.CutPrefix(rest, "jq ")
		case "policy":
			policy, jq, alsoJQ = rest, false, ""
			if p, ok := strings.CutPrefix(rest, "jq "); ok {
				policy, jq = p, true
			}
		case "after":
			before = append(before, rest)
		case protocol.Allow, protocol.Deny:
			tool, input, _ := strings.Cut(strings.TrimLeft(rest, " "), " ")
			input = strings.TrimLeft(input, " ")
			switch tool {
			case "Bash":
				input = jsonString("command", input)
			case "Bash:json":
				tool = "Bash"
			}
			if !json.Valid([]byte(input)) {
				t.Fatalf("%s:%d: input is not JSON: %s", name, n, input)
			}
			if policy == "" || class == "" {
				t.Fatalf("%s:%d: a row before its class and policy", name, n)
			}
			rows = append(rows, attackRow{line: n, class: class, policy: policy, jq: jq, alsoJQ: alsoJQ, before: before, tool: tool, input: input, want: verb})
			before = nil
		default:
			t.Fatalf("%s:%d: unknown line %q", name, n, verb)
		}
	}
	return rows
}

// attackProject builds the project the corpus runs in: secrets, control
// files, and links planted earlier.
func attackProject(t *testing.T) (project, home, outside string) {
	t.Helper()
	root := t.TempDir()
	project, home, outside = filepath.Join(root, "project"), filepath.Join(root, "home"), filepath.Join(root, "outside")
	for _, d := range []string{project + "/src/secret", project + "/.git/hooks", project + "/docs", project + "/build", project + "/src/evil/.claude", home + "/.ssh", outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{project + "/.env", project + "/go.mod", project + "/src/main.go", project + "/src/list.txt", project + "/src/secret/key.pem",
		project + "/src/evil/.claude/settings.local.json", project + "/src/run.sh", home + "/.ssh/id_rsa", outside + "/x.txt"} {
		if err := os.WriteFile(f, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, to := range map[string]string{
		project + "/src/to-secret": project + "/src/secret",
		project + "/src/to-out":    outside,
		project + "/src/to-rc":     home + "/.bashrc",
		project + "/docs/Claude":   project + "/.claude",
	} {
		if err := os.Symlink(to, link); err != nil {
			t.Fatal(err)
		}
	}
	return project, home, outside
}

func TestAttackCorpus(t *testing.T) {
	rows := readAttackCorpus(t, "testdata/attack-corpus.txt")
	project, home, outside := attackProject(t)
	sub := strings.NewReplacer("{p}", project, "{h}", home, "{o}", outside)
	dir := t.TempDir()
	allows, denies := 0, 0
	for _, row := range rows {
		name := filepath.Join(dir, "policy.json")
		if row.jq {
			name = filepath.Join(dir, "policy.jq")
		}
		if err := os.WriteFile(name, []byte(sub.Replace(row.policy)), 0o644); err != nil {
			t.Fatal(err)
		}
		policies := []string{name}
		if row.alsoJQ != "" {
			also := filepath.Join(dir, "also.jq")
			if err := os.WriteFile(also, []byte(sub.Replace(row.alsoJQ)), 0o644); err != nil {
				t.Fatal(err)
			}
			policies = append(policies, also)
		}
		c, err := NewChain(ChainOptions{Policies: policies, Cwd: project, Home: home})
		if err != nil {
			t.Fatalf("line %d: %v", row.line, err)
		}
		for _, b := range row.before {
			c.Decide(context.Background(), &Request{CanUseTool: protocol.CanUseTool{ToolName: "Bash", Input: []byte(jsonString("command", sub.Replace(b)))}, Cwd: project})
		}
		in := []byte(sub.Replace(row.input))
		// The hook and the permission request of one call share its
		// tool_use_id, as they do from claude.
		req := func(id string) *Request {
			return &Request{RequestID: "r", CanUseTool: protocol.CanUseTool{Subtype: protocol.SubCanUseTool, ToolName: row.tool, Input: in, ToolUseID: id}, Cwd: project}
		}
		hook := req("toolu_row")
		if len(row.before) == 0 {
			hook.ShellCwd = project // the hook reports the shell's directory
		}
		screen := c.Screen(context.Background(), hook)
		v, _ := c.Decide(context.Background(), req("toolu_row"))
		where := "line " + itoa(row.line) + " [" + row.class + "] " + clip(row.tool+" "+row.input, 120)
		switch row.want {
		case allow:
			allows++
			if v.Behavior != allow {
				t.Errorf("%s: %s (%s): %s, want allow", where, v.Behavior, v.Rule, v.Message)
			}
		default:
			denies++
			if v.Behavior == allow {
				t.Errorf("%s: allowed by %s %s (permission path)", where, v.Source, v.Rule)
			}
			if screen.Behavior == allow {
				t.Errorf("%s: no objection at the hook (%s %s)", where, screen.Source, screen.Rule)
			}
		}
		c.Close()
	}
	t.Logf("%d rows: %d must not be allowed, %d must stay allowed", len(rows), denies, allows)
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
