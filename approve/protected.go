package approve

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentjq/agentjq/internal/protocol"
)

// protectWithoutRules denies a write to a control file when the chain has
// no rules files (jq policies and approvers never make such a write
// allowed).
func protectWithoutRules(rs *RuleSet, req *Request, shell []string, home string) (Verdict, bool) {
	if rs != nil {
		return Verdict{}, false // the rules protect
	}
	v := NewRuleSet(nil, home).decideAt(req, shell)
	return v, v.Rule == protectedRule
}

// protectRewrite holds an allow's rewritten input, which is what runs, to
// the same protection; it returns the request as it will run.
func protectRewrite(rs *RuleSet, req *Request, v Verdict, shell []string, home string) (Verdict, *Request) {
	if v.Behavior != protocol.Allow || bytes.Equal(v.UpdatedInput, req.Input) || req.IsQuestion() {
		return v, req
	}
	r := *req
	r.Input = v.UpdatedInput
	if rs == nil {
		rs = NewRuleSet(nil, home)
	}
	if p := rs.decideAt(&r, shell); p.Rule == protectedRule {
		return p, req
	}
	// What runs is the rewrite, so the rules' denies and asks hold for
	// it as they would have for the call itself: an allow by a later
	// policy (a jq policy, the approver) cannot carry a call the rules
	// deny, nor one they want a person to approve, which nobody asked.
	if o := rs.evaluateAt(&r, shell); o.behavior == protocol.Deny || o.behavior == protocol.Ask {
		return Verdict{Behavior: protocol.Deny, Source: protocol.ByRules, Rule: o.rule.where(),
			Message: fmt.Sprintf("agentjq: %s allowed the call with a changed input, but policy rule %s (%s) %s `%s`, so it was denied.",
				answerSource(v), o.rule.text, o.rule.pos, map[string]string{protocol.Deny: "denies", protocol.Ask: "requires approval for"}[o.behavior], clip(o.unit, 200))}, req
	}
	return v, &r
}

// The agent's own control files make code run or widen what the agent may
// do: its settings (.claude/**, ~/.claude/**, .mcp.json), git's config and
// hooks, and the shell's rc files. A write to one (Edit, Write, MultiEdit,
// NotebookEdit, a Bash redirection or file-writing command) is denied,
// whoever would allow it, unless an allow rule names the file explicitly:
// its literal part (before any wildcard) reaches into the protected file or
// directory. Edit(**) does not name .claude/settings.json;
// Edit(.claude/settings.local.json) and Edit(.claude/**) do.

// rcFiles are shell start-up files, protected wherever they are.
var rcFiles = map[string]bool{
	".bashrc": true, ".bash_profile": true, ".bash_login": true, ".bash_logout": true, ".profile": true,
	".zshrc": true, ".zshenv": true, ".zprofile": true, ".zlogin": true, ".zlogout": true, ".kshrc": true,
	".mkshrc": true, ".cshrc": true, ".tcshrc": true, ".login": true, ".inputrc": true, ".envrc": true,
	".gitconfig": true, ".mcp.json": true, ".npmrc": true, ".yarnrc": true, ".yarnrc.yml": true,
	".curlrc": true, ".wgetrc": true, ".netrc": true,
	".claude.json": true, // Claude Code's own: mcpServers, each project's allowedTools
}

// protectedRoot returns the protected file or directory a path is in, or
// "". Names are compared as a case-insensitive filesystem compares them
// (foldLower): there .CLAUDE/settings.json is claude's settings.
func protectedRoot(abs, home string) string {
	segs := splitPath(abs)
	for i, s := range segs {
		upto := "/" + strings.Join(segs[:i+1], "/")
		f := foldLower(s)
		switch {
		case f == ".claude":
			return upto
		case f == ".git" && i+1 == len(segs):
			return upto // a .git file names the repository git uses
		case f == ".git":
			// config and hooks at any depth: .git/config,
			// .git/modules/x/hooks, .git/worktrees/w/config.
			for j := i + 1; j < len(segs); j++ {
				// commondir names where git reads config and hooks;
				// config.worktree is read as config.
				if g := foldLower(segs[j]); g == "config" || g == "hooks" || g == "commondir" || g == "config.worktree" {
					return "/" + strings.Join(segs[:j+1], "/")
				}
			}
		case rcFiles[f]:
			return upto
		}
	}
	if home != "" {
		hs := splitPath(filepath.Clean(home))
		for _, d := range []string{".config/git", ".config/fish", ".config/nushell", ".config/powershell", ".ssh", ".config/systemd", ".config/autostart", ".config/go", ".cargo/config", ".cargo/config.toml"} {
			root := append(hs[:len(hs):len(hs)], splitPath(d)...)
			if len(segs) >= len(root) && sameNames(segs[:len(root)], root) {
				return "/" + strings.Join(segs[:len(root)], "/")
			}
		}
	}
	return ""
}

// protectedChild returns a protected file or directory directly inside
// dir, when a write to dir (rm -r, find -delete, a copy onto it) reaches
// everything below it.
func protectedChild(dir string) string {
	if !isDir(dir) {
		return ""
	}
	names := []string{".claude", ".git", ".mcp.json"}
	for n := range rcFiles {
		names = append(names, n)
	}
	for _, n := range names {
		p := filepath.Join(dir, n)
		if _, err := os.Lstat(p); err == nil {
			return p
		}
	}
	return ""
}

// protectedUnit denies the first write to a protected file no allow rule
// names explicitly.
func (rs *RuleSet) protectedUnit(units []*unit) *ruleOutcome {
	for _, u := range units {
		if u.target == nil || !(u.bashWrite || editTools[u.tool]) {
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
