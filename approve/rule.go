package approve

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"strings"
)

// rule is one permission rule in Claude Code's syntax: Tool or
// Tool(specifier).
type rule struct {
	text     string // as written
	pos      string // file:line:column
	behavior string // allow, ask, deny
	file     *RulesFile

	tool    string
	spec    string
	hasSpec bool

	bash   *bashPattern
	path   *pathPattern
	domain string // WebFetch(domain:...)

	mcpServer, mcpTool string // mcp__server[__tool]; may hold globs
}

// where names the rule for decisions and messages.
func (r *rule) where() string {
	if r.pos == "" {
		return r.text
	}
	return r.pos + " " + r.text
}

// File tools grouped as Claude Code groups them for rules: an Edit or Write
// rule covers every tool that writes a file, a Read rule every tool that
// reads one.
var (
	editTools = map[string]bool{"Edit": true, "Write": true, "MultiEdit": true, "NotebookEdit": true}
	readTools = map[string]bool{"Read": true, "Glob": true, "Grep": true, "LS": true, "NotebookRead": true}
)

// specFields name the input field a specifier is compared with, for tools
// whose specifier is plain text.
var specFields = map[string]string{
	"Task": "subagent_type", "Agent": "subagent_type", "Skill": "skill", "WebSearch": "query",
	"SlashCommand": "command",
}

// parseRule parses one rule. home expands "~/" in path rules.
func parseRule(text, behavior, home string) (*rule, error) {
	r := &rule{text: text, behavior: behavior}
	s := strings.TrimSpace(text)
	if s == "" {
		return nil, errors.New("empty rule")
	}
	if i := strings.IndexByte(s, '('); i >= 0 {
		if !strings.HasSuffix(s, ")") {
			return nil, fmt.Errorf("rule %q: missing closing parenthesis", text)
		}
		r.tool = s[:i]
		r.spec = s[i+1 : len(s)-1]
		r.hasSpec = true
		if r.spec == "" {
			return nil, fmt.Errorf("rule %q: empty specifier (write %s to match every call)", text, r.tool)
		}
	} else {
		if strings.ContainsAny(s, ")") {
			return nil, fmt.Errorf("rule %q: unbalanced parenthesis", text)
		}
		r.tool = s
	}
	if strings.HasPrefix(r.tool, "mcp__") {
		if r.hasSpec {
			return nil, fmt.Errorf("rule %q: MCP rules take no parentheses (mcp__server or mcp__server__tool)", text)
		}
		rest := r.tool[len("mcp__"):]
		server, tool, _ := strings.Cut(rest, "__")
		if server == "" {
			return nil, fmt.Errorf("rule %q: no server name", text)
		}
		if behavior == "allow" && strings.ContainsAny(server, "*?[") {
			return nil, fmt.Errorf("rule %q: an allow rule needs a literal server name", text)
		}
		for _, g := range []string{server, tool} {
			if _, err := path.Match(g, ""); err != nil {
				return nil, fmt.Errorf("rule %q: bad glob", text)
			}
		}
		r.mcpServer, r.mcpTool = server, tool
		return r, nil
	}
	if !isToolName(r.tool) {
		return nil, fmt.Errorf("rule %q: %q is not a tool name (tool names start with a capital letter)", text, r.tool)
	}
	if !r.hasSpec {
		return r, nil
	}
	var err error
	switch {
	case r.tool == "Bash":
		r.bash, err = compileBashPattern(r.spec, home)
	case editTools[r.tool] || readTools[r.tool]:
		r.path, err = compilePathPattern(r.spec, home)
		if err == nil {
			// A deny or ask rule holds for the file in any case; an allow
			// rule covers the case it names.
			r.path.fold = behavior != "allow"
		}
	case r.tool == "WebFetch" || r.tool == "SandboxNetworkAccess":
		d, ok := strings.CutPrefix(r.spec, "domain:")
		if !ok || d == "" || strings.ContainsAny(d, "/:@") {
			return nil, fmt.Errorf("rule %q: %s takes domain:HOST (a host name, *.host for subdomains)", text, r.tool)
		}
		r.domain = strings.ToLower(strings.TrimSuffix(d, "."))
	}
	if err != nil {
		return nil, fmt.Errorf("rule %q: %v", text, err)
	}
	return r, nil
}

func isToolName(s string) bool {
	if s == "" || s[0] < 'A' || s[0] > 'Z' {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// coversTool reports whether a rule is about this tool at all.
func (r *rule) coversTool(tool string) bool {
	if r.tool == tool {
		return true
	}
	switch r.tool {
	case "Edit", "Write":
		return editTools[tool]
	case "Read":
		// A file one may not read one may not edit either: Edit and
		// MultiEdit read it (claude keeps the original in its transcript,
		// and an old_string that fails to match tells what is there), and
		// a Write replaces what was kept from the agent.
		return readTools[tool] || r.behavior != "allow" && editTools[tool]
	case "WebFetch":
		// The sandbox asks about a host outside its list as
		// SandboxNetworkAccess, judged like a WebFetch of it: a domain
		// rule covers it; a bare WebFetch rule denies or asks for every
		// host, but allows no host the sandbox was not given.
		return tool == "SandboxNetworkAccess" && (r.hasSpec || r.behavior != "allow")
	}
	return false
}

// matchMCP matches an MCP tool call. server is the request's server name.
func (r *rule) matchMCP(server, tool string, strict bool) bool {
	if r.mcpServer == "" || server == "" {
		return false
	}
	if strict {
		if r.mcpServer != server {
			return false
		}
	} else if ok, _ := path.Match(r.mcpServer, server); !ok {
		return false
	}
	if r.mcpTool == "" || r.mcpTool == "*" {
		return true
	}
	ok, _ := path.Match(r.mcpTool, tool)
	return ok
}

// splitMCP splits mcp__server__tool. A server name from the request's
// mcp_server field wins over guessing from the tool name.
func splitMCP(name, declared string) (server, tool string, ok bool) {
	rest, ok := strings.CutPrefix(name, "mcp__")
	if !ok {
		return "", "", false
	}
	if declared != "" {
		t, ok := strings.CutPrefix(rest, declared+"__")
		if !ok {
			return "", "", false
		}
		return declared, t, true
	}
	server, tool, found := strings.Cut(rest, "__")
	if !found || server == "" {
		return rest, "", rest != ""
	}
	return server, tool, true
}

// matchDomain matches a WebFetch URL's host against domain:host or
// domain:*.host.
func matchDomain(pattern, host string) bool {
	if sub, ok := strings.CutPrefix(pattern, "*."); ok {
		return strings.HasSuffix(host, "."+sub)
	}
	if strings.ContainsAny(pattern, "*?[") {
		ok, _ := path.Match(pattern, host)
		return ok
	}
	return host == pattern
}

// urlHost returns the lower-case host of an http(s) URL, or "" when the
// URL cannot be read with certainty.
func urlHost(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil {
		return ""
	}
	h := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if h == "" || strings.ContainsAny(h, "%\\ ") {
		return ""
	}
	return h
}

// networkHost returns the lower-case host the sandbox asks about, or ""
// when it is not a plain host name.
func networkHost(h string) string {
	h = strings.ToLower(strings.TrimSuffix(strings.TrimSpace(h), "."))
	if h == "" || strings.ContainsAny(h, "/:@%\\ *?[") {
		return ""
	}
	return h
}

// bashPattern is a Bash rule's specifier, read as words:
//
//	npm run build      exactly these words
//	git:*              these words, then anything (the legacy prefix form)
//	git *              a lone * is any words: at the end zero or more
//	                   (so "git" alone matches), elsewhere one or more
//	*.sh, --out=*      a * inside a word matches within that word
//	\*  '*'            a literal star
//
// Words are compared after quote removal, so quoting cannot smuggle a
// different command past a rule.
type bashPattern struct {
	toks   []ptok
	prefix bool   // legacy ":*": any words may follow
	home   string // what ~/ in an operand is, for deny and ask rules
}

type ptok struct {
	lit  string   // the word, for tokens without wildcards
	glob []string // the literal pieces between the stars of a word with stars inside
	star bool     // a lone unquoted *
}

func compileBashPattern(spec, home string) (*bashPattern, error) {
	p := &bashPattern{home: home}
	s := spec
	if strings.HasSuffix(s, ":*") {
		p.prefix = true
		s = strings.TrimSuffix(s, ":*")
	}
	words, err := tokenizeRule(s)
	if err != nil {
		return nil, err
	}
	if len(words) == 0 {
		return nil, errors.New("no command before \":*\"")
	}
	p.toks = words
	return p, nil
}

// tokenizeRule splits a specifier into words with shell-like quoting.
func tokenizeRule(s string) ([]ptok, error) {
	var toks []ptok
	var lit, piece strings.Builder
	var pieces []string
	inWord, hasStar, anyQuoted := false, false, false
	flush := func() {
		if !inWord {
			return
		}
		switch {
		case hasStar && !anyQuoted && lit.String() == "*":
			toks = append(toks, ptok{star: true})
		case hasStar:
			toks = append(toks, ptok{glob: append(pieces, piece.String())})
		default:
			toks = append(toks, ptok{lit: lit.String()})
		}
		lit.Reset()
		piece.Reset()
		pieces = nil
		inWord, hasStar, anyQuoted = false, false, false
	}
	addLit := func(c byte) {
		lit.WriteByte(c)
		piece.WriteByte(c)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			flush()
		case c == '\\':
			inWord = true
			if i+1 < len(s) {
				i++
				addLit(s[i])
			}
		case c == '\'' || c == '"':
			inWord, anyQuoted = true, true
			j := strings.IndexByte(s[i+1:], c)
			if j < 0 {
				return nil, errors.New("unterminated quote")
			}
			for k := i + 1; k < i+1+j; k++ {
				addLit(s[k])
			}
			i += j + 1
		case c == '*':
			inWord, hasStar = true, true
			lit.WriteByte('*')
			pieces = append(pieces, piece.String())
			piece.Reset()
		default:
			inWord = true
			addLit(c)
		}
	}
	flush()
	return toks, nil
}

// matchMode says how to treat words whose value is unknown. For an allow
// they match only wildcards; for a deny or ask they match anything, so
// that a rule is never dodged by hiding a word in a variable.
type matchMode int

const (
	strict       matchMode = iota // allow
	conservative                  // deny, ask
)

// match matches the words of one command form. A deny or ask rule
// (conservative) matches as the words are written or as the system would
// take them (matchLoose).
func (p *bashPattern) match(words []shWord, mode matchMode) bool {
	return p.matchWritten(words, mode) || mode == conservative && p.matchLoose(words)
}

// matchWritten matches the words as written (a deny or ask rule's command
// name also by path and in any case).
func (p *bashPattern) matchWritten(words []shWord, mode matchMode) bool {
	// Long commands are matched like short ones: the memo is sized to
	// them (0 unknown, 1 true, 2 false).
	cols := len(p.toks) + 1
	var small [65 * 65]int8
	memo := small[:]
	if n := (len(words) + 1) * cols; n > len(small) {
		memo = make([]int8, n)
	}
	var rec func(i, j int) bool
	rec = func(i, j int) bool {
		k := i*cols + j
		if memo[k] != 0 {
			return memo[k] == 1
		}
		r := p.step(words, i, j, mode, rec)
		memo[k] = 2
		if r {
			memo[k] = 1
		}
		return r
	}
	return rec(0, 0)
}

func (p *bashPattern) step(words []shWord, i, j int, mode matchMode, rec func(i, j int) bool) bool {
	if j == len(p.toks) {
		if p.prefix || i == len(words) {
			return true
		}
		// An unknown word may expand to nothing.
		if mode == conservative {
			for k := i; k < len(words); k++ {
				if !words[k].uncertain() {
					return false
				}
			}
			return true
		}
		return false
	}
	t := p.toks[j]
	if t.star {
		if j == len(p.toks)-1 {
			return true
		}
		for k := i + 1; k <= len(words); k++ {
			if rec(k, j+1) {
				return true
			}
		}
		return false
	}
	if i == len(words) {
		return false
	}
	w := words[i]
	if w.uncertain() {
		if mode == strict {
			return w.glob && !w.dyn && t.lit == w.text && rec(i+1, j+1)
		}
		// It may stand for any number of words, these tokens included.
		for k := j; k <= len(p.toks); k++ {
			if rec(i+1, k) {
				return true
			}
		}
		return false
	}
	if !t.matchWord(w.text, i == 0 && mode == conservative) {
		return false
	}
	return rec(i+1, j+1)
}

// matchWord compares one literal word. A deny or ask rule's command name
// (cmd) also matches when run by path (/bin/rm for rm) and in another case
// (RM runs rm from a case-insensitive filesystem, as macOS's is).
func (t ptok) matchWord(s string, cmd bool) bool {
	if t.matchOne(s) {
		return true
	}
	if !cmd {
		return false
	}
	if strings.Contains(s, "/") {
		s = path.Base(s)
		if t.matchOne(s) {
			return true
		}
	}
	if t.glob == nil && strings.Contains(t.lit, "/") {
		// A rule naming /bin/rm holds for rm and /usr/bin/rm too.
		t = ptok{lit: path.Base(t.lit)}
	}
	return t.fold().matchOne(foldLower(s))
}

// fold is t with its literal text in foldLower.
func (t ptok) fold() ptok {
	f := ptok{lit: foldLower(t.lit)}
	for _, p := range t.glob {
		f.glob = append(f.glob, foldLower(p))
	}
	return f
}

func (t ptok) matchOne(s string) bool {
	if t.glob != nil {
		return matchPieces(t.glob, s)
	}
	return t.lit == s
}

// matchPieces matches s against literal pieces separated by stars; a star
// matches any characters, slashes and spaces included.
func matchPieces(pieces []string, s string) bool {
	first, last := pieces[0], pieces[len(pieces)-1]
	if !strings.HasPrefix(s, first) {
		return false
	}
	s = s[len(first):]
	for _, p := range pieces[1 : len(pieces)-1] {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return len(s) >= len(last) && strings.HasSuffix(s, last)
}
