package sandbox

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// placeholders are the names Claude Code's sandbox holds in the project
// even when they are missing (its own defaults, read from 2.1.328 and
// 2.1.332): while a command runs, a missing one is an empty character
// device there, which git add -A and git add . refuse ("can only add
// regular files, symbolic links or git-directories").
var placeholders = []string{".gitconfig", ".gitmodules", ".bashrc", ".bash_profile", ".zshrc", ".zprofile",
	".profile", ".ripgreprc", ".mcp.json", ".vscode", ".idea",
	".claude/agents", ".claude/commands", ".claude/hooks", ".claude/launch.json", ".claude/loop.md",
	".claude/output-styles", ".claude/routines", ".claude/scheduled_tasks.json", ".claude/settings.json",
	".claude/settings.local.json", ".claude/skills", ".claude/workflows"}

// GitExcludes hides the sandbox's placeholders from the git the agent's
// commands run, so that git add -A works in a sandboxed session: it writes
// an excludes file (the user's own global excludes, then the placeholders
// missing from project) and returns the environment that makes git read
// it (GIT_CONFIG_COUNT, after any the user set), and what removes it.
// Nothing is hidden that exists when the session starts, and nothing of
// the user's git configuration changes.
func GitExcludes(project string, getenv func(string) string) (env []string, remove func()) {
	var missing []string
	_, err := os.Lstat(filepath.Join(project, ".claude"))
	noClaude := err != nil
	if noClaude {
		// claude makes .claude itself (.claude/.cc-writes): all that is
		// in it during the session is its own, and placeholders.
		missing = append(missing, "**/.claude/")
	}
	for _, n := range placeholders {
		if noClaude && strings.HasPrefix(n, ".claude/") {
			continue
		}
		if _, err := os.Lstat(filepath.Join(project, n)); err != nil {
			missing = append(missing, "**/"+n)
		}
	}
	if len(missing) == 0 {
		return nil, func() {}
	}
	dir, err := os.MkdirTemp("", "agentjq-git-")
	if err != nil {
		return nil, func() {}
	}
	remove = func() { os.RemoveAll(dir) }
	own, _ := os.ReadFile(userExcludes(getenv))
	text := string(own) + "\n# agentjq: the sandbox's placeholders for missing files\n" + strings.Join(missing, "\n") + "\n"
	file := filepath.Join(dir, "ignore")
	if os.WriteFile(file, []byte(text), 0o644) != nil {
		remove()
		return nil, func() {}
	}
	n, _ := strconv.Atoi(getenv("GIT_CONFIG_COUNT"))
	return []string{
		"GIT_CONFIG_KEY_" + strconv.Itoa(n) + "=core.excludesFile",
		"GIT_CONFIG_VALUE_" + strconv.Itoa(n) + "=" + file,
		"GIT_CONFIG_COUNT=" + strconv.Itoa(n+1),
	}, remove
}

// userExcludes is the global excludes file git reads by default: the
// core.excludesFile of ~/.gitconfig, else $XDG_CONFIG_HOME/git/ignore.
func userExcludes(getenv func(string) string) string {
	home := getenv("HOME")
	if b, err := os.ReadFile(filepath.Join(home, ".gitconfig")); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			k, v, ok := strings.Cut(strings.TrimSpace(l), "=")
			if ok && strings.EqualFold(strings.TrimSpace(k), "excludesfile") {
				v = strings.Trim(strings.TrimSpace(v), `"`)
				if rest, ok := strings.CutPrefix(v, "~/"); ok {
					v = filepath.Join(home, rest)
				}
				return v
			}
		}
	}
	xdg := getenv("XDG_CONFIG_HOME")
	if xdg == "" {
		xdg = filepath.Join(home, ".config")
	}
	return filepath.Join(xdg, "git", "ignore")
}
