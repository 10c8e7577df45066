// Package protect names the agent's control files: the files that make
// code run, or widen what an agent may do, when somebody later works in
// the project (git's hooks and config, claude's settings, shell and package
// manager rc files, editor tasks). One table serves both guards: the OS
// sandbox gets them as exact paths no Bash command may write (Paths), and
// the file tools' write check asks whether a path lies in one (Root).
package protect

import (
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// dirs are protected whole, wherever they stand: claude's settings and
// commands, git's hook directory for husky, editors' tasks and settings.
var dirs = []string{".claude", ".husky", ".githooks", ".vscode", ".idea", ".zed", ".devcontainer",
	".cursor", ".gemini", ".codex"}

// files are protected wherever they stand: shell start-up files, the
// rc files of git, package managers and downloaders, claude's own and its
// MCP servers, direnv's and mise's (run on cd), and the hook runners that
// a commit starts (pre-commit, lefthook).
var files = []string{
	".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile",
	".zshrc", ".zshenv", ".zprofile", ".zlogin", ".zlogout", ".kshrc",
	".mkshrc", ".cshrc", ".tcshrc", ".login", ".inputrc", ".envrc",
	".gitconfig", ".mcp.json", ".claude.json",
	".npmrc", ".yarnrc", ".yarnrc.yml", ".pnpmfile.cjs", "bunfig.toml", ".bunfig.toml",
	".pypirc", "pip.conf", ".curlrc", ".wgetrc", ".netrc",
	"mise.toml", ".mise.toml", ".tool-versions", ".pre-commit-config.yaml", "lefthook.yml", ".lefthook.yml",
	"lefthook.yaml", ".lefthook.yaml", ".bash_aliases", ".ripgreprc", ".bazelrc", ".pnp.cjs", ".pnp.loader.mjs",
	".nvim.lua", ".exrc", ".gitattributes", ".gitmodules",
}

// suffixes are protected wherever they stand: cargo reads
// .cargo/config.toml in every directory above the one it builds in, and
// its build.rustc-wrapper names a program to run.
var suffixes = [][]string{{".cargo", "config"}, {".cargo", "config.toml"}}

// gitFiles are the entries of a git directory (.git, a bare x.git, or one
// below .git/modules or .git/worktrees) that name programs git runs, or
// that git acts on when asked to go on (a planted rebase's exec lines).
var gitFiles = []string{"config", "hooks", "commondir", "config.worktree", "info", "rebase-merge", "rebase-apply"}

// homeDirs are protected below HOME: configuration that names programs to
// run (git, fish, systemd, autostart, go's env file) and ssh's keys and
// config.
var homeDirs = []string{".config/git", ".config/fish", ".config/nushell", ".config/powershell",
	".ssh", ".config/systemd", ".config/autostart", ".config/go", ".config/pip"}

// Root returns the protected file or directory that abs (a clean absolute
// path) lies in, or "". Names are compared as a case-insensitive
// filesystem compares them (Fold): on macOS .CLAUDE/settings.json is
// claude's settings.
func Root(abs, home string) string {
	segs := split(abs)
	for i, s := range segs {
		upto := "/" + strings.Join(segs[:i+1], "/")
		f := Fold(s)
		switch {
		case in(dirs, f) || in(files, f):
			return upto
		case f == ".git" && i+1 == len(segs):
			return upto // a .git file names the repository git uses
		case f == ".git" || strings.HasSuffix(f, ".git"):
			for j := i + 1; j < len(segs); j++ {
				if in(gitFiles, Fold(segs[j])) {
					return "/" + strings.Join(segs[:j+1], "/")
				}
			}
		}
		for _, suf := range suffixes {
			if i+len(suf) <= len(segs) && sameNames(segs[i:i+len(suf)], suf) {
				return "/" + strings.Join(segs[:i+len(suf)], "/")
			}
		}
	}
	if home == "" {
		return ""
	}
	hs := split(filepath.Clean(home))
	for _, d := range homeDirs {
		root := append(hs[:len(hs):len(hs)], split(d)...)
		if len(segs) >= len(root) && sameNames(segs[:len(root)], root) {
			return "/" + strings.Join(segs[:len(root)], "/")
		}
	}
	return ""
}

// Child returns a protected entry directly inside dir that exists, for a
// write that reaches everything below dir (a copy onto it, rm -r).
func Child(dir string) string {
	for _, group := range [][]string{dirs, files, {".git"}} {
		for _, n := range group {
			p := filepath.Join(dir, n)
			if _, err := os.Lstat(p); err == nil {
				return p
			}
		}
	}
	return ""
}

// maxScan bounds the directories Paths reads looking for nested
// repositories and rc files below the project: a huge tree is not read
// whole at every session start.
const maxScan = 20000

// Paths returns the exact paths a sandboxed command must not write in
// dir: every protected name directly in dir that exists, and the
// protected entries that exist deeper (nested and bare repositories,
// submodules, rc files and .cargo/config in subdirectories), read up to
// maxScan directories. The sandbox on Linux binds exact paths only: glob
// patterns are not enforced there, hence the walk. A protected file made
// later in a new subdirectory is not held; the file tools still refuse
// it.
func Paths(dir string) []string {
	out := top(dir)
	seen := map[string]bool{}
	for _, p := range out {
		seen[p] = true
	}
	for _, p := range scan(dir) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// HomePaths returns the protected paths of HOME: its rc files and
// control files, and the configuration directories of homeDirs. They
// matter where HOME is writable to the sandbox (a session run in HOME).
func HomePaths(home string) []string {
	out := top(home)
	for _, d := range homeDirs {
		if p := filepath.Join(home, d); exists(p) {
			out = append(out, p)
		}
	}
	return out
}

// top is every protected name directly in dir that exists. A missing one
// is not asked for: bubblewrap would hold it with a placeholder (an empty
// character device) that every command sees in the project, and that
// tools reading it or walking the tree refuse (git add -A: "can only add
// regular files"; a placeholder .npmrc or .git/commondir: "Permission
// denied").
func top(dir string) []string {
	var out []string
	add := func(p string) {
		if exists(p) {
			out = append(out, p)
		}
	}
	for _, group := range [][]string{dirs, files} {
		for _, n := range group {
			add(filepath.Join(dir, n))
		}
	}
	for _, suf := range suffixes {
		add(filepath.Join(append([]string{dir}, suf...)...))
	}
	for _, g := range gitFiles {
		add(filepath.Join(dir, ".git", g))
	}
	if fi, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
		if fi.IsDir() {
			out = append(out, configRefs(filepath.Join(dir, ".git"))...)
			if ents, err := os.ReadDir(filepath.Join(dir, ".git", "hooks")); err == nil {
				for _, e := range ents {
					out = append(out, linkTarget(filepath.Join(dir, ".git", "hooks", e.Name()))...)
				}
			}
		} else if gd := gitfileDir(filepath.Join(dir, ".git"), dir); gd != "" {
			out = append(out, gitDirPaths(gd)...)
		}
	}
	var links []string
	for _, p := range out {
		links = append(links, linkTarget(p)...)
	}
	return append(out, links...)
}

// scan walks dir breadth first for the protected entries that exist below
// its top level, and for the git directories in it (their config and
// hooks).
func scan(dir string) []string {
	var out []string
	queue := []string{dir}
	for n := 0; len(queue) > 0 && n < maxScan; n++ {
		d := queue[0]
		queue = queue[1:]
		ents, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range ents {
			p := filepath.Join(d, e.Name())
			f := Fold(e.Name())
			isGit := f == ".git" || strings.HasSuffix(f, ".git")
			switch {
			case isGit && e.IsDir():
				out = append(out, gitDirPaths(p)...)
				continue // a repository's objects hold nothing else to find
			case d == dir:
			case f == ".git":
				out = append(out, p)
				if gd := gitfileDir(p, dir); gd != "" {
					out = append(out, gitDirPaths(gd)...)
				}
			case in(dirs, f) || in(files, f):
				out = append(out, p)
			case f == ".cargo" && e.IsDir():
				for _, suf := range suffixes {
					out = append(out, filepath.Join(d, suf[0], suf[1]))
				}
			}
			if e.IsDir() && f != "node_modules" {
				queue = append(queue, p)
			}
		}
	}
	return out
}

// gitDirPaths are the protected entries of the git directory gd that
// exist, those of the ones git keeps below it for submodules and
// worktrees, what its config points git at (core.hooksPath, include and
// includeIf paths), and the targets of its hooks that are links.
func gitDirPaths(gd string) []string {
	var out []string
	for _, g := range gitFiles {
		if p := filepath.Join(gd, g); exists(p) {
			out = append(out, p)
		}
	}
	out = append(out, configRefs(gd)...)
	if ents, err := os.ReadDir(filepath.Join(gd, "hooks")); err == nil {
		for _, e := range ents {
			out = append(out, linkTarget(filepath.Join(gd, "hooks", e.Name()))...)
		}
	}
	out = append(out, linkTarget(filepath.Join(gd, "config"))...)
	for _, sub := range []string{"modules", "worktrees"} {
		ents, err := os.ReadDir(filepath.Join(gd, sub))
		if err != nil {
			continue
		}
		for _, e := range ents {
			if e.IsDir() {
				out = append(out, gitDirPaths(filepath.Join(gd, sub, e.Name()))...)
			}
		}
	}
	return out
}

// configRefs are the paths git's config in gd makes git read or run:
// core.hooksPath (relative to the work tree above gd), and include.path
// and includeIf.*.path (relative to the config's directory). Read plainly,
// line by line: a value is taken as written, quotes and ~/ aside.
func configRefs(gd string) []string {
	b, err := os.ReadFile(filepath.Join(gd, "config"))
	if err != nil {
		return nil
	}
	var out []string
	section := ""
	for _, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "[") {
			section = strings.ToLower(strings.Fields(strings.Trim(l, "[]") + " ")[0])
			continue
		}
		k, v, ok := strings.Cut(l, "=")
		if !ok {
			continue
		}
		k, v = strings.ToLower(strings.TrimSpace(k)), strings.Trim(strings.TrimSpace(v), `"`)
		base := ""
		switch {
		case section == "core" && k == "hookspath":
			base = filepath.Dir(gd)
		case (section == "include" || section == "includeif") && k == "path":
			base = gd
		default:
			continue
		}
		if v == "" || strings.HasPrefix(v, "~") {
			continue // below HOME, which the sandbox holds whole
		}
		if !filepath.IsAbs(v) {
			v = filepath.Join(base, v)
		}
		if exists(v) {
			out = append(out, filepath.Clean(v))
		}
	}
	return out
}

// linkTarget is the file a link at p resolves to, when p is a link.
func linkTarget(p string) []string {
	if fi, err := os.Lstat(p); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		return nil
	}
	if t, err := filepath.EvalSymlinks(p); err == nil {
		return []string{t}
	}
	return nil
}

// gitfileDir is the git directory a .git file names (gitdir: X), when it
// lies inside dir: git reads its config and runs its hooks.
func gitfileDir(gitfile, dir string) string {
	b, err := os.ReadFile(gitfile)
	if err != nil {
		return ""
	}
	v, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if !ok {
		return ""
	}
	v = strings.TrimSpace(v)
	if !filepath.IsAbs(v) {
		v = filepath.Join(filepath.Dir(gitfile), v)
	}
	v = filepath.Clean(v)
	if rel, err := filepath.Rel(dir, v); err != nil || strings.HasPrefix(rel, "..") || !exists(v) {
		return ""
	}
	return v
}

// Fold is the name a case-insensitive filesystem takes s for, the same for
// every spelling it takes for one: Unicode's canonical caseless form,
// NFD(fold(NFD(s))) with full case folding, as APFS (macOS) compares
// names. .ENV and .env, ſh and sh, ßh and ssh, con\ufb01g (the fi
// ligature) and config, café composed and decomposed all fold alike.
// ASCII letters fold to lower case; glob syntax is left as it is.
func Fold(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return norm.NFD.String(cases.Fold().String(norm.NFD.String(s)))
		}
	}
	return strings.ToLower(s)
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

func in(list []string, folded string) bool {
	for _, n := range list {
		if n == folded {
			return true
		}
	}
	return false
}

func split(p string) []string {
	var out []string
	for _, s := range strings.Split(p, "/") {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

func sameNames(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] && Fold(a[i]) != Fold(b[i]) {
			return false
		}
	}
	return true
}
