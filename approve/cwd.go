package approve

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"

	"github.com/agentjq/agentjq/protocol"
)

// shellCwd follows where claude's Bash tool is. The tool keeps its working
// directory between calls, and a cd runs without asking, so a relative
// write is judged against every directory the shell may be in. Every Bash
// call the chain decides and does not deny may have run: its possible end
// directories join the set (the set only grows, since agentjq cannot tell
// whether a call it did not deny really ran, or whether claude put the
// shell back in the project). Past maxDirs directories, or after a cd
// agentjq cannot follow, the directory is unknown and relative writes are
// not allowed by any rule.
type shellCwd struct {
	mu      sync.Mutex
	dirs    []string // absolute; nil until the first request names the cwd
	unknown bool
}

// at returns the directories the shell may be in (empty: unknown).
func (s *shellCwd) at(sessionCwd string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.unknown {
		return []string{}
	}
	if s.dirs == nil && sessionCwd != "" {
		s.dirs = []string{filepath.Clean(sessionCwd)}
	}
	return append([]string(nil), s.dirs...)
}

// observe records a decided Bash call.
func (s *shellCwd) observe(req *Request, v Verdict, home string) {
	if req.ToolName != "Bash" || v.Behavior == "deny" {
		return
	}
	in, bad := readToolInput("Bash", req.Input)
	if bad != "" {
		return
	}
	a, err := analyzeBash(in.Command)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.unknown {
		return
	}
	if err != nil || a.end.unknown {
		s.unknown = true
		return
	}
	if s.dirs == nil {
		if req.Cwd == "" {
			s.unknown = true
			return
		}
		s.dirs = []string{filepath.Clean(req.Cwd)}
	}
	var add []string
	for _, base := range s.dirs {
		for _, d := range a.end.dirs {
			switch {
			case d == "":
				continue
			case filepath.IsAbs(d):
				add = append(add, filepath.Clean(d))
			case d == "~" || strings.HasPrefix(d, "~/"):
				if home == "" {
					s.unknown = true
					return
				}
				add = append(add, filepath.Join(home, d[1:]))
			default:
				add = append(add, filepath.Join(base, d))
			}
		}
	}
	for _, d := range add {
		found := false
		for _, x := range s.dirs {
			if x == d {
				found = true
				break
			}
		}
		if !found {
			s.dirs = append(s.dirs, d)
		}
	}
	if len(s.dirs) > maxDirs {
		s.unknown = true
	}
}

// ObserveBash records a Bash call that ran without the chain deciding it
// (a tool_use on the stream that claude allowed by itself), so relative
// writes after it are judged where the shell really is.
func (c *Chain) ObserveBash(cwd, command string) {
	in, _ := json.Marshal(map[string]string{"command": command})
	req := &Request{CanUseTool: protocol.CanUseTool{ToolName: "Bash", Input: in}, Cwd: cwd}
	if req.Cwd == "" {
		req.Cwd = c.opts.Cwd
	}
	c.shell.observe(req, Verdict{Behavior: protocol.Allow}, c.opts.Home)
}
