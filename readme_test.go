package main

// The README's examples are run against the built binary and their output
// checked, as gojq's CI checks its README. Commands that run the agent use
// the real claude CLI against the scripted Messages API.
//
// A ```console block holds commands ("$ " lines; a heredoc continues to its
// terminator) each followed by its expected output. AGENTJQ_UPDATE=1
// rewrites the outputs in README.md.

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentjq/agentjq/internal/testkit/apistub"
	"github.com/agentjq/agentjq/internal/testkit/livetest"
)

type example struct {
	cmd       string
	want      string
	wantStart int // byte offsets of the expected output in README.md
	wantEnd   int
}

// readmeExamples parses the console blocks of a README.
func readmeExamples(readme string) []example {
	var out []example
	lines := strings.SplitAfter(readme, "\n")
	offset := 0
	inBlock := false
	var cur *example
	heredoc := ""
	flush := func(at int) {
		if cur != nil {
			cur.wantEnd = at
			cur.want = readme[cur.wantStart:cur.wantEnd]
			out = append(out, *cur)
			cur = nil
		}
	}
	for _, l := range lines {
		start := offset
		offset += len(l)
		trimmed := strings.TrimRight(l, "\n")
		switch {
		case !inBlock && trimmed == "```console":
			inBlock = true
		case inBlock && heredoc != "":
			cur.cmd += l
			if trimmed == heredoc {
				heredoc = ""
				cur.wantStart = offset
			}
		case inBlock && trimmed == "```":
			flush(start)
			inBlock = false
		case inBlock && strings.HasPrefix(trimmed, "$ "):
			flush(start)
			cur = &example{cmd: strings.TrimPrefix(l, "$ "), wantStart: offset}
			if i := strings.Index(trimmed, "<<'"); i >= 0 {
				heredoc = strings.TrimSuffix(trimmed[i+3:], "'")
			}
		}
	}
	return out
}

func TestReadmeExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs the agent")
	}
	readmeBytes, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(readmeBytes)
	examples := readmeExamples(readme)
	if len(examples) < 10 {
		t.Fatalf("found %d examples in README.md", len(examples))
	}
	claude := livetest.Claude(t)
	api := apistub.Start(t)
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "agentjq"), ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if err := os.Symlink(claude, filepath.Join(bin, "claude")); err != nil {
		t.Fatal(err)
	}
	work := livetest.Workdir(t)
	root, _ := os.Getwd()
	for _, d := range []string{"fixtures", "examples", "scripts"} {
		if err := os.Symlink(filepath.Join(root, d), filepath.Join(work, d)); err != nil {
			t.Fatal(err)
		}
	}
	env := livetest.Env(t, api.URL())
	// scripts/tour.sh builds agentjq: with this go's caches, not the
	// fresh HOME's.
	for _, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOFLAGS", "GOTOOLCHAIN"} {
		if v, err := exec.Command("go", "env", k).Output(); err == nil && len(bytes.TrimSpace(v)) > 0 {
			env = append(env, k+"="+string(bytes.TrimSpace(v)))
		}
	}
	for i, kv := range env {
		if strings.HasPrefix(kv, "PATH=") {
			env[i] = "PATH=" + bin + string(os.PathListSeparator) + strings.TrimPrefix(kv, "PATH=")
		}
	}
	update := os.Getenv("AGENTJQ_UPDATE") == "1"
	var rewritten strings.Builder
	last := 0
	for _, ex := range examples {
		cmd := exec.Command("bash", "-c", ex.cmd)
		cmd.Dir = work
		cmd.Env = env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		done := make(chan error, 1)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { done <- cmd.Wait() }()
		select {
		case err = <-done:
		case <-time.After(90 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("%s: still running after 90s", strings.TrimSpace(ex.cmd))
		}
		got := stdout.String()
		if err != nil {
			t.Errorf("%s: %v\nstderr: %s", strings.TrimSpace(ex.cmd), err, stderr.String())
		}
		if got != ex.want && !update {
			t.Errorf("$ %s\ngot:\n%s\nwant:\n%s\nstderr: %s", strings.TrimSpace(ex.cmd), got, ex.want, stderr.String())
		}
		rewritten.WriteString(readme[last:ex.wantStart])
		rewritten.WriteString(got)
		last = ex.wantEnd
	}
	rewritten.WriteString(readme[last:])
	if update && rewritten.String() != readme {
		if err := os.WriteFile("README.md", []byte(rewritten.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Log("README.md outputs rewritten")
	}
}

func TestReadmeParser(t *testing.T) {
	ex := readmeExamples("text\n```console\n$ echo a\na\n$ cat > f <<'EOF'\nx\nEOF\n$ cat f\nx\n```\n```sh\n$ not run\n```\n")
	if len(ex) != 3 || ex[0].cmd != "echo a\n" || ex[0].want != "a\n" || ex[1].cmd != "cat > f <<'EOF'\nx\nEOF\n" || ex[1].want != "" || ex[2].want != "x\n" {
		t.Fatalf("parsed %+v", ex)
	}
}

// TestDocsSayWhatIsABoundary: the README's policy section and the first
// section of agentjq-policy(5) say what is enforced and what is matched.
func TestDocsSayWhatIsABoundary(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"**What is enforced and what is matched.**", "held by Claude Code's own OS sandbox", "a Bash deny rule is not a\nboundary against a program you allow that runs arbitrary code", "`bubblewrap` and\n`socat`"} {
		if !strings.Contains(string(readme), want) {
			t.Errorf("README.md lacks %q", want)
		}
	}
	page, err := os.ReadFile("man/agentjq-policy.5")
	if err != nil {
		t.Fatal(err)
	}
	text := string(page)
	first := strings.Index(text, `.SH "WHAT IS ENFORCED AND WHAT IS MATCHED"`)
	desc := strings.Index(text, ".SH DESCRIPTION")
	if first < 0 || desc < 0 || first > desc || strings.Index(text, ".SH SYNOPSIS") > first {
		t.Fatalf("agentjq-policy(5) does not open with WHAT IS ENFORCED AND WHAT IS MATCHED after its synopsis")
	}
	section := text[first:desc]
	for _, want := range []string{"The sandbox is the boundary", "Rules state intent, and are matched, not enforced", "not", "The file tools are checked by path rules"} {
		if !strings.Contains(section, want) {
			t.Errorf("the section lacks %q", want)
		}
	}
}
