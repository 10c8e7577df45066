package approve

import (
	"encoding/json"
	"io/fs"
	"path/filepath"
	"strings"
)

// SandboxPolicy is what a session's policies ask of the OS sandbox its
// Bash commands run in (package sandbox makes claude's settings from it).
// Paths are absolute.
type SandboxPolicy struct {
	// Off names the policy file and place that turned the sandbox off
	// ("sandbox": {"enabled": false}), or "".
	Off string
	// AllowWrite: the directories of Edit and Write allow rules outside
	// the project, and the policies' sandbox.filesystem.allowWrite.
	AllowWrite []string
	// DenyWrite, DenyRead: Edit/Write and Read deny rules, as the paths
	// they name (a rule with a glob: the files it matches now, below its
	// literal directory; dir/** is dir), and the policies' own lists.
	DenyWrite, DenyRead []string
	// AllowRead: the literal paths of Read allow rules, and the policies'
	// own list: a credential file a Read allow rule names stays readable.
	AllowRead []string
	// Domains: WebFetch(domain:...) allow rules and the policies'
	// sandbox.network.allowedDomains.
	Domains []string
	// HideEnv: the policies' sandbox.credentials.envVars.
	HideEnv []string
}

// sandboxKey is the "sandbox" key of a rules file: Claude Code's sandbox
// settings, of which agentjq takes what widens or narrows its derived
// sandbox the user's way; a key that would weaken it is refused.
type sandboxKey struct {
	pos        string
	enabled    *bool
	allowWrite []string
	denyWrite  []string
	denyRead   []string
	allowRead  []string
	domains    []string
	hideEnv    []string
}

// parseSandboxKey reads a rules file's "sandbox" value; at names a JSON
// pointer's place for errors.
func parseSandboxKey(raw json.RawMessage, p string, home string, at func(p string, format string, a ...any) error) (*sandboxKey, error) {
	var top map[string]json.RawMessage
	if json.Unmarshal(raw, &top) != nil {
		return nil, at(p, "sandbox must be an object")
	}
	k := &sandboxKey{}
	lists := map[string]*[]string{
		"filesystem/allowWrite": &k.allowWrite, "filesystem/denyWrite": &k.denyWrite,
		"filesystem/denyRead": &k.denyRead, "filesystem/allowRead": &k.allowRead,
		"network/allowedDomains": &k.domains,
	}
	for name, v := range top {
		vp := p + "/" + pointerEscape(name)
		switch name {
		case "enabled":
			var b bool
			if json.Unmarshal(v, &b) != nil {
				return nil, at(vp, "sandbox.enabled must be true or false")
			}
			k.enabled = &b
		case "filesystem", "network":
			var sec map[string]json.RawMessage
			if json.Unmarshal(v, &sec) != nil {
				return nil, at(vp, "sandbox.%s must be an object", name)
			}
			for sub, sv := range sec {
				dst, ok := lists[name+"/"+sub]
				if !ok {
					return nil, at(vp+"/"+pointerEscape(sub)+"#key", "agentjq does not take sandbox.%s.%s from a policy (it takes filesystem.allowWrite, denyWrite, denyRead, allowRead and network.allowedDomains; nothing that weakens the sandbox)", name, sub)
				}
				if json.Unmarshal(sv, dst) != nil {
					return nil, at(vp+"/"+pointerEscape(sub), "sandbox.%s.%s must be an array of strings", name, sub)
				}
			}
		case "credentials":
			var cred struct {
				EnvVars []string `json:"envVars"`
			}
			if json.Unmarshal(v, &cred) != nil {
				return nil, at(vp, `sandbox.credentials takes "envVars": the names of variables commands must not see`)
			}
			k.hideEnv = cred.EnvVars
		default:
			return nil, at(vp+"#key", "agentjq does not take sandbox.%s from a policy (it takes enabled, filesystem, network and credentials; nothing that weakens the sandbox)", name)
		}
	}
	for _, l := range []*[]string{&k.allowWrite, &k.denyWrite, &k.denyRead, &k.allowRead} {
		for i, s := range *l {
			if strings.HasPrefix(s, "~/") {
				if home == "" {
					return nil, at(p, `"~/" needs HOME, which is not set`)
				}
				(*l)[i] = filepath.Join(home, s[2:])
			}
		}
	}
	return k, nil
}

// maxExpand bounds the files read to expand one glob deny rule.
const maxExpand = 20000

// Sandbox is what the chain's rules files ask of the sandbox.
func (c *Chain) Sandbox() SandboxPolicy {
	var sp SandboxPolicy
	if c.rules == nil {
		return sp
	}
	cwd := c.opts.Cwd
	abs := func(list []string) []string {
		out := make([]string, 0, len(list))
		for _, p := range list {
			if !filepath.IsAbs(p) {
				p = filepath.Join(cwd, p)
			}
			out = append(out, filepath.Clean(p))
		}
		return out
	}
	for _, f := range c.rules.files {
		k := f.sandbox
		if k == nil {
			continue
		}
		if k.enabled != nil && !*k.enabled && sp.Off == "" {
			sp.Off = k.pos
		}
		sp.AllowWrite = append(sp.AllowWrite, abs(k.allowWrite)...)
		sp.DenyWrite = append(sp.DenyWrite, abs(k.denyWrite)...)
		sp.DenyRead = append(sp.DenyRead, abs(k.denyRead)...)
		sp.AllowRead = append(sp.AllowRead, abs(k.allowRead)...)
		sp.Domains = append(sp.Domains, k.domains...)
		sp.HideEnv = append(sp.HideEnv, k.hideEnv...)
	}
	for _, r := range c.rules.allow {
		switch {
		case r.domain != "":
			sp.Domains = append(sp.Domains, r.domain)
		case r.path != nil && editTools[r.tool]:
			for _, d := range r.path.literalDirs(cwd) {
				if d != cwd && !strings.HasPrefix(d, cwd+"/") {
					sp.AllowWrite = append(sp.AllowWrite, d)
				}
			}
		case r.path != nil && readTools[r.tool]:
			sp.AllowRead = append(sp.AllowRead, r.path.literalDirs(cwd)...)
		}
	}
	for _, r := range c.rules.deny {
		if r.path == nil {
			continue
		}
		paths := r.path.denied(cwd)
		switch {
		case editTools[r.tool]:
			sp.DenyWrite = append(sp.DenyWrite, paths...)
		case readTools[r.tool]:
			sp.DenyRead = append(sp.DenyRead, paths...)
		}
	}
	return sp
}

// literalLen is how many of the pattern's segments come before its first
// glob segment (all of them when it has none).
func (p *pathPattern) literalLen() int {
	for i, s := range p.segs {
		if strings.ContainsAny(s, "*?[") {
			return i
		}
	}
	return len(p.segs)
}

// literalDirs returns where the pattern's literal part leads, from each
// of its anchors: the whole path when it has no glob, else the directory
// before its first glob segment. A floating pattern (no slash) has none.
func (p *pathPattern) literalDirs(cwd string) []string {
	if p.floating {
		return nil
	}
	lit := p.segs[:p.literalLen()]
	bases := p.bases
	if bases == nil {
		bases = []string{cwd}
	}
	var out []string
	for _, b := range bases {
		out = append(out, filepath.Join(append([]string{b}, lit...)...))
	}
	return out
}

// denied returns the paths a deny pattern names for the sandbox, which
// binds exact paths: its literal path when it has no glob or ends in
// "/**" (the directory whole), else the files below its literal
// directory that it matches now, up to maxExpand read (a file made later
// is not held by the sandbox; the file tools still are).
func (p *pathPattern) denied(cwd string) []string {
	glob := p.literalLen()
	dirs := p.literalDirs(cwd)
	if !p.floating && (glob == len(p.segs) || glob == len(p.segs)-1 && p.segs[glob] == "**") {
		return dirs
	}
	roots := dirs
	if p.floating {
		roots = []string{cwd}
	}
	var out []string
	n := 0
	for _, root := range roots {
		filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if n++; n > maxExpand {
				return fs.SkipAll
			}
			if err != nil {
				return nil
			}
			if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") && path != root {
				return fs.SkipDir
			}
			if p.matchReading(reading{abs: path, cwd: cwd}) {
				out = append(out, path)
				if d.IsDir() {
					return fs.SkipDir
				}
			}
			return nil
		})
	}
	return out
}
