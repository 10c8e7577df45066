package approve

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/protect"
)

// protectWithoutRules denies a write to a control file when the chain has
// no rules files (jq policies and approvers never make such a write
// allowed).
func protectWithoutRules(rs *RuleSet, req *Request, shell []string, home string, held []string) (Verdict, bool) {
	if rs != nil {
		return Verdict{}, false // the rules protect
	}
	bare := NewRuleSet(nil, home)
	bare.held = held
	v := bare.decideAt(req, shell)
	return v, v.Rule == protectedRule
}

// protectRewrite holds an allow's rewritten input, which is what runs, to
// the same protection; it returns the request as it will run.
func protectRewrite(rs *RuleSet, req *Request, v Verdict, shell []string, home string, held []string) (Verdict, *Request) {
	if v.Behavior != protocol.Allow || bytes.Equal(v.UpdatedInput, req.Input) || req.IsQuestion() {
		return v, req
	}
	r := *req
	r.Input = v.UpdatedInput
	if unsandboxed(r.ToolName, r.Input) {
		return Verdict{Behavior: protocol.Deny, Source: protocol.ByRules, Rule: unsandboxedRule, Message: unsandboxedMessage}, req
	}
	if rs == nil {
		rs = NewRuleSet(nil, home)
		rs.held = held
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
