package approve

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/protect"
)

// RuleSet is every rules file of a session, merged: deny beats ask beats
// allow across all files, whatever their order.
type RuleSet struct {
	files            []*RulesFile
	deny, ask, allow []*rule
	bareBashAllow    *rule
	defaultBehavior  string
	defaultFile      *RulesFile
	answers          []answer
	home             string
	held             []string // paths the session's sandbox holds (Chain.SetHeld)
}

// NewRuleSet merges rules files. Unmatched requests take "deny" unless
// every file says "default": "ask".
func NewRuleSet(files []*RulesFile, home string) *RuleSet {
	rs := &RuleSet{files: files, home: home, defaultBehavior: protocol.Ask}
	for _, f := range files {
		for _, r := range f.rules {
			switch r.behavior {
			case protocol.Deny:
				rs.deny = append(rs.deny, r)
			case protocol.Ask:
				rs.ask = append(rs.ask, r)
			default:
				rs.allow = append(rs.allow, r)
				if r.tool == "Bash" && !r.hasSpec && rs.bareBashAllow == nil {
					rs.bareBashAllow = r
				}
			}
		}
		if f.Default != protocol.Ask && rs.defaultBehavior == protocol.Ask {
			rs.defaultBehavior = protocol.Deny
			rs.defaultFile = f
		}
		rs.answers = append(rs.answers, f.answers...)
	}
	if len(files) == 0 {
		rs.defaultBehavior = ""
	}
	return rs
}

// toolInput holds the input fields rules look at.
type toolInput struct {
	Command      string     `json:"command"`
	FilePath     string     `json:"file_path"`
	NotebookPath string     `json:"notebook_path"`
	Path         string     `json:"path"`
	URL          string     `json:"url"`
	Host         string     `json:"host"` // SandboxNetworkAccess
	Questions    []question `json:"questions"`
}

type question struct {
	Question    string `json:"question"`
	Header      string `json:"header"`
	MultiSelect bool   `json:"multiSelect"`
	Options     []struct {
		Label       string `json:"label"`
		Description string `json:"description"`
	} `json:"options"`
}

// unit is one thing a request does that rules judge: the whole call for
// most tools, each part of a Bash command.
type unit struct {
	tool string
	text string // for messages

	bash        []shForm
	bashSeen    []shForm // what a runner runs: deny and ask rules see it
	bashUnknown bool
	bashCode    bool // runs code agentjq does not read: deny and ask rules match

	target *target

	host string // WebFetch; "" when unreadable

	mcpServer, mcpTool string
	mcpOK              bool

	specValue string
	specKnown bool

	// recursive: the tool reads every file below the target (Grep of a
	// directory), so a deny of any of them is a deny of the call.
	recursive bool
	below     map[string]*belowList // the files below each directory read, listed once
	bareBash  bool                  // the Bash call as a whole: only bare Bash rules
	inert     bool                  // a Bash part that needs no allow (cd, set -e)
}

// matches reports whether r matches u. conservative mode (deny, ask) takes
// every doubt as a match; strict mode (allow) takes none.
func (r *rule) matches(u *unit, mode matchMode) bool {
	if r.mcpServer != "" {
		if !strings.HasPrefix(u.tool, "mcp__") {
			return false
		}
		if !u.mcpOK {
			return mode == conservative && strings.HasPrefix(u.tool, "mcp__"+r.mcpServer)
		}
		return r.matchMCP(u.mcpServer, u.mcpTool, mode == strict)
	}
	if !r.coversTool(u.tool) {
		return false
	}
	if u.bareBash {
		return !r.hasSpec
	}
	if !r.hasSpec {
		return true
	}
	switch {
	case r.bash != nil:
		if u.bashUnknown || u.bashCode && mode == conservative {
			return mode == conservative
		}
		if mode == conservative {
			for _, f := range append(u.bash[:len(u.bash):len(u.bash)], u.bashSeen...) {
				if r.bash.match(f.words, conservative) {
					return true
				}
			}
			return false
		}
		return false // strict Bash matching needs every rule: see allowBash
	case r.path != nil:
		if u.target == nil || u.target.unknown {
			return mode == conservative
		}
		for _, rd := range u.target.readings {
			m := r.path.matchReading(rd)
			if mode == conservative && u.recursive && u.readsBelow(r.path, rd) {
				return true
			}
			if mode == conservative && m {
				return true
			}
			if mode == strict && !m {
				return false
			}
		}
		return mode == strict
	case r.domain != "":
		if u.host == "" {
			return mode == conservative
		}
		return matchDomain(r.domain, u.host)
	case u.specKnown:
		return r.spec == u.specValue
	}
	return mode == conservative
}

// allowBash reports the allow rules that allow a Bash command part: the
// innermost command must be allowed, and so must every guarded form (sudo,
// an unsafe variable) around it.
func (rs *RuleSet) allowBash(u *unit) *rule {
	if u.bashUnknown || len(u.bash) == 0 {
		return nil
	}
	find := func(f shForm) *rule {
		for _, r := range rs.allow {
			if r.bash != nil && r.bash.match(f.words, strict) {
				return r
			}
		}
		return nil
	}
	inner := find(u.bash[len(u.bash)-1])
	if inner == nil {
		return nil
	}
	for _, f := range u.bash[:len(u.bash)-1] {
		if f.guarded && find(f) == nil {
			return nil
		}
	}
	return inner
}

// units reads the request into the units rules judge. shell is where
// claude's shell may be (the file tools' relative paths resolve there);
// path rules stay anchored at req.Cwd.
func (rs *RuleSet) units(req *Request, shell []string) ([]*unit, toolInput) {
	in, bad := readToolInput(req.ToolName, req.Input)
	tool := req.ToolName
	u := &unit{tool: tool, text: tool}
	switch {
	case tool == "Bash":
		if bad != "" {
			return []*unit{{tool: "Bash", bashUnknown: true, text: "Bash (" + bad + ")"}}, in
		}
		return bashUnits(in.Command), in
	case editTools[tool] || readTools[tool]:
		p := in.FilePath
		if tool == "NotebookEdit" || tool == "NotebookRead" {
			p = in.NotebookPath
		}
		if (tool == "Glob" || tool == "Grep" || tool == "LS") && p == "" {
			p = in.Path
			if p == "" {
				p = "."
			}
		}
		var t target
		switch {
		case bad != "":
			t = target{unknown: true}
			u.text = tool + " (" + bad + ")"
		default:
			t = resolveIn(p, shell, req.Cwd, rs.home)
			u.text = tool + " " + p
			u.recursive = tool == "Grep"
		}
		u.target = &t
	case tool == "WebFetch":
		u.host = urlHost(in.URL)
		if bad != "" {
			u.host = ""
		}
		u.text = "WebFetch " + in.URL
	case tool == "SandboxNetworkAccess":
		u.host = networkHost(in.Host)
		if bad != "" {
			u.host = ""
		}
		u.text = "SandboxNetworkAccess " + in.Host
	case strings.HasPrefix(tool, "mcp__"):
		var srv struct {
			Name string `json:"name"`
		}
		if len(req.MCPServer) > 0 {
			_ = decodeStrict(req.MCPServer, &srv)
		}
		u.mcpServer, u.mcpTool, u.mcpOK = splitMCP(tool, srv.Name)
	default:
		if field, ok := specFields[tool]; ok && bad == "" {
			var m map[string]any
			if decodeStrict(req.Input, &m) == nil {
				if s, ok := m[field].(string); ok {
					u.specValue, u.specKnown = s, true
				}
			}
		}
	}
	return []*unit{u}, in
}

// pathFields are the fields each file tool's schema names a path with.
var pathFields = map[string][]string{
	"Read": {"file_path"}, "Edit": {"file_path"}, "Write": {"file_path"}, "MultiEdit": {"file_path"},
	"NotebookEdit": {"notebook_path"}, "NotebookRead": {"notebook_path"},
	"Grep": {"path", "glob"}, "Glob": {"path", "pattern"}, "LS": {"path"},
}

// requiredPath are the tools whose path field must be present.
var requiredPath = map[string]bool{"Read": true, "Edit": true, "Write": true, "MultiEdit": true, "NotebookEdit": true, "NotebookRead": true, "LS": true}

// globEscapes reports whether a Grep/Glob pattern may name files outside
// the directory searched (an absolute or ~ pattern, or a .. segment).
func globEscapes(g string) bool {
	if strings.HasPrefix(g, "/") || strings.HasPrefix(g, "~") || strings.ContainsRune(g, 0) {
		return true
	}
	for _, seg := range strings.FieldsFunc(g, func(r rune) bool { return r == '/' || r == '{' || r == '}' || r == ',' }) {
		if seg == ".." {
			return true
		}
	}
	return false
}

// resolveIn resolves a tool's path: absolute as it is, relative against
// every directory the shell may be in.
func resolveIn(p string, shell []string, anchor, home string) target {
	if p == "" || filepath.IsAbs(p) || p == "~" || strings.HasPrefix(p, "~/") {
		return resolveTargetFrom(p, anchor, anchor, home)
	}
	if len(shell) == 0 {
		return target{unknown: true}
	}
	var t target
	for _, base := range shell {
		r := resolveTargetFrom(p, base, anchor, home)
		if r.unknown {
			return r
		}
		t.readings = append(t.readings, r.readings...)
	}
	return t
}

// bashUnits reads a Bash command into the units rules judge: the call as a
// whole (for bare Bash rules), then each part. A Bash call is judged by
// Bash rules only: what it writes and reads is the sandbox's.
func bashUnits(cmd string) []*unit {
	units := []*unit{{tool: "Bash", bareBash: true, text: cmd}}
	a, err := analyzeBash(cmd)
	if err != nil {
		return append(units, &unit{tool: "Bash", bashUnknown: true, text: cmd + " (does not parse: " + err.Error() + ")"})
	}
	for _, p := range a.parts {
		if p.unknown {
			text := p.src
			if p.reason != "" {
				text += " (" + p.reason + ")"
			}
			units = append(units, &unit{tool: "Bash", bashUnknown: true, text: text})
			continue
		}
		text := p.src
		if p.code != "" {
			text += " (" + p.code + ")"
		}
		units = append(units, &unit{tool: "Bash", bash: p.forms, bashSeen: p.seen, bashCode: p.code != "", inert: p.inert, text: text})
	}
	if len(a.parts) == 0 {
		return append(units, &unit{tool: "Bash", bashUnknown: true, text: cmd + " (runs no command)"})
	}
	return units
}

// ruleOutcome is what the rules say about a request.
type ruleOutcome struct {
	behavior string // allow, deny, ask, or "" (no rule matched)
	rule     *rule
	unit     string // the part that decided, for messages
	suggest  string // for unmatched: a rule that would allow the part
	inert    bool   // allowed because it runs nothing
	// uncertain: the rule matched because the unit cannot be judged.
	uncertain bool
	// protected: denied because it writes one of the agent's control files.
	protected string
}

// evaluate judges a non-question request.
func (rs *RuleSet) evaluate(req *Request) ruleOutcome {
	return rs.evaluateAt(req, nil)
}

// evaluateAt judges a request with the shell in one of shell's directories
// (nil: the request's cwd; empty: unknown).
func (rs *RuleSet) evaluateAt(req *Request, shell []string) ruleOutcome {
	if shell == nil && req.Cwd != "" {
		shell = []string{req.Cwd}
	}
	units, _ := rs.units(req, shell)
	for _, list := range [][]*rule{rs.deny, rs.ask} {
		for _, u := range units {
			for _, r := range list {
				if r.matches(u, conservative) {
					return ruleOutcome{behavior: r.behavior, rule: r, unit: u.text, uncertain: u.bashUnknown || u.bashCode || u.target != nil && u.target.unknown}
				}
			}
		}
	}
	if p := rs.protectedUnit(units); p != nil {
		return *p
	}
	var first *rule
	for _, u := range units {
		if u.bareBash || u.inert {
			continue
		}
		var ok *rule
		if req.ToolName == "Bash" && rs.bareBashAllow != nil {
			ok = rs.bareBashAllow
		} else if u.bash != nil {
			ok = rs.allowBash(u)
		} else {
			for _, r := range rs.allow {
				if r.matches(u, strict) {
					ok = r
					break
				}
			}
		}
		if ok == nil {
			return ruleOutcome{unit: u.text, suggest: suggest(u, req.Cwd)}
		}
		if first == nil {
			first = ok
		}
	}
	if first == nil {
		if req.ToolName == "Bash" && len(units) > 1 {
			// Every part is inert (cd, set -e, true): it runs nothing.
			return ruleOutcome{behavior: protocol.Allow, inert: true, unit: req.ToolName}
		}
		return ruleOutcome{}
	}
	return ruleOutcome{behavior: protocol.Allow, rule: first, unit: req.ToolName}
}

// suggest names a rule that would allow u.
func suggest(u *unit, cwd string) string {
	switch {
	case u.bashUnknown:
		return "Bash"
	case u.bash != nil:
		inner := u.bash[len(u.bash)-1].words
		var ws []string
		for i, w := range inner {
			if w.uncertain() {
				if i == 0 {
					return "Bash"
				}
				return "Bash(" + strings.Join(ws, " ") + ":*)"
			}
			ws = append(ws, quoteRuleWord(w.text))
		}
		return "Bash(" + strings.Join(ws, " ") + ")"
	case u.target != nil:
		tool := u.tool
		if editTools[tool] {
			tool = "Edit"
		} else if readTools[tool] {
			tool = "Read"
		}
		if u.target.unknown || len(u.target.readings) == 0 {
			return tool
		}
		abs := u.target.readings[0].abs
		if rel, err := filepath.Rel(filepath.Clean(cwd), abs); err == nil && cwd != "" && !strings.HasPrefix(rel, "..") {
			return tool + "(" + rel + ")"
		}
		return tool + "(/" + abs + ")"
	case (u.tool == "WebFetch" || u.tool == "SandboxNetworkAccess") && u.host != "":
		return "WebFetch(domain:" + u.host + ")"
	case u.specKnown:
		return u.tool + "(" + u.specValue + ")"
	}
	return u.tool
}

func quoteRuleWord(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\*") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
}

// Decide answers from the rules alone: Behavior "" when no rule matched and
// the default is "ask" (or there are no rules files).
func (rs *RuleSet) Decide(_ context.Context, req *Request) (Verdict, error) {
	return rs.decide(req), nil
}

func (rs *RuleSet) decide(req *Request) Verdict {
	if req.IsQuestion() {
		return rs.decideQuestion(req)
	}
	return rs.decideAt(req, nil)
}

// protectedRule names the protection of the agent's control files in
// decisions.
const protectedRule = "protected control file"

// decideAt decides with the shell in one of shell's directories.
func (rs *RuleSet) decideAt(req *Request, shell []string) Verdict {
	if req.IsQuestion() {
		return rs.decideQuestion(req)
	}
	o := rs.evaluateAt(req, shell)
	switch {
	case o.protected != "":
		return Verdict{Behavior: protocol.Deny, Source: protocol.ByRules, Rule: protectedRule,
			Message: fmt.Sprintf("agentjq: `%s` writes %s, one of the agent's control files (settings, hooks, git or shell configuration that makes code run); agentjq denies writes to these unless a policy rule names the file explicitly (see agentjq-policy(5)).", clip(o.unit, 200), o.protected)}
	case o.inert:
		return Verdict{Behavior: protocol.Allow, UpdatedInput: req.Input, Source: protocol.ByRules, Rule: "runs no program"}
	}
	switch o.behavior {
	case protocol.Deny:
		msg := o.rule.file.Message
		if msg == "" && o.uncertain {
			msg = fmt.Sprintf("agentjq: `%s` cannot be judged with certainty, so it was denied: it may be what policy rule %s (%s) denies.", clip(o.unit, 200), o.rule.text, o.rule.pos)
		} else if msg == "" {
			msg = fmt.Sprintf("agentjq: denied by policy rule %s (%s) for `%s`.", o.rule.text, o.rule.pos, clip(o.unit, 200))
		}
		return Verdict{Behavior: protocol.Deny, Message: msg, Source: protocol.ByRules, Rule: o.rule.where()}
	case protocol.Ask:
		return Verdict{Behavior: protocol.Ask, Source: protocol.ByRules, Rule: o.rule.where(),
			Message: fmt.Sprintf("agentjq: rule %s (%s) requires approval for `%s`.", o.rule.text, o.rule.pos, clip(o.unit, 200))}
	case protocol.Allow:
		return Verdict{Behavior: protocol.Allow, UpdatedInput: req.Input, Source: protocol.ByRules, Rule: o.rule.where()}
	}
	return rs.unmatched(req, o)
}

func (rs *RuleSet) unmatched(req *Request, o ruleOutcome) Verdict {
	if rs.defaultBehavior != protocol.Deny {
		return Verdict{Behavior: "", Message: rs.wouldAllow(o)}
	}
	f := rs.defaultFile
	msg := f.Message
	if msg == "" {
		msg = rs.wouldAllow(o)
	}
	return Verdict{Behavior: protocol.Deny, Message: msg, Source: protocol.ByRules, Rule: f.Name + " default"}
}

func (rs *RuleSet) wouldAllow(o ruleOutcome) string {
	what := clip(o.unit, 200)
	if o.suggest == "" {
		return fmt.Sprintf("agentjq: no policy rule allowed `%s`, so it was denied.", what)
	}
	return fmt.Sprintf("agentjq: no policy rule allowed `%s`, so it was denied (the rule %q in an allow list would allow it).", what, o.suggest)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// decideQuestion answers AskUserQuestion from the files' answers. Allow
// rules never answer a question: an allow without answers would be an
// empty answer.
func (rs *RuleSet) decideQuestion(req *Request) Verdict {
	u := &unit{tool: req.ToolName, text: req.ToolName}
	for _, list := range [][]*rule{rs.deny, rs.ask} {
		for _, r := range list {
			if r.matches(u, conservative) {
				if r.behavior == protocol.Deny {
					return Verdict{Behavior: protocol.Deny, Message: NoOneToAnswer, Source: protocol.ByRules, Rule: r.where()}
				}
				return Verdict{Behavior: protocol.Ask, Source: protocol.ByRules, Rule: r.where()}
			}
		}
	}
	if len(rs.answers) > 0 {
		if updated, where, ok := answerQuestions(req.Input, rs.answers); ok {
			return Verdict{Behavior: protocol.Allow, UpdatedInput: updated, Source: protocol.ByRules, Rule: where}
		}
	}
	if rs.defaultBehavior == protocol.Deny {
		return Verdict{Behavior: protocol.Deny, Message: NoOneToAnswer, Source: protocol.ByRules, Rule: rs.defaultFile.Name + " default"}
	}
	return Verdict{}
}

// answerQuestions fills "answers" from scripted answers; ok is false unless
// every question gets a non-empty answer naming real options.
func answerQuestions(input json.RawMessage, answers []answer) (json.RawMessage, string, bool) {
	var in toolInput
	if json.Unmarshal(input, &in) != nil || len(in.Questions) == 0 {
		return nil, "", false
	}
	out := map[string]string{}
	var where []string
	for _, q := range in.Questions {
		var a *answer
		for _, key := range []string{q.Question, q.Header, "*"} {
			for i := range answers {
				if key != "" && answers[i].key == key {
					a = &answers[i]
					break
				}
			}
			if a != nil {
				break
			}
		}
		if a == nil {
			return nil, "", false
		}
		labels, ok := pickLabels(q, a.labels)
		if !ok {
			return nil, "", false
		}
		out[q.Question] = strings.Join(labels, ", ")
		where = append(where, a.pos)
	}
	updated, err := withAnswers(input, out)
	if err != nil {
		return nil, "", false
	}
	return updated, "answers " + strings.Join(where, ", "), true
}

func pickLabels(q question, want []string) ([]string, bool) {
	if len(q.Options) == 0 {
		return nil, false
	}
	var got []string
	for _, w := range want {
		if w == "@first" {
			got = append(got, q.Options[0].Label)
			continue
		}
		found := ""
		for _, o := range q.Options {
			if o.Label == w {
				found = o.Label
				break
			}
		}
		if found == "" {
			for _, o := range q.Options {
				if strings.EqualFold(o.Label, w) {
					found = o.Label
					break
				}
			}
		}
		if found == "" {
			return nil, false
		}
		got = append(got, found)
	}
	if len(got) == 0 || (!q.MultiSelect && len(got) > 1) {
		return nil, false
	}
	for _, g := range got {
		if strings.TrimSpace(g) == "" {
			return nil, false
		}
	}
	return got, true
}

// withAnswers returns the input with "answers" set, every other field kept.
func withAnswers(input json.RawMessage, answers map[string]string) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(input, &m); err != nil {
		return nil, err
	}
	a, err := json.Marshal(answers)
	if err != nil {
		return nil, err
	}
	m["answers"] = a
	return json.Marshal(m)
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
	if p.floating {
		return p.literalLen() == 1 && p.segs[0] == filepath.Base(root)
	}
	for _, l := range p.literalDirs(rd.cwd) {
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
