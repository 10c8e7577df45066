package sandbox

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentjq/agentjq/internal/protocol"
)

func TestSettingsFromPolicy(t *testing.T) {
	home := t.TempDir()
	proj := t.TempDir()
	os.MkdirAll(filepath.Join(proj, ".git", "hooks"), 0o755)
	for _, c := range []string{".ssh", ".aws", ".kube"} {
		os.MkdirAll(filepath.Join(home, c), 0o700)
	}
	os.WriteFile(filepath.Join(home, ".kube", "config"), nil, 0o600)
	os.WriteFile(filepath.Join(home, ".npmrc"), nil, 0o600)
	os.WriteFile(filepath.Join(proj, ".mcp.json"), nil, 0o644)
	p := Policy{
		Project: proj, Home: home,
		AllowWrite: []string{home + "/.cache/go-build"}, DenyWrite: []string{proj + "/secret"},
		DenyRead: []string{proj + "/.env"}, AllowRead: []string{home + "/.npmrc"},
		Domains: []string{"registry.npmjs.org"}, HideEnv: []string{"MY_TOKEN"},
	}
	sb := Settings(p)
	for k, want := range map[string]bool{"enabled": true, "failIfUnavailable": true, "allowUnsandboxedCommands": false, "autoAllowBashIfSandboxed": false} {
		if sb[k] != want {
			t.Errorf("%s = %v, want %v", k, sb[k], want)
		}
	}
	fs := sb["filesystem"].(map[string]any)
	dw, dr := fs["denyWrite"].([]string), fs["denyRead"].([]string)
	for _, want := range []string{proj + "/secret", proj + "/.git/hooks", proj + "/.mcp.json"} {
		if !slices.Contains(dw, want) {
			t.Errorf("denyWrite lacks %s", want)
		}
	}
	if slices.Contains(dw, home+"/.bashrc") {
		t.Errorf("denyWrite holds HOME's rc files though HOME is not writable here")
	}
	for _, want := range []string{proj + "/.env", home + "/.ssh", home + "/.aws", home + "/.kube/config"} {
		if !slices.Contains(dr, want) {
			t.Errorf("denyRead lacks %s", want)
		}
	}
	if slices.Contains(dr, home+"/.npmrc") {
		t.Errorf("denyRead holds ~/.npmrc, which a Read allow rule names")
	}
	if slices.Contains(dr, home+"/.gnupg") {
		t.Errorf("denyRead holds ~/.gnupg, which does not exist")
	}
	if got := sb["network"].(map[string]any)["allowedDomains"].([]string); !slices.Equal(got, []string{"registry.npmjs.org"}) {
		t.Errorf("allowedDomains %v", got)
	}
	env := sb["credentials"].(map[string]any)["envVars"].([]any)
	var names []string
	for _, e := range env {
		names = append(names, e.(map[string]any)["name"].(string))
	}
	for _, want := range []string{"ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN", "MY_TOKEN"} {
		if !slices.Contains(names, want) {
			t.Errorf("envVars lacks %s: %v", want, names)
		}
	}
	// A session run in HOME holds HOME's own control files.
	p.Project = home
	os.MkdirAll(filepath.Join(home, ".ssh"), 0o700)
	os.WriteFile(filepath.Join(home, ".bashrc"), nil, 0o644)
	dw = Settings(p)["filesystem"].(map[string]any)["denyWrite"].([]string)
	for _, want := range []string{home + "/.bashrc", home + "/.ssh"} {
		if !slices.Contains(dw, want) {
			t.Errorf("a session in HOME: denyWrite lacks %s", want)
		}
	}
}

// TestMergeNeverWeakens: whatever the client's sandbox block says, the
// merged one is at least as strict as agentjq's.
func TestMergeNeverWeakens(t *testing.T) {
	ours := Settings(Policy{Project: "/p", Home: "/h", AllowWrite: []string{"/h/.cache/go-build"}, Domains: []string{"*.npmjs.org"}})
	client := `{"model":"x","permissions":{"allow":["Bash(ls:*)"]},"sandbox":{
		"enabled":false,"allowUnsandboxedCommands":true,"autoAllowBashIfSandboxed":true,"failIfUnavailable":false,
		"excludedCommands":["docker:*"],"enableWeakerNestedSandbox":true,"bwrapPath":"/tmp/fake-bwrap",
		"filesystem":{"allowWrite":["/","/h/.cache/go-build/sub"],"denyWrite":["/p/extra"],"denyRead":["~/secret"],"allowRead":["/h/.ssh"],"disabled":true},
		"network":{"allowedDomains":["evil.example","registry.npmjs.org"],"deniedDomains":["bad.example"],"strictAllowlist":true,"httpProxyPort":8080,"allowLocalBinding":true,"allowAllUnixSockets":true},
		"credentials":{"envVars":[{"name":"CLIENT_TOKEN","mode":"mask"}]}}}`
	out, notes, err := Merge(client, ours, "/p", "/h")
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Model       string         `json:"model"`
		Permissions map[string]any `json:"permissions"`
		Sandbox     map[string]any `json:"sandbox"`
	}
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	if m.Model != "x" || m.Permissions == nil {
		t.Errorf("the client's other settings were not passed on: %s", out)
	}
	sb := m.Sandbox
	for k, want := range map[string]any{"enabled": true, "failIfUnavailable": true, "allowUnsandboxedCommands": false, "autoAllowBashIfSandboxed": false} {
		if sb[k] != want {
			t.Errorf("%s = %v, want %v", k, sb[k], want)
		}
	}
	for _, k := range []string{"excludedCommands", "enableWeakerNestedSandbox", "bwrapPath"} {
		if _, ok := sb[k]; ok {
			t.Errorf("%s was kept", k)
		}
	}
	fs := sb["filesystem"].(map[string]any)
	if _, ok := fs["disabled"]; ok {
		t.Errorf("filesystem.disabled was kept")
	}
	aw := strs(fs["allowWrite"])
	if slices.Contains(aw, "/") || len(aw) != 1 {
		t.Errorf("allowWrite widened: %v", aw)
	}
	if _, ok := fs["allowRead"]; ok {
		t.Errorf("the client's allowRead re-opened a credential: %v", fs["allowRead"])
	}
	if !slices.Contains(strs(fs["denyWrite"]), "/p/extra") || !slices.Contains(strs(fs["denyRead"]), "/h/secret") {
		t.Errorf("the client's denies were lost: %v %v", fs["denyWrite"], fs["denyRead"])
	}
	net := sb["network"].(map[string]any)
	if d := strs(net["allowedDomains"]); !slices.Equal(d, []string{"*.npmjs.org"}) {
		t.Errorf("allowedDomains %v", d)
	}
	if !slices.Equal(strs(net["deniedDomains"]), []string{"bad.example"}) || net["strictAllowlist"] != true {
		t.Errorf("the client's network restrictions were lost: %v", net)
	}
	for _, k := range []string{"httpProxyPort", "allowLocalBinding", "allowAllUnixSockets"} {
		if _, ok := net[k]; ok {
			t.Errorf("network.%s was kept", k)
		}
	}
	if !strings.Contains(string(out), "CLIENT_TOKEN") || !strings.Contains(string(out), "ANTHROPIC_API_KEY") {
		t.Errorf("credentials not merged: %s", out)
	}
	joined := strings.Join(notes, " ")
	for _, k := range []string{"sandbox.enabled", "sandbox.excludedCommands", "sandbox.filesystem.allowWrite /", "sandbox.network.allowedDomains evil.example", "sandbox.filesystem.disabled"} {
		if !strings.Contains(joined, k) {
			t.Errorf("notes lack %s: %v", k, notes)
		}
	}
	if strings.Contains(joined, "registry.npmjs.org") || strings.Contains(joined, "go-build/sub") {
		t.Errorf("notes name entries agentjq's list covers: %v", notes)
	}
}

func TestMergeReadsASettingsFile(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "s.json"), []byte(`{"sandbox":{"excludedCommands":["x"]},"env":{"A":"1"}}`), 0o644)
	out, notes, err := Merge("s.json", Settings(Policy{Project: dir}), dir, "")
	if err != nil || !strings.Contains(string(out), `"A":"1"`) || len(notes) != 1 {
		t.Fatalf("%s %v %v", out, notes, err)
	}
	if _, _, err := Merge("{not json", nil, dir, ""); err == nil {
		t.Errorf("bad JSON merged")
	}
	if _, _, err := Merge("missing.json", nil, dir, ""); err == nil {
		t.Errorf("a missing file merged")
	}
}

func strs(v any) []string {
	s, _ := strings_(v)
	return s
}

func TestCheck(t *testing.T) {
	none := func(string) (string, error) { return "", errors.New("not found") }
	only := func(names ...string) func(string) (string, error) {
		return func(n string) (string, error) {
			if slices.Contains(names, n) {
				return "/usr/bin/" + n, nil
			}
			return "", errors.New("not found")
		}
	}
	for _, tc := range []struct {
		goos string
		look func(string) (string, error)
		want string
	}{
		{"linux", none, "bubblewrap (bwrap) and socat not found"},
		{"linux", only("bwrap"), "socat not found"},
		{"linux", only("socat"), "bubblewrap (bwrap) not found"},
		{"darwin", none, "sandbox-exec"},
		{"windows", only("bwrap", "socat"), "does not run on windows"},
	} {
		err := Check(tc.goos, tc.look)
		var u *Unavailable
		if !errors.As(err, &u) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "--no-sandbox") {
			t.Errorf("%s: %v, want %q", tc.goos, err, tc.want)
		}
	}
	if err := Check("darwin", only("sandbox-exec")); err != nil {
		t.Errorf("darwin with sandbox-exec: %v", err)
	}
}

func TestWatcherReadsBlockedCalls(t *testing.T) {
	w := NewWatcher(map[string]any{"filesystem": map[string]any{"denyRead": []string{"/p/.env", "/h/.ssh"}}}, "/p")
	call := `{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"x"}},{"type":"tool_use","id":"t2","name":"Read","input":{}}]}}`
	if ev := w.Line("assistant", "", []byte(call)); ev != nil {
		t.Fatalf("events for a call: %v", ev)
	}
	text := "touch: cannot touch '.git/hooks/pre-commit': Read-only file system\n" +
		"/bin/sh: 1: cannot create /h/.bashrc: Read-only file system\n" +
		"open /h/go/bin/x: read-only file system\n" +
		"cat: .env: Permission denied\n" +
		"cat: other.txt: Permission denied\n" +
		"Warning: Couldn't read data from file \"/h/.ssh/id_rsa\", this makes an empty POST.\n" +
		"/bin/sh: 1: cannot create .claude/settings.local.json: Permission denied\n" +
		"error: could not lock config file .git/config: File exists\n" +
		"error: remote unpack failed: unable to create temporary object directory\n" +
		"<sandbox_violations>\ndeny network-outbound example.com:443 (user denied)\n</sandbox_violations>"
	res, _ := json.Marshal(map[string]any{"type": "user", "message": map[string]any{"content": []any{
		map[string]any{"type": "tool_result", "tool_use_id": "t1", "content": text},
		map[string]any{"type": "tool_result", "tool_use_id": "t2", "content": "EACCES: permission denied, open '/p/.env'"},
	}}})
	ev := w.Line("user", "", res)
	if len(ev) != 1 {
		t.Fatalf("events %v, want one for the Bash call only", ev)
	}
	sb := ev[0].(protocol.Sandboxed)
	if sb.ToolUseID != "t1" || sb.Subtype != protocol.EventSandbox {
		t.Errorf("%+v", sb)
	}
	var got []string
	for _, b := range sb.Blocked {
		got = append(got, b.Kind+" "+b.Path+b.Host)
	}
	want := []string{"network example.com:443", "write /p/.git/hooks/pre-commit", "write /h/.bashrc", "write /h/go/bin/x", "read /p/.env", "read /h/.ssh/id_rsa",
		"write /p/.claude/settings.local.json", "write /p/.git/config", "write "}
	if !slices.Equal(got, want) {
		t.Errorf("blocked\n%q\nwant\n%q", got, want)
	}
	// The result is read once: the call's id is forgotten.
	if ev := w.Line("user", "", res); ev != nil {
		t.Errorf("a second read: %v", ev)
	}
}

func TestWatcherInit(t *testing.T) {
	for _, tc := range []struct {
		line, why string
	}{
		{`{"type":"system","subtype":"init","claude_code_version":"2.1.332","sandbox_enabled":true}`, ""},
		{`{"type":"system","subtype":"init","claude_code_version":"2.1.328"}`, ""},
		{`{"type":"system","subtype":"init","claude_code_version":"2.1.332","sandbox_enabled":false}`, "sandbox_enabled false"},
		{`{"type":"system","subtype":"init","claude_code_version":"2.1.300"}`, "older than 2.1.328"},
		{`{"type":"system","subtype":"init","claude_code_version":"2.0.9"}`, "older than 2.1.328"},
	} {
		w := NewWatcher(map[string]any{}, "/p")
		var why string
		w.Unverified = func(s string) { why = s }
		w.Line("system", "init", []byte(tc.line))
		if tc.why == "" && why != "" || !strings.Contains(why, tc.why) {
			t.Errorf("%s: %q, want %q", tc.line, why, tc.why)
		}
	}
	off := NewWatcher(nil, "/p")
	ev := off.Line("system", "init", []byte(`{"type":"system","subtype":"init","sandbox_enabled":false}`))
	if len(ev) != 1 || ev[0].(protocol.Warning).Code != protocol.WarnSandboxOff {
		t.Errorf("--no-sandbox: %v, want one sandbox_off warning", ev)
	}
}

func TestGitExcludesHideOnlyMissingPlaceholders(t *testing.T) {
	p := t.TempDir()
	home := t.TempDir()
	os.WriteFile(filepath.Join(p, ".gitmodules"), []byte("[submodule]"), 0o644)
	os.MkdirAll(filepath.Join(home, ".config", "git"), 0o755)
	os.WriteFile(filepath.Join(home, ".config", "git", "ignore"), []byte("*.swp\n"), 0o644)
	env := map[string]string{"HOME": home, "GIT_CONFIG_COUNT": "2"}
	add, remove := GitExcludes(p, func(k string) string { return env[k] })
	if len(add) != 3 || add[0] != "GIT_CONFIG_KEY_2=core.excludesFile" || add[2] != "GIT_CONFIG_COUNT=3" {
		t.Fatalf("env %v", add)
	}
	file := strings.TrimPrefix(add[1], "GIT_CONFIG_VALUE_2=")
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for _, want := range []string{"*.swp", "**/.bashrc", "**/.mcp.json", "**/.claude/"} {
		if !strings.Contains(text, want) {
			t.Errorf("excludes lack %s:\n%s", want, text)
		}
	}
	if strings.Contains(text, ".gitmodules") {
		t.Errorf("an existing file is hidden:\n%s", text)
	}
	remove()
	if _, err := os.Stat(file); err == nil {
		t.Errorf("the excludes file outlives the session")
	}
}

// TestMergeOfTwoAgentjqs: spawn running agentjq proxy as its agent: the
// inner one merges the outer one's sandbox, and an empty list stays a
// list (claude refuses a null, and then refuses to start).
func TestMergeOfTwoAgentjqs(t *testing.T) {
	outer, _ := json.Marshal(map[string]any{"sandbox": Settings(Policy{Project: "/nonexistent"})})
	out, notes, err := Merge(string(outer), Settings(Policy{Project: "/nonexistent"}), "/p", "")
	if err != nil || len(notes) != 0 {
		t.Fatalf("%v %v", err, notes)
	}
	if strings.Contains(string(out), "null") {
		t.Errorf("a null in the merged settings: %s", out)
	}
}

// TestCachesAreOnlyCaches: whatever a tool answers, only a directory
// inside HOME that holds no control file is opened (a project's .npmrc
// with cache=/ made all of / writable).
func TestCachesAreOnlyCaches(t *testing.T) {
	h := "/home/u"
	for d, want := range map[string]bool{
		"/home/u/.cache/go-build": true, "/home/u/go/pkg/mod": true, "/home/u/.npm": true,
		"/home/u/.cargo/registry": true, "/home/u/.cache/pip": true,
		"/": false, "/home/u": false, "/home": false, "/tmp/x": false, "/etc": false,
		"/home/u/.config": false, "/home/u/.config/go": false, "/home/u/.local/bin": false,
		"/home/u/.ssh": false, "/home/u/bin": false, "/home/u/.claude": false,
		"/home/u/.bashrc": false, "/home/u/src/project": false, "/home/u/src": false, "relative": false,
		"/home/u/go/bin": false, "/home/u/.cargo/bin": false, "/home/u/.cache/../.ssh": false,
	} {
		if got := cacheDir(d, h); got != want {
			t.Errorf("cacheDir(%s) = %v, want %v", d, got, want)
		}
	}
}

// The one-pass search finds each hint wherever it stands, and nothing in
// a result without one.
func TestWatcherHints(t *testing.T) {
	for _, h := range hints {
		for _, line := range []string{h, "x" + h, strings.Repeat("read only e o n p ", 20) + h + " tail"} {
			if !hasHint([]byte(line)) {
				t.Errorf("hasHint(%q) = false", line)
			}
		}
		if cut := h[:len(h)-1]; hasHint([]byte(strings.Repeat("e o "+cut+" ", 50))) {
			t.Errorf("hasHint found %q without its last byte", h)
		}
	}
}

// npm's cache is read as npm reads it for the user: the variable, then
// the user's npmrc, then ~/.npm; a ${VAR} value is not followed.
func TestNpmCache(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{"HOME": home}
	e := Env{Getenv: func(k string) string { return env[k] }}
	if got := npmCache(e, home); got != filepath.Join(home, ".npm") {
		t.Errorf("no npmrc: %s", got)
	}
	for rc, want := range map[string]string{
		"registry=https://r.example\ncache = ~/.cache/npm\n": filepath.Join(home, ".cache/npm"),
		"cache=\"/home/x/.npm\"\n":                           "/home/x/.npm",
		"cache=${XDG_CACHE_HOME}/npm\n":                      filepath.Join(home, ".npm"),
		"; cache=/nope\n":                                    filepath.Join(home, ".npm"),
	} {
		os.WriteFile(filepath.Join(home, ".npmrc"), []byte(rc), 0o600)
		if got := npmCache(e, home); got != want {
			t.Errorf("npmrc %q: %s, want %s", rc, got, want)
		}
	}
	other := filepath.Join(home, "rc")
	os.WriteFile(other, []byte("cache=/elsewhere\n"), 0o600)
	env["npm_config_userconfig"] = other
	if got := npmCache(e, home); got != "/elsewhere" {
		t.Errorf("npm_config_userconfig: %s", got)
	}
	env["npm_config_cache"] = "/from/env"
	if got := npmCache(e, home); got != "/from/env" {
		t.Errorf("npm_config_cache: %s", got)
	}
}
