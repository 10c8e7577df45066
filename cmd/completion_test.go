package cmd

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentjq/agentjq/internal/testkit/livetest"
	"github.com/agentjq/agentjq/iostreams"
)

func completionScript(t *testing.T, shell string) string {
	t.Helper()
	ios, _, out, errOut := iostreams.Test()
	if code := Main([]string{"completion", shell}, ios); code != 0 || errOut.Len() > 0 {
		t.Fatalf("completion %s: exit %d: %s", shell, code, errOut)
	}
	return out.String()
}

// runShell runs a shell with a bound on time.
func runShell(t *testing.T, dir string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, errb.String())
	}
	return out.String()
}

func TestCompletionSyntax(t *testing.T) {
	t.Parallel()
	livetest.SkipShort(t, "runs bash, zsh and fish")
	dir := t.TempDir()
	for _, shell := range []string{"bash", "zsh", "fish"} {
		t.Run(shell, func(t *testing.T) {
			if _, err := exec.LookPath(shell); err != nil {
				t.Skipf("%s not installed", shell)
			}
			f := filepath.Join(dir, "agentjq."+shell)
			if err := os.WriteFile(f, []byte(completionScript(t, shell)), 0o644); err != nil {
				t.Fatal(err)
			}
			runShell(t, dir, shell, "-n", f)
		})
	}
	ios, _, _, errOut := iostreams.Test()
	if code := Main([]string{"completion", "tcsh"}, ios); code != 2 {
		t.Errorf("completion tcsh: exit %d, want 2 (%s)", code, errOut)
	}
}

// TestBashCompletion sources the script in bash and calls the function
// as readline would, with COMP_WORDS set.
func TestBashCompletion(t *testing.T) {
	t.Parallel()
	livetest.SkipShort(t, "runs bash")
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not installed")
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "agentjq.bash")
	if err := os.WriteFile(script, []byte(completionScript(t, "bash")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "rules.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		words string // the words of the line; the last is the one completed
		want  string // COMPREPLY, space-joined and sorted
	}{
		{"agentjq sp", "spawn"},
		{"agentjq re", "record replay"},
		{"agentjq ''", "acp approve attach call completion filter man proxy record replay serve spawn version"},
		{"agentjq spawn --agent ''", "claude context"},
		{"agentjq spawn --agent = c", "claude context"},
		{"agentjq record -o x.rec --agent c", "claude context"},
		{"agentjq spawn --approver-format h", "hook"},
		{"agentjq spawn --no-pro", "--no-prompt"},
		{"agentjq spawn --policy ru", "rules.json"},
		{"agentjq spawn -p hello --ti", "--timeout"},
		{"agentjq spawn -- --ti", ""},
		{"agentjq approve t", "test"},
		{"agentjq approve --approver-format c", "control"},
		{"agentjq approve test --exp", "--expect"},
		{"agentjq man pol", "policy"},
		{"agentjq man pro", "protocol proxy"},
		{"agentjq completion ''", "bash fish zsh"},
		{"agentjq filter --col", "--color --color-output"},
		{"agentjq filter --color ''", "always auto never"},
		{"agentjq filter --arg x y --sl", "--slurp --slurpfile"},
		{"agentjq replay --as", "--as-agent"},
	}
	var prog strings.Builder
	prog.WriteString("source " + script + "\n")
	for _, tt := range tests {
		prog.WriteString("COMP_WORDS=(" + tt.words + "); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _agentjq\n")
		prog.WriteString("printf '%s\\n' \"${COMPREPLY[@]}\" | sort | tr '\\n' ' '; echo\n")
	}
	out := runShell(t, dir, "bash", "--norc", "--noprofile", "-c", prog.String())
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(tests) {
		t.Fatalf("%d result lines for %d cases:\n%s", len(lines), len(tests), out)
	}
	for i, tt := range tests {
		if got := strings.TrimSpace(lines[i]); got != tt.want {
			t.Errorf("%s<TAB>: %q, want %q", tt.words, got, tt.want)
		}
	}
}

// TestFishCompletion asks fish itself (complete -C) when it is installed.
func TestFishCompletion(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("fish"); err != nil {
		t.Skip("fish not installed")
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "agentjq.fish")
	if err := os.WriteFile(script, []byte(completionScript(t, "fish")), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ line, want string }{
		{"agentjq sp", "spawn"},
		{"agentjq spawn --agent ", "claude context"},
		{"agentjq approve t", "test"},
		{"agentjq man proto", "protocol"},
	}
	for _, tt := range tests {
		out := runShell(t, dir, "fish", "--no-config", "-c", "source "+script+"; complete -C '"+tt.line+"'")
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			w, _, _ := strings.Cut(l, "\t")
			got = append(got, w)
		}
		if strings.Join(got, " ") != tt.want {
			t.Errorf("fish %q: %q, want %q", tt.line, got, tt.want)
		}
	}
}
