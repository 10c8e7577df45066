package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentjq/agentjq/fixtures"
	"github.com/agentjq/agentjq/internal/transcript"
	"github.com/agentjq/agentjq/iostreams"
)

// copyTree copies the folder src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if fi.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestFilterProject: --project finds the current project's transcripts
// under HOME's .claude (or CLAUDE_CONFIG_DIR), --project=DIR another
// project's, for --view and for a program; a project with none is a
// usage error that names it.
func TestFilterProject(t *testing.T) {
	t.Parallel()
	src := filepath.Join(fixtures.Dir(), "transcripts", "claude-code-2.1.332", "projects", "-home-user-project")
	home := t.TempDir()
	project := filepath.Join(t.TempDir(), "my_project.v2")
	if err := os.Mkdir(project, 0o755); err != nil {
		t.Fatal(err)
	}
	project, _ = filepath.EvalSymlinks(project)
	copyTree(t, src, filepath.Join(home, ".claude", "projects", transcript.ProjectSlug(project)))
	run := func(env []string, dir string, args ...string) (int, string, string) {
		ios, _, out, errb := iostreams.Test()
		ios.Environ, ios.Dir = env, dir
		code := Main(append([]string{"filter"}, args...), ios)
		return code, out.String(), errb.String()
	}
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
	code, out, errs := run(env, project, "--view", "--project")
	if code != 0 || strings.Count(out, "● session ") != 6 || strings.Contains(out, "· queue-operation") {
		t.Errorf("--project --view: exit %d\n%s\nstderr: %s", code, out, errs)
	}
	code, out, errs = run(env, t.TempDir(), "-n", "-c", "daily_report | .totals.totalTokens", "--project="+project)
	if code != 0 || out != "635\n" {
		t.Errorf("--project=DIR daily_report: exit %d %q %s", code, out, errs)
	}
	config := filepath.Join(t.TempDir(), "conf")
	copyTree(t, filepath.Join(home, ".claude"), config)
	code, out, _ = run([]string{"HOME=/nonexistent", "CLAUDE_CONFIG_DIR=" + config}, project, "-c", "select(.type == \"user\") | .message.content | strings", "--project")
	if code != 0 || !strings.HasPrefix(out, "\"HELLO there\"\n\"do the CHAIN\"\n") {
		t.Errorf("CLAUDE_CONFIG_DIR: exit %d %q", code, out)
	}
	code, _, errs = run(env, t.TempDir(), "--view", "--project")
	if code != 2 || !strings.Contains(errs, "--project: no transcripts of ") {
		t.Errorf("no transcripts: exit %d: %s", code, errs)
	}
}

// TestProjectSlug: claude's escaping, checked against its own code run
// in node (every non-ASCII-alphanumeric UTF-16 unit a "-"; past 200, a
// cut and a hash).
func TestProjectSlug(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"/home/user/project": "-home-user-project",
		"/tmp/my_project.v2": "-tmp-my-project-v2",
		"/x/😀é":              "-x----",
		"/a/" + strings.Repeat("b", 250) + "/é😀": "-a-" + strings.Repeat("b", 197) + "-rn7vx6",
	} {
		if got := transcript.ProjectSlug(in); got != want {
			t.Errorf("ProjectSlug(%q) = %q, want %q", in, got, want)
		}
	}
}
