package sandbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// Merge folds agentjq's sandbox block into a client's --settings value
// (a JSON object, or the path of a file holding one; "" when the client
// gave none) and returns the JSON object claude gets. The stricter value
// always wins, so the client's sandbox can never be weakened:
//   - enabled, failIfUnavailable stay true; allowUnsandboxedCommands and
//     autoAllowBashIfSandboxed stay false;
//   - lists that restrict (denyWrite, denyRead, deniedDomains, the
//     credentials to hide or mask) are the union of both;
//   - lists that widen (allowWrite, allowRead, allowedDomains) keep only
//     the client's entries that agentjq's own list already covers;
//   - network.strictAllowlist is kept when the client sets it;
//   - every other key of the client's sandbox block (excludedCommands,
//     proxy ports, bwrapPath, filesystem.disabled, the weaker-isolation
//     switches, ...) is dropped: each drop is returned as a note.
//
// The rest of the client's settings is passed on as it is. dir resolves
// the client's relative paths, home its "~/".
func Merge(client string, ours map[string]any, dir, home string) (merged []byte, notes []string, err error) {
	top := map[string]any{}
	if c := strings.TrimSpace(client); c != "" {
		data := []byte(c)
		if !strings.HasPrefix(c, "{") {
			p := c
			if !filepath.IsAbs(p) {
				p = filepath.Join(dir, p)
			}
			if data, err = os.ReadFile(p); err != nil {
				return nil, nil, fmt.Errorf("--settings %s: %w", c, err)
			}
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		if err := dec.Decode(&top); err != nil {
			return nil, nil, fmt.Errorf("--settings: not a JSON object: %v", err)
		}
	}
	theirs, _ := top["sandbox"].(map[string]any)
	if top["sandbox"] != nil && theirs == nil {
		notes = append(notes, "sandbox (not an object)")
	}
	sb := clone(ours)
	for _, k := range sortedKeys(theirs) {
		v := theirs[k]
		switch k {
		case "enabled", "failIfUnavailable", "allowUnsandboxedCommands", "autoAllowBashIfSandboxed":
			if v != sb[k] {
				notes = append(notes, "sandbox."+k)
			}
		case "filesystem", "network", "credentials":
			m, ok := v.(map[string]any)
			if !ok {
				notes = append(notes, "sandbox."+k)
				continue
			}
			mine, _ := sb[k].(map[string]any)
			if mine == nil {
				mine = map[string]any{}
				sb[k] = mine
			}
			notes = append(notes, mergeSection(k, m, mine, dir, home)...)
		default:
			notes = append(notes, "sandbox."+k)
		}
	}
	top["sandbox"] = sb
	out, err := json.Marshal(top)
	return out, notes, err
}

// mergeSection merges one sub-object of the client's sandbox block into
// agentjq's (mine), as Merge says.
func mergeSection(section string, theirs, mine map[string]any, dir, home string) (notes []string) {
	for _, k := range sortedKeys(theirs) {
		name := "sandbox." + section + "." + k
		list, isList := strings_(theirs[k])
		switch section + "." + k {
		case "filesystem.denyWrite", "filesystem.denyRead", "network.deniedDomains":
			if !isList {
				notes = append(notes, name)
				continue
			}
			if section == "filesystem" {
				list = absAll(list, dir, home)
			}
			have, _ := strings_(mine[k])
			mine[k] = nonNil(unique(append(have, list...)))
		case "filesystem.allowWrite", "filesystem.allowRead":
			// The client's entries that agentjq's cover add nothing; the
			// others would widen the sandbox.
			have, _ := strings_(mine[k])
			for _, p := range absAll(list, dir, home) {
				if !within(p, have) {
					notes = append(notes, name+" "+p)
				}
			}
			if !isList {
				notes = append(notes, name)
			}
		case "network.allowedDomains":
			have, _ := strings_(mine[k])
			for _, d := range list {
				if !slices.ContainsFunc(have, func(h string) bool { return DomainCovers(h, d) }) {
					notes = append(notes, name+" "+d)
				}
			}
			if !isList {
				notes = append(notes, name)
			}
		case "network.strictAllowlist":
			if b, ok := theirs[k].(bool); ok && b {
				mine[k] = true
			} else if !ok {
				notes = append(notes, name)
			}
		case "credentials.envVars", "credentials.files":
			arr, ok := theirs[k].([]any)
			if !ok {
				notes = append(notes, name)
				continue
			}
			have, _ := mine[k].([]any)
			mine[k] = append(slices.Clone(have), arr...)
		default:
			notes = append(notes, name)
		}
	}
	return notes
}

// DomainCovers reports whether an allowed-domain entry (host, or *.host
// for its subdomains) covers host.
func DomainCovers(entry, host string) bool {
	entry, host = strings.ToLower(entry), strings.ToLower(host)
	if entry == host {
		return true
	}
	if base, ok := strings.CutPrefix(entry, "*."); ok {
		return strings.HasSuffix(host, "."+base) || host == "*."+base
	}
	return false
}

func strings_(v any) ([]string, bool) {
	switch l := v.(type) {
	case []string:
		return slices.Clone(l), true
	case []any:
		var out []string
		for _, e := range l {
			s, ok := e.(string)
			if !ok {
				return out, false
			}
			out = append(out, s)
		}
		return out, true
	}
	return nil, false
}

func absAll(list []string, dir, home string) []string {
	out := make([]string, 0, len(list))
	for _, p := range list {
		switch {
		case strings.HasPrefix(p, "~/") && home != "":
			p = filepath.Join(home, p[2:])
		case !filepath.IsAbs(p):
			p = filepath.Join(dir, p)
		}
		out = append(out, filepath.Clean(p))
	}
	return out
}

func clone(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if sub, ok := v.(map[string]any); ok {
			v = clone(sub)
		}
		out[k] = v
	}
	return out
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
