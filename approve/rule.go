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
