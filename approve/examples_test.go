package approve_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentjq/agentjq/approve"
	"github.com/agentjq/agentjq/internal/protocol"
)

// Every shipped example policy is tested for what it must deny and allow.

type exampleCase struct {
	tool, input string
	want        string // allow, deny, or "" for no opinion (then the default denies)
	command     string // for an allow: the command that runs (a rewrite)
}

func runExample(t *testing.T, opts approve.ChainOptions, cases []exampleCase) {
	t.Helper()
	c, err := approve.NewChain(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, tc := range cases {
		req := &approve.Request{RequestID: "r", CanUseTool: protocol.CanUseTool{Subtype: "can_use_tool", ToolName: tc.tool, Input: json.RawMessage(tc.input)}, Cwd: "/p"}
		v, _ := c.Decide(context.Background(), req)
		want := tc.want
		if want == "" {
			want = protocol.Deny
		}
		if v.Behavior != want {
			t.Errorf("%s %s: %s (%s) %s, want %s", tc.tool, tc.input, v.Behavior, v.Rule, v.Message, want)
			continue
		}
		if tc.want == "" && v.Source != protocol.ByDefault {
			t.Errorf("%s %s: decided by %s %s, want no opinion", tc.tool, tc.input, v.Source, v.Rule)
		}
		if tc.command != "" {
			var in struct {
				Command string `json:"command"`
			}
			_ = json.Unmarshal(v.UpdatedInput, &in)
			if in.Command != tc.command {
				t.Errorf("%s: runs %q, want %q", tc.input, in.Command, tc.command)
			}
		}
	}
}

func examplePath(name string) string { return filepath.Join("..", "examples", "policies", name) }

func TestExampleDryRunJQ(t *testing.T) {
	runExample(t, approve.ChainOptions{Policies: []string{examplePath("dry-run.jq")}, Cwd: "/p", Home: "/home/u"}, []exampleCase{
		{"Bash", `{"command":"terraform apply"}`, "allow", "terraform plan"},
		{"Bash", `{"command":"terraform apply -var-file=prod.tfvars -auto-approve"}`, "allow", "terraform plan -var-file=prod.tfvars"},
		{"Bash", `{"command":"terraform destroy -target=module.db"}`, "allow", "terraform plan -destroy -target=module.db"},
		{"Bash", `{"command":"terraform apply; rm -rf /"}`, "", ""},
		{"Bash", `{"command":"terraform apply && curl evil"}`, "", ""},
		{"Bash", `{"command":"terraform apply $(rm -rf /)"}`, "", ""},
		{"Bash", `{"command":"terraform apply\nrm -rf /"}`, "", ""},
		{"Bash", `{"command":"terraform apply > ~/.bashrc"}`, "", ""},
		{"Bash", `{"command":"terraform apply | sh"}`, "", ""},
		{"Bash", `{"command":"terraform apply 'x;y'"}`, "", ""},
		{"Bash", `{"command":"sudo ls"}`, "deny", ""},
		{"Bash", `{"command":"git status && doas rm x"}`, "deny", ""},
		{"Bash", `{"Command":"terraform apply"}`, "deny", ""},
		{"Write", `{"file_path":"/etc/passwd","content":"x"}`, "deny", ""},
		{"Edit", `{"file_path":"/p/../etc/passwd","old_string":"a","new_string":"b"}`, "deny", ""},
		{"Edit", `{"file_path":"/prod/x"}`, "deny", ""},
		{"MultiEdit", `{"file_path":"/tmp/x","edits":[]}`, "deny", ""},
		{"NotebookEdit", `{"notebook_path":"/tmp/x.ipynb","new_source":""}`, "deny", ""},
		{"Write", `{"content":"x"}`, "deny", ""},
		{"Write", `{"file_path":"/p/src/a.go","content":"x"}`, "", ""},
		{"Edit", `{"file_path":"/p/README.md","old_string":"a","new_string":"b"}`, "", ""},
		{"Write", `{"file_path":"/p/.claude/settings.json","content":"{}"}`, "deny", ""},
		{"Read", `{"file_path":"/p/a"}`, "", ""},
	})
}

func TestExampleRulesJSON(t *testing.T) {
	runExample(t, approve.ChainOptions{Policies: []string{examplePath("rules.json")}, Cwd: "/p", Home: "/home/u"}, []exampleCase{
		{"Bash", `{"command":"git status"}`, "allow", ""},
		{"Bash", `{"command":"git log --oneline -5 | cat"}`, "deny", ""},
		{"Bash", `{"command":"go test ./... && make test"}`, "allow", ""},
		{"Read", `{"file_path":"/p/src/main.go"}`, "allow", ""},
		{"Edit", `{"file_path":"/p/src/main.go","old_string":"a","new_string":"b"}`, "allow", ""},
		{"WebFetch", `{"url":"https://pkg.go.dev/fmt","prompt":"x"}`, "allow", ""},
		{"Bash", `{"command":"rm -rf build"}`, "deny", ""},
		{"Bash", `{"command":"git status; rm -rf /"}`, "deny", ""},
		{"Bash", `{"command":"git push origin main"}`, "deny", ""}, // ask, and no one to ask
		{"Bash", `{"command":"curl https://x"}`, "deny", ""},
		{"Read", `{"file_path":"/p/.env"}`, "deny", ""},
		{"Read", `{"file_path":"/home/u/.ssh/id_rsa"}`, "deny", ""},
		{"Edit", `{"file_path":"/etc/hosts"}`, "deny", ""},
		{"Edit", `{"file_path":"/p/README.md"}`, "deny", ""},
		{"Edit", `{"file_path":"/p/src/.claude/settings.json"}`, "deny", ""},
		{"Bash", `{"command":"HOME=/p/src git status"}`, "deny", ""},
		{"Bash", `{"command":"go test ./... > /p/src/out.txt"}`, "allow", ""},
		// Bash(go test:*) allows it: the sandbox fails the write (EROFS).
		{"Bash", `{"command":"go test ./... > /p/.git/hooks/pre-commit"}`, "allow", ""},
	})
}

func TestExampleHookScript(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the hook script")
	}
	runExample(t, approve.ChainOptions{Approver: "sh " + examplePath("hook.sh"), ApproverFormat: "hook", Cwd: ".", Home: "/home/u"}, []exampleCase{
		{"Bash", `{"command":"git status"}`, "allow", ""},
		{"Bash", `{"command":"rm -rf /"}`, "deny", ""},
		{"Bash", `{"command":"rm -fr /"}`, "deny", ""},
		{"Bash", `{"command":"x=$(/bin/rm -r -f /)"}`, "deny", ""},
		{"Bash", `{"command":"git status\nrm -rf /"}`, "deny", ""},
		{"Bash", `{"command":"git status; curl evil"}`, "", ""},
		{"Bash", `{"command":"git status","description":"x"}`, "", ""},
		{"Read", `{"file_path":"/home/u/.ssh/id_rsa"}`, "", ""},
		{"Write", `{"file_path":"/p/.claude/settings.local.json","content":"{}"}`, "deny", ""},
	})
}

func TestExamplesAllTested(t *testing.T) {
	tested := map[string]bool{"dry-run.jq": true, "rules.json": true, "hook.sh": true}
	matches, _ := filepath.Glob(examplePath("*"))
	for _, m := range matches {
		if !tested[filepath.Base(m)] && !strings.HasSuffix(m, ".md") {
			t.Errorf("%s has no test of what it must deny and allow", m)
		}
	}
}
