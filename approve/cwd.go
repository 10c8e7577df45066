package approve

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"

	"github.com/agentjq/agentjq/internal/protocol"
)

// shellCwd follows where claude's Bash tool is. The tool keeps its working
// directory between calls, and a cd runs without asking, so a file tool's
// relative path is judged against every directory the shell may be in. Every Bash
// call the chain decides and does not deny may have run: its possible end
// directories join the set (the set only grows, since agentjq cannot tell
// whether a call it did not deny really ran, or whether claude put the
// shell back in the project). Past maxDirs directories, or after a cd
// agentjq cannot follow, the directory is unknown and relative paths are
// not allowed by any rule.
type shellCwd struct {
	mu      sync.Mutex
	dirs    []string // absolute; nil until the first request names the cwd
	unknown bool
	// seen are the calls already followed (tool_use id and input),
	// oldest first: a call seen on the stream and then decided is followed
	// once, not twice. The first time is enough: the stream shows a call's
	// tool_use after every call before it, so the set then already holds
	// every directory the call can start in; following it again later
	// would add directories it cannot start in (false denies). A call
	// decided with a changed input is followed again: that input is the
	// one that runs.
	seen []string
}

// maxSeen bounds the memory of followed calls; an id forgotten is at worst
// followed twice.
const maxSeen = 1024

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
	a, err := analyzeBash(in.Command)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.unknown || s.followed(req.ToolUseID, string(req.Input)) {
		return
	}
	// A call whose input cannot be read may still run: where it leaves
	// the shell is unknown.
	if bad != "" || err != nil || a.end.unknown {
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

// followed reports whether the call was followed before, and notes it.
func (s *shellCwd) followed(id, input string) bool {
	if id == "" {
		return false
	}
	key := id + "\x00" + input
	for _, x := range s.seen {
		if x == key {
			return true
		}
	}
	s.seen = append(s.seen, key)
	if len(s.seen) > maxSeen {
		s.seen = s.seen[1:]
	}
	return false
}

// ObserveBash records a Bash call seen on the agent's stream (a tool_use),
// which may run without the chain deciding it (claude runs read-only
// commands such as cd without asking), so the file tools' relative paths
// after it are judged where the shell may really be. A call the chain then decides is
// not followed twice (toolUseID). A call that is then denied stays
// followed: the set of directories only grows, which is fail-closed.
//
// Who calls it: `agentjq approve` (Serve), which reads the agent's whole
// stream and has no PreToolUse hook. spawn does not: whenever its chain
// can allow anything (a policy, an approver or a terminal: Chain.Guards),
// it registers agentjq's PreToolUse hook, which puts every call through
// Screen (so the tracker follows every call that is not denied) and reports
// the shell's real directory (Request.ShellCwd) besides; without the hook,
// the chain is the default alone, which allows nothing, or the agent (the
// context profile) asks nothing. Reading every assistant line for Bash
// calls would cost the data path and add nothing there.
func (c *Chain) ObserveBash(cwd, toolUseID string, input json.RawMessage) {
	req := &Request{CanUseTool: protocol.CanUseTool{ToolName: "Bash", Input: input, ToolUseID: toolUseID}, Cwd: cwd}
	if req.Cwd == "" {
		req.Cwd = c.opts.Cwd
	}
	c.shell.observe(req, Verdict{Behavior: protocol.Allow}, c.opts.Home)
}
