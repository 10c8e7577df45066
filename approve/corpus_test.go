package approve

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentjq/agentjq/internal/protocol"
)

// The policy corpus: each row is a request, a policy and the verdict the
// chain must give. It runs through the whole chain (protection, the shell
// directory tracker, the answer checks), not the rules alone. Rows were
// written per class of bypass (re-evaluation, assignments, wrappers, the
// shell's directory, paths, strict input, protected files)
// and, so that a deny-everything engine fails, ordinary calls that must
// stay allowed.

const corpusMainPolicy = `{
  "allow": [
    "Bash(git status)", "Bash(git log:*)", "Bash(git diff:*)", "Bash(ls:*)", "Bash(cat:*)", "Bash(grep:*)",
    "Bash(head:*)", "Bash(wc:*)", "Bash(sort:*)", "Bash(tee:*)", "Bash(echo:*)", "Bash(printf:*)",
    "Bash(go test:*)", "Bash(go build:*)", "Bash(make test)", "Bash(npm run build)", "Bash(npm test)",
    "Bash(find:*)", "Bash(xargs grep:*)", "Bash(cp:*)", "Bash(touch:*)", "Bash(mkdir -p build)",
    "Bash(jq:*)", "Bash(sleep:*)", "Bash(pwd)", "Bash(date)", "Bash([ *)", "Bash(command -v:*)",
    "Read(src/**)", "Read(docs/**)", "Read(go.mod)", "Edit(src/**)", "Edit(build/**)",
    "Edit(.claude/notes.md)", "WebFetch(domain:example.com)"
  ],
  "deny": ["Bash(rm:*)", "Bash(curl:*)", "Bash(wget:*)", "Bash(git push:*)", "Read(.env)", "Read(src/secret/**)", "Edit(src/secret/**)"]
}`

type policyRow struct {
	name   string
	policy string   // "" is corpusMainPolicy; a name ending in .jq is a jq program
	before []string // Bash commands decided first (they move the shell)
	tool   string
	input  string // JSON; {p} is the project, {h} the home, {o} a directory outside
	want   string
}

func bashRow(want, cmd string) policyRow {
	return policyRow{name: cmd, tool: "Bash", input: jsonString("command", cmd), want: want}
}

func fileRow(want, tool, field, p string) policyRow {
	return policyRow{name: tool + " " + p, tool: tool, input: jsonString(field, p), want: want}
}

func jsonString(k, v string) string {
	b := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\t", `\t`).Replace(v)
	return `{"` + k + `":"` + b + `"}`
}

func (r policyRow) with(policy string) policyRow { r.policy = policy; return r }

func (r policyRow) after(cmds ...string) policyRow { r.before = cmds; return r }

const allow, deny = protocol.Allow, protocol.Deny

var policyCorpus = []policyRow{
	// Re-evaluation: a value that is inert as a word is code in arithmetic,
	// indirection and subscripts.
	bashRow(deny, `v='b[$(touch pwned)]'; echo $((v))`),
	bashRow(deny, `n=1; (( n > 0 )) && echo yes`),
	bashRow(deny, `echo $[v+1]`),
	bashRow(deny, `echo ${arr[v]}`),
	bashRow(deny, `echo ${s:$n:2}`),
	bashRow(deny, `echo ${!ref}`),
	bashRow(deny, `echo ${p@P}`),
	bashRow(deny, `z[v]=1; echo ok`),
	bashRow(deny, `for ((i=v; i<3; i++)); do echo $i; done`),
	bashRow(deny, `case $((q)) in 0) echo zero;; esac`),
	bashRow(deny, `[[ -v arr[$k] ]] && echo set`),
	bashRow(deny, `[[ $k -gt 3 ]] && echo big`),
	bashRow(deny, `[[ -R ref ]] || echo no`),
	bashRow(deny, `[ -v 'a[$(touch pwned)]' ]`),
	bashRow(deny, `printf -v 'out[$(touch pwned)]' %s x`),
	bashRow(deny, `printf $FLAG name x`),
	bashRow(deny, `let 'x=1'; echo $x`),
	bashRow(deny, `echo ${u:=/tmp}`),
	bashRow(deny, `declare -n r=PATH; r=/tmp; git status`),
	bashRow(deny, `read -a 'w[$(touch pwned)]' < src/list.txt`),
	bashRow(deny, `mapfile -t lines < src/list.txt; echo ok`),
	bashRow(deny, `echo $(( $(cat src/n) + 1 ))`),
	bashRow(deny, `trap 'touch pwned' EXIT; echo hi`),
	bashRow(deny, `alias ls='touch pwned'; ls`),
	bashRow(deny, `source ./env.sh && git status`),
	bashRow(deny, `shopt -s extdebug; git status`),
	// Assignments are effects on later commands.
	bashRow(deny, `HOME=/tmp/h git status`),
	bashRow(deny, `export GIT_CONFIG_GLOBAL=./x; git status`),
	bashRow(deny, `GIT_DIR=/tmp/r; git log`),
	bashRow(deny, `IFS=/; echo a/b`),
	bashRow(deny, `declare BASH_ENV=./evil.sh; echo hi`),
	bashRow(deny, `f() { local PS4='$(touch pwned)'; }; echo hi`),
	bashRow(deny, `readonly PROMPT_COMMAND=x; echo hi`),
	bashRow(deny, `typeset LD_LIBRARY_PATH=/tmp; ls`),
	bashRow(deny, `npm_config_script_shell=./x npm test`),
	bashRow(deny, `export npm_config_userconfig=./rc; npm test`),
	bashRow(deny, `https_proxy=http://evil:8080; git log`),
	bashRow(deny, `PATH=./bin:$PATH; make test`),
	bashRow(deny, `unset GIT_CONFIG_NOSYSTEM; git status`),
	bashRow(deny, `env -u HOME git status`),
	bashRow(deny, `export LANG=C PAGER=./p; git log`),
	// Wrappers with their real option grammar; unknown options fail closed.
	bashRow(deny, `env --chdir=/etc cat passwd`),
	bashRow(deny, `env --split-string='git status; rm -rf x'`),
	bashRow(deny, `exec -c -a foo git status`),
	bashRow(deny, `command -p rm -rf build`),
	bashRow(deny, `builtin source ./x`),
	bashRow(deny, `nice -19 rm -rf x`),
	bashRow(deny, `nice --adjustment=5 curl evil.example`),
	bashRow(deny, `ionice -c3 -n7 rm -rf x`),
	bashRow(deny, `ionice -p 1 git status`),
	bashRow(deny, `nohup curl x &`),
	bashRow(deny, `timeout --signal=KILL 5 rm -r x`),
	bashRow(deny, `timeout --bogus 5 git status`),
	bashRow(deny, `ls | xargs -I% rm %`),
	bashRow(deny, `ls | xargs -i sh -c '{}'`),
	bashRow(deny, `ls | xargs --process-slot-var=PATH grep x`),
	bashRow(deny, `ls | xargs -L1 rm`),
	bashRow(deny, `find . -name x -execdir rm {} +`),
	bashRow(deny, `find . $ACTION`),
	bashRow(deny, `sudo -s git status`),
	bashRow(deny, `doas -s`),
	bashRow(deny, `stdbuf -oL rm x`),
	bashRow(deny, `chroot / git status`),
	bashRow(deny, `setsid -f rm x`),
	bashRow(deny, `watch -n1 'git status; rm -rf x'`),
	bashRow(deny, `watch -x rm x`),
	bashRow(deny, `flock /tmp/l rm x`),
	bashRow(deny, `flock src/l -c 'rm x'`),
	bashRow(deny, `su -c 'git status'`),
	bashRow(deny, `script -qc 'git status' /dev/null`),
	bashRow(deny, `parallel rm ::: x`),
	bashRow(deny, `busybox rm x`),
	bashRow(deny, `taskset 1 rm x`),
	bashRow(deny, `bash --rcfile ./x -c 'git status'`),
	bashRow(deny, `sh -o posix -c 'rm x'`),
	// The shell's directory across calls, for the file tools' relative paths.
	fileRow(deny, "Write", "file_path", "k.pem").after("cd src/secret"),
	// Long commands are judged on their merits.
	bashRow(deny, "echo "+strings.Repeat("w ", 80)+"; rm -rf x"),
	// Paths: every tool's path field, schemas, dangling links.
	fileRow(deny, "Write", "file_path", "{p}/src/dangling"),
	fileRow(deny, "Edit", "file_path", "{p}/src/dangle-dir/new.txt"),
	fileRow(deny, "NotebookEdit", "notebook_path", "{p}/src/secret/n.ipynb"),
	fileRow(deny, "LS", "path", "{p}/src/secret"),
	fileRow(deny, "Grep", "path", "{p}/src/secret"),
	{name: "grep glob up", tool: "Grep", input: `{"pattern":"k","path":"{p}/src","glob":"../../**/.env"}`, want: deny},
	{name: "glob absolute", tool: "Glob", input: `{"pattern":"/etc/**","path":"{p}/src"}`, want: deny},
	{name: "read path not a string", tool: "Read", input: `{"file_path":["{p}/src/main.go"]}`, want: deny},
	{name: "read no path", tool: "Read", input: `{"path":"{p}/src/main.go"}`, want: deny},
	{name: "read case-variant key", tool: "Read", input: `{"file_path":"{p}/src/main.go","File_path":"{p}/.env"}`, want: deny},
	{name: "write FILE_PATH", tool: "Write", input: `{"FILE_PATH":"{p}/src/a.go","file_path":"{p}/src/a.go"}`, want: deny},
	{name: "bash Command", tool: "Bash", input: `{"command":"rm -rf x","Command":"git status"}`, want: deny},
	{name: "bash duplicate command", tool: "Bash", input: `{"command":"git status","command":"rm -rf x"}`, want: deny},
	{name: "bash command not a string", tool: "Bash", input: `{"command":["git","status"]}`, want: deny},
	// Protected control files.
	fileRow(deny, "Write", "file_path", "{p}/.claude/settings.local.json").with(`{"allow":["Edit(**)"]}`),
	fileRow(deny, "Edit", "file_path", "{h}/.claude/settings.json").with(`{"allow":["Edit(~/**)"]}`),
	fileRow(deny, "Write", "file_path", "{p}/.mcp.json").with(`{"allow":["Edit(*.json)"]}`),
	fileRow(deny, "Edit", "file_path", "{p}/.git/hooks/pre-push").with(`{"allow":["Edit(./**)"]}`),
	fileRow(deny, "MultiEdit", "file_path", "{p}/.git/config").with(`{"allow":["Edit(./**)"]}`),
	fileRow(deny, "Write", "file_path", "{h}/.config/git/config").with(`{"allow":["Edit(~/**)"]}`),
	fileRow(deny, "Write", "file_path", "{h}/.zshrc").with(`{"allow":["Edit(~/**)"]}`),
	fileRow(deny, "Write", "file_path", "{p}/src/.gitconfig"),
	fileRow(deny, "NotebookEdit", "notebook_path", "{p}/.claude/x.ipynb").with(`{"allow":["Edit(./**)"]}`),
	fileRow(deny, "Write", "file_path", "{p}/.claude/settings.json").with("allow-all.jq"),
	fileRow(deny, "Write", "file_path", "{p}/sub/.claude/settings.json").with(`{"allow":["Edit(sub/**)"]}`),

	// Ordinary calls that must stay allowed.
	bashRow(allow, `git status`),
	bashRow(allow, `git log --oneline -3`),
	bashRow(allow, `git diff HEAD~1 -- src`),
	bashRow(allow, `ls -la src`),
	bashRow(allow, `cat src/main.go | head -5`),
	bashRow(allow, `grep -rn TODO src | wc -l`),
	bashRow(allow, `go test ./...`),
	bashRow(allow, `go build ./...`),
	bashRow(allow, `make test`),
	bashRow(allow, `npm run build && npm test`),
	bashRow(allow, `echo hello > src/out.txt`),
	bashRow(allow, `go test ./... 2>&1 | tee src/test.log`),
	bashRow(allow, `sort -o src/sorted.txt src/list.txt`),
	bashRow(allow, `cp src/a.go src/b.go`),
	bashRow(allow, `touch src/new.go`),
	bashRow(allow, `mkdir -p build`),
	bashRow(allow, `find src -name '*.go' | xargs grep -n func`),
	bashRow(allow, `find src -name '*.go' -exec grep -l main {} +`),
	bashRow(allow, `set -euo pipefail; go test ./...`),
	bashRow(allow, `cd src && ls`),
	bashRow(allow, `cd src && echo x > y.txt`),
	bashRow(allow, `x=3; echo $x`),
	bashRow(allow, `for f in src/*.go; do echo $f; done`),
	bashRow(allow, `if [ -f go.mod ]; then echo mod; fi`),
	bashRow(allow, `while read -r line; do echo "$line"; done < src/list.txt`),
	bashRow(allow, `echo $((1+2))`),
	bashRow(allow, `[[ -f go.mod ]] && echo yes`),
	bashRow(allow, `[[ $(git status) == *clean* ]] && echo clean`),
	bashRow(allow, `[[ 3 -gt 2 ]] && echo ok`),
	bashRow(allow, `timeout 30 go test ./...`),
	bashRow(allow, `timeout --signal=KILL 30s go test ./...`),
	bashRow(allow, `nice -n 5 make test`),
	bashRow(allow, `LC_ALL=C sort src/list.txt`),
	bashRow(allow, `env LANG=C git status`),
	bashRow(allow, `git log > src/log.txt 2>&1`),
	bashRow(allow, `echo done >&2`),
	bashRow(allow, `cat src/main.go 2>/dev/null || true`),
	bashRow(allow, "echo "+strings.Repeat("word ", 80)),
	bashRow(allow, `jq . src/x.json`),
	bashRow(allow, `sleep 1; date; pwd`),
	bashRow(allow, `printf '%s\n' a b`),
	bashRow(allow, "cat <<EOF > src/h.txt\nhi $(date)\nEOF"),
	bashRow(allow, `echo "${name:-default} ${#name} ${name%.go}"`),
	bashRow(allow, `command -v go`),
	bashRow(allow, `cd src`),
	bashRow(allow, `git status`).after("cd src/secret"),
	bashRow(allow, `echo x > y.txt`).after("cd src").with(`{"allow":["Bash(echo:*)", "Edit(./**)"]}`),
	bashRow(allow, `echo ok > {p}/src/abs.txt`).after(`cd "$(mktemp -d)"`).with(`{"allow":["Bash(echo:*)", "Bash(mktemp:*)", "Edit(src/**)"]}`),
	fileRow(allow, "Read", "file_path", "{p}/src/main.go"),
	fileRow(allow, "Read", "file_path", "src/main.go"),
	fileRow(allow, "Edit", "file_path", "{p}/src/a.go"),
	fileRow(allow, "Write", "file_path", "{p}/src/new/file.txt"),
	fileRow(allow, "MultiEdit", "file_path", "{p}/src/main.go"),
	fileRow(allow, "NotebookEdit", "notebook_path", "{p}/src/n.ipynb"),
	fileRow(allow, "Write", "file_path", "{p}/.claude/notes.md"),
	fileRow(allow, "Edit", "file_path", "{h}/.bashrc").with(`{"allow":["Edit(~/.bashrc)"]}`),
	fileRow(allow, "Write", "file_path", "{p}/.claude/settings.local.json").with(`{"allow":["Edit(.claude/**)"]}`),
	fileRow(allow, "Grep", "path", "{p}/src"),
	fileRow(allow, "LS", "path", "{p}/src"),
	{name: "glob in src", tool: "Glob", input: `{"pattern":"**/*.go","path":"{p}/src"}`, want: allow},
	{name: "grep glob", tool: "Grep", input: `{"pattern":"func","path":"{p}/src","glob":"*.go","output_mode":"content"}`, want: allow},
	{name: "fetch", tool: "WebFetch", input: `{"url":"https://example.com/docs","prompt":"x"}`, want: allow},
}

func TestPolicyCorpus(t *testing.T) {
	root := t.TempDir()
	project, home, outside := filepath.Join(root, "project"), filepath.Join(root, "home"), filepath.Join(root, "outside")
	for _, d := range []string{project + "/src/secret", project + "/.claude", project + "/.git/hooks", project + "/docs", home, outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{project + "/.env", project + "/go.mod", project + "/src/main.go", project + "/src/list.txt"} {
		if err := os.WriteFile(f, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, to := range map[string]string{
		project + "/src/dangling":   home + "/.bashrc",   // does not exist yet
		project + "/src/dangle-dir": outside + "/newdir", // nor does this
		project + "/src/escape":     outside,
	} {
		if err := os.Symlink(to, link); err != nil {
			t.Fatal(err)
		}
	}
	// A hard link in the project to a file outside it.
	if err := os.WriteFile(outside+"/rc", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(outside+"/rc", project+"/src/hard"); err != nil {
		t.Fatal(err)
	}
	policies := t.TempDir()
	write := func(name, src string) string {
		p := filepath.Join(policies, name)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("allow-all.jq", `"allow"`)
	sub := strings.NewReplacer("{p}", project, "{h}", home, "{o}", outside)
	allows, denies := 0, 0
	for i, row := range policyCorpus {
		if row.tool == "" {
			continue
		}
		var file string
		switch {
		case row.policy == "":
			file = write("main.json", corpusMainPolicy)
		case strings.HasSuffix(row.policy, ".jq"):
			file = filepath.Join(policies, row.policy)
		default:
			file = write("row.json", row.policy)
		}
		c, err := NewChain(ChainOptions{Policies: []string{file}, Cwd: project, Home: home})
		if err != nil {
			t.Fatalf("%s: %v", row.name, err)
		}
		for _, b := range row.before {
			c.Decide(context.Background(), &Request{CanUseTool: protocol.CanUseTool{ToolName: "Bash", Input: []byte(jsonString("command", b))}, Cwd: project})
		}
		in := sub.Replace(row.input)
		req := &Request{RequestID: "r", CanUseTool: protocol.CanUseTool{Subtype: "can_use_tool", ToolName: row.tool, Input: []byte(in)}, Cwd: project}
		v, _ := c.Decide(context.Background(), req)
		if v.Behavior != row.want {
			t.Errorf("row %d %q: %s (%s): %s, want %s", i, clip(row.name, 80), v.Behavior, v.Rule, v.Message, row.want)
		}
		if v.Behavior == deny && strings.TrimSpace(v.Message) == "" {
			t.Errorf("row %d %q: deny without a message", i, row.name)
		}
		if row.want == allow {
			allows++
		} else {
			denies++
		}
		c.Close()
	}
	if allows < 40 || denies < 100 {
		t.Errorf("corpus has %d allows and %d denies, want at least 40 and 100", allows, denies)
	}
}

// Rows found by attacking the analysis after the first version.
var policyCorpusMore = []policyRow{
	bashRow(deny, `eval 'cd src/secret'; echo x > k`),
	fileRow(deny, "Edit", "file_path", "{p}/src/hard"),
	bashRow(allow, `go test ./... & wait`),
	bashRow(deny, `sleep 1 & wait -p PATH`),
	bashRow(allow, `go build -o build/app .`),
	bashRow(allow, `kubectl get pods --output=json`).with(`{"allow":["Bash(kubectl get:*)"]}`),
	bashRow(allow, `wc -l < src/list.txt`),
	bashRow(deny, `env - rm -rf x`).with(`{"allow":["Bash(*)"], "deny":["Bash(rm:*)"]}`),
	bashRow(deny, `nice --weird rm -rf x`).with(`{"allow":["Bash(*)"], "deny":["Bash(rm:*)"]}`),
	bashRow(deny, `ls | xargs -P2 -n1 rm`).with(`{"allow":["Bash(*)"], "deny":["Bash(rm:*)"]}`),
	bashRow(allow, `timeout 5 git status`).with(`{"allow":["Bash(*)"], "deny":["Bash(rm:*)"]}`),
	fileRow(deny, "Write", "file_path", "{p}/.git/modules/lib/hooks/post-checkout").with(`{"allow":["Edit(./**)"]}`),
	fileRow(deny, "Write", "file_path", "{p}/sub/.git").with(`{"allow":["Edit(./**)"]}`),
	fileRow(deny, "Write", "file_path", "{p}/.npmrc").with(`{"allow":["Edit(./**)"]}`),
	fileRow(deny, "Edit", "file_path", "{h}/.ssh/authorized_keys").with(`{"allow":["Edit(~/**)"]}`),
	fileRow(allow, "Write", "file_path", "{p}/src/gitconfig.go"),
	bashRow(allow, `rm -rf build/out`).with(`{"allow":["Bash(rm:*)", "Edit(build/**)"]}`),
	bashRow(allow, `cp src/a.go build/`).with(`{"allow":["Bash(cp:*)", "Edit(build/**)"]}`),
	bashRow(allow, `ln -s ../src/a.go build/a.go`).with(`{"allow":["Bash(ln:*)", "Edit(build/**)"]}`),
}

func init() { policyCorpus = append(policyCorpus, policyCorpusMore...) }
