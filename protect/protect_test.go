package protect

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestRoot(t *testing.T) {
	home := "/home/u"
	for _, tc := range []struct{ abs, want string }{
		{"/p/.git/hooks/pre-commit", "/p/.git/hooks"},
		{"/p/.git/config", "/p/.git/config"},
		{"/p/.git/modules/m/hooks/x", "/p/.git/modules/m/hooks"},
		{"/p/.git/objects/ab/cd", ""},
		{"/p/vendor/x.git/config", "/p/vendor/x.git/config"},
		{"/p/sub/.git", "/p/sub/.git"},
		{"/p/.CLAUDE/settings.json", "/p/.CLAUDE"},
		{"/p/.cargo/config.toml", "/p/.cargo/config.toml"},
		{"/p/crates/a/.cargo/config", "/p/crates/a/.cargo/config"},
		{"/p/.cargo/registry/x", ""},
		{"/p/.husky/pre-commit", "/p/.husky"},
		{"/p/web/.npmrc", "/p/web/.npmrc"},
		{"/p/.mcp.json", "/p/.mcp.json"},
		{"/p/src/main.go", ""},
		{"/p/.gitignore", ""},
		{"/home/u/.ssh/authorized_keys", "/home/u/.ssh"},
		{"/home/u/.config/git/config", "/home/u/.config/git"},
		{"/home/u/.cache/go-build/x", ""},
		{"/p/con\ufb01g.toml", ""},
		{"/p/.ca\u0301rgo/config", ""},
	} {
		if got := Root(tc.abs, home); got != tc.want {
			t.Errorf("Root(%q) = %q, want %q", tc.abs, got, tc.want)
		}
	}
}

func TestPathsNamesMissingAndNested(t *testing.T) {
	p := t.TempDir()
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, ".bashrc"), nil, 0o644)
	for _, d := range []string{".git/hooks", ".git/modules/sub/hooks", "vendor/lib.git/hooks", "pkg/inner/.git/hooks", "web", "node_modules/x"} {
		if err := os.MkdirAll(filepath.Join(p, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"web/.npmrc", "node_modules/x/.npmrc", ".git/config", ".git/modules/sub/config", "vendor/lib.git/config"} {
		if err := os.WriteFile(filepath.Join(p, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(p, "crate/.cargo"), 0o755); err != nil {
		t.Fatal(err)
	}
	got := append(Paths(p), HomePaths(home)...)
	for _, want := range []string{
		p + "/.git/hooks", p + "/.git/config",
		p + "/.git/modules/sub/hooks", p + "/.git/modules/sub/config",
		p + "/vendor/lib.git/config", p + "/pkg/inner/.git/hooks",
		p + "/web/.npmrc", p + "/crate/.cargo/config.toml",
		home + "/.bashrc",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("Paths lacks %s", want)
		}
	}
	for _, not := range []string{p + "/node_modules/x/.npmrc", p + "/.git/objects", p + "/web/.cargo/config.toml"} {
		if slices.Contains(got, not) {
			t.Errorf("Paths holds %s", not)
		}
	}
}

// TestPathsOfAProjectWithoutGit: nothing missing is asked for: a
// placeholder would show in the project (a .git would make git and go see
// a broken repository, git add -A refuses any).
func TestPathsOfAProjectWithoutGit(t *testing.T) {
	p := t.TempDir()
	got := Paths(p)
	for _, g := range got {
		if strings.Contains(g, "/.git/") || strings.HasSuffix(g, "/.git") {
			t.Errorf("Paths holds %s in a project without .git", g)
		}
	}
	for _, not := range []string{p + "/.cargo", p + "/.cargo/config.toml", p + "/.npmrc", p + "/.husky", p + "/mise.toml", p + "/.claude", p + "/.bashrc"} {
		if slices.Contains(got, not) {
			t.Errorf("Paths holds %s, which does not exist and a tool reads", not)
		}
	}
}

// TestPathsFollowGit: what a repository's config points git at, a .git
// file's directory inside the project, and hooks that are links are held
// (each was written by a helper attacking the sandbox, and ran outside it).
func TestPathsFollowGit(t *testing.T) {
	p := t.TempDir()
	for _, d := range []string{".git/hooks", ".githooks-custom", "tools", "scripts", "sub/.gitreal/hooks", ".git/rebase-merge"} {
		os.MkdirAll(filepath.Join(p, d), 0o755)
	}
	os.WriteFile(filepath.Join(p, ".git/config"), []byte("[core]\n\thooksPath = .githooks-custom\n[include]\n\tpath = ../tools/git.cfg\n[includeIf \"gitdir:x\"]\n\tpath = ~/elsewhere\n"), 0o644)
	os.WriteFile(filepath.Join(p, "tools/git.cfg"), nil, 0o644)
	os.WriteFile(filepath.Join(p, "scripts/pre-commit"), nil, 0o755)
	os.Symlink("../../scripts/pre-commit", filepath.Join(p, ".git/hooks/pre-commit"))
	os.WriteFile(filepath.Join(p, "sub/.git"), []byte("gitdir: .gitreal\n"), 0o644)
	os.WriteFile(filepath.Join(p, "sub/.gitreal/config"), nil, 0o644)
	got := Paths(p)
	for _, want := range []string{p + "/.githooks-custom", p + "/tools/git.cfg", p + "/scripts/pre-commit",
		p + "/sub/.gitreal/config", p + "/sub/.gitreal/hooks", p + "/.git/rebase-merge", p + "/sub/.git"} {
		if !slices.Contains(got, want) {
			t.Errorf("Paths lacks %s: %v", want, got)
		}
	}
	if Root(p+"/.git/info/exclude", "") == "" || Root(p+"/.devcontainer/devcontainer.json", "") == "" {
		t.Errorf("Root misses .git/info or .devcontainer")
	}
}
