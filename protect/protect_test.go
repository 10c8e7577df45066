package protect

import (
	"os"
	"path/filepath"
	"slices"
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
	for _, d := range []string{".git/hooks", ".git/modules/sub/hooks", "vendor/lib.git/hooks", "pkg/inner/.git", "web", "node_modules/x"} {
		if err := os.MkdirAll(filepath.Join(p, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"web/.npmrc", "node_modules/x/.npmrc"} {
		if err := os.WriteFile(filepath.Join(p, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := Paths(p, home)
	for _, want := range []string{
		p + "/.git/hooks", p + "/.git/config", p + "/.claude", p + "/.mcp.json",
		p + "/.cargo/config.toml", // missing: held so it cannot be made
		p + "/.git/modules/sub/hooks", p + "/.git/modules/sub/config",
		p + "/vendor/lib.git/config", p + "/pkg/inner/.git/hooks",
		p + "/web/.npmrc", p + "/web/.cargo/config.toml",
		home + "/.bashrc", home + "/.ssh", home + "/.claude", home + "/.gitconfig",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("Paths lacks %s", want)
		}
	}
	for _, not := range []string{p + "/node_modules/x/.npmrc", p + "/.git/objects"} {
		if slices.Contains(got, not) {
			t.Errorf("Paths holds %s", not)
		}
	}
}
