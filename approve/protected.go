package approve

import (
	"path/filepath"
	"strings"

	"github.com/agentjq/agentjq/protect"
)

// The agent's own control files make code run or widen what the agent may
// do: its settings (.claude/**, ~/.claude/**, .mcp.json), git's config and
// hooks, and the shell's rc files. A write to one by a file tool (Edit,
// Write, MultiEdit, NotebookEdit) is denied, whoever would allow it, unless
// an allow rule names the file explicitly (a Bash command's writes to them
// fail in the sandbox, protect.Paths):
// its literal part (before any wildcard) reaches into the protected file or
// directory. Edit(**) does not name .claude/settings.json;
// Edit(.claude/settings.local.json) and Edit(.claude/**) do.

// protectedRoot returns the protected file or directory a path is in, or
// "" (protect.Root: the one list the sandbox holds too).
func protectedRoot(abs, home string) string { return protect.Root(abs, home) }

// protectedChild returns a protected file or directory directly inside
// dir, when a write names dir itself.
func protectedChild(dir string) string {
	if !isDir(dir) {
		return ""
	}
	return protect.Child(dir)
}

// protectedUnit denies the first write to a protected file no allow rule
// names explicitly.
func (rs *RuleSet) protectedUnit(units []*unit) *ruleOutcome {
	for _, u := range units {
		if u.target == nil || !editTools[u.tool] {
			continue
		}
		if u.target.unknown {
			continue // not allowed anyway
		}
		for _, rd := range u.target.readings {
			root := protectedRoot(rd.abs, rs.home)
			if root == "" {
				root = protectedChild(rd.abs)
			}
			if root == "" {
				root = heldRoot(rd.abs, rs.held)
			}
			if root == "" || rs.namesExplicitly(u, rd, root) {
				continue
			}
			return &ruleOutcome{behavior: "deny", protected: root, unit: u.text}
		}
	}
	return nil
}

// namesExplicitly reports whether an allow rule for writes matches the
// reading with the protected root inside its literal part.
func (rs *RuleSet) namesExplicitly(u *unit, rd reading, root string) bool {
	for _, r := range rs.allow {
		if r.path == nil || !r.coversTool("Write") && !r.coversTool(u.tool) {
			continue
		}
		if !editTools[r.tool] || !r.path.matchReading(rd) {
			continue
		}
		if r.path.literalReaches(rd, root) {
			return true
		}
	}
	return false
}

// literalReaches reports whether the pattern's leading literal segments,
// anchored as the pattern is, reach into root (name it or a path below it).
func (p *pathPattern) literalReaches(rd reading, root string) bool {
	var lit []string
	for _, s := range p.segs {
		if strings.ContainsAny(s, "*?[") {
			break
		}
		lit = append(lit, s)
	}
	if p.floating {
		return len(lit) == 1 && lit[0] == filepath.Base(root)
	}
	bases := p.bases
	if bases == nil {
		bases = []string{rd.cwd}
	}
	for _, b := range bases {
		l := filepath.Join(append([]string{b}, lit...)...)
		if l == root || strings.HasPrefix(l, root+"/") {
			return true
		}
	}
	return false
}

// heldRoot returns the path of held that abs is or lies below: what the
// sandbox holds for this session beyond the names protect knows (the
// target of a hook or config that is a link, core.hooksPath, an included
// config file).
func heldRoot(abs string, held []string) string {
	for _, h := range held {
		if abs == h || strings.HasPrefix(abs, h+"/") {
			return h
		}
	}
	return ""
}

// SetHeld gives the chain the paths the session's sandbox holds, so the
// file tools, which run outside it, refuse to write them as well.
func (c *Chain) SetHeld(paths []string) {
	c.held = paths
	if c.rules != nil {
		c.rules.held = paths
	}
}
