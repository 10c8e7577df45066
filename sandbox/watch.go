package sandbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/protect"
	"github.com/coregx/ahocorasick"
)

// MinVersion is the oldest claude whose sandbox agentjq has checked live:
// it reports nothing of the sandbox on its init line, so what holds it on
// is failIfUnavailable, which refuses to start without a working sandbox
// or with sandbox settings it cannot take (checked on 2.1.328 and
// 2.1.332). 2.1.332 and later also say "sandbox_enabled" there.
const MinVersion = "2.1.328"

// A Watcher reads a session's agent lines for what the sandbox stopped:
// the tool results of Bash calls that hit a denied write (EROFS), a denied
// read (a path of denyRead, refused) or a denied host (claude's own
// <sandbox_violations> report). It also checks the init line: a sandbox
// the agent says is off ends the session (Unverified).
type Watcher struct {
	// Off: the sandbox was turned off (--no-sandbox, the policy); the
	// init line gets a warning instead of a check.
	Off bool
	// Unverified is called once when the agent's init line says the
	// sandbox is off, or the agent is older than MinVersion.
	Unverified func(why string)

	denyRead  []string
	denyWrite []string
	project   string

	initSeen bool
	mu       sync.Mutex
	bash     map[string]bool // ids of the Bash calls seen, until their result
}

// NewWatcher watches a session whose sandbox block is settings (Settings'
// result, or nil when off); project resolves relative paths in errors.
func NewWatcher(settings map[string]any, project string) *Watcher {
	w := &Watcher{project: project, bash: map[string]bool{}, Off: settings == nil}
	if fs, ok := settings["filesystem"].(map[string]any); ok {
		w.denyRead, _ = strings_(fs["denyRead"])
		w.denyWrite, _ = strings_(fs["denyWrite"])
	}
	return w
}

// Line reads one agent line of the given type and subtype and returns the
// events of agentjq's to write for it.
func (w *Watcher) Line(typ, subtype string, line []byte) []any {
	switch typ {
	case protocol.TypeSystem:
		if subtype == "init" && !w.initSeen {
			// The first init line says how the agent runs; later turns'
			// repeat it.
			w.initSeen = true
			return w.init(line)
		}
	case "assistant":
		if bytes.Contains(line, []byte(`"name":"Bash"`)) {
			w.noteBash(line)
		}
	case "user":
		if w.resultOfBash(line) && hasHint(line) {
			return w.results(line)
		}
	}
	return nil
}

// hints find the lines worth reading: a sandbox report, or an error a
// sandbox makes, as programs print them. They are searched for all at
// once, in one pass of an Aho-Corasick automaton over the line: a regexp
// over every tool result (some are megabytes) made spawn 25 times
// slower, and a search for each hint in turn (bytes.Contains stops at
// every byte like a hint's first, an e or an o) still 2.5 times.
var hints = []string{
	"sandbox_violations", "ead-only file system", "EROFS", "EACCES",
	"ermission denied", "peration not permitted", "ouldn't read", "ould not read",
	"ould not lock config file", "nable to create temporary object directory",
	"READ-ONLY FILE SYSTEM", "PERMISSION DENIED",
}

var hintAC = sync.OnceValue(func() *ahocorasick.Automaton {
	ac, err := ahocorasick.NewBuilder().AddStrings(hints).Build()
	if err != nil {
		panic("sandbox: the watcher's hints: " + err.Error())
	}
	return ac
})

func hasHint(line []byte) bool {
	_, ok := hintAC().Find(line, 0)
	return ok
}

func (w *Watcher) init(line []byte) []any {
	var in struct {
		Enabled *bool  `json:"sandbox_enabled"`
		Version string `json:"claude_code_version"`
	}
	json.Unmarshal(line, &in)
	if w.Off {
		return []any{protocol.NewWarning(protocol.WarnSandboxOff, "the sandbox is off (--no-sandbox or the policy's sandbox.enabled): file, read and network limits are not enforced for the agent's commands")}
	}
	var why string
	switch {
	case in.Enabled != nil && !*in.Enabled:
		why = "the agent says its sandbox is off (sandbox_enabled false on its init line)"
	case in.Enabled == nil && in.Version != "" && olderThan(in.Version, MinVersion):
		why = fmt.Sprintf("claude %s is older than %s, the oldest whose sandbox agentjq has checked", in.Version, MinVersion)
	}
	if why == "" {
		return nil
	}
	if w.Unverified != nil {
		w.Unverified(why)
	}
	return []any{protocol.NewWarning(protocol.WarnSandboxOff, why+"; agentjq ends the session")}
}

// maxBash bounds the Bash calls remembered without a result yet.
const maxBash = 4096

// resultOfBash reports whether a line holds the result of a Bash call
// that waits for it: the line's tool_use_ids are looked up, so a line
// costs one search however many calls wait.
func (w *Watcher) resultOfBash(line []byte) bool {
	key := []byte(`"tool_use_id":"`)
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.bash) == 0 {
		return false
	}
	for rest := line; ; {
		i := bytes.Index(rest, key)
		if i < 0 {
			return false
		}
		rest = rest[i+len(key):]
		if j := bytes.IndexByte(rest, '"'); j >= 0 && w.bash[string(rest[:j])] {
			return true
		}
	}
}

func (w *Watcher) noteBash(line []byte) {
	var m struct {
		Message struct {
			Content []protocol.Block `json:"content"`
		} `json:"message"`
	}
	if json.Unmarshal(line, &m) != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, b := range m.Message.Content {
		if b.Type == "tool_use" && b.Name == "Bash" && len(w.bash) < maxBash {
			w.bash[b.ID] = true
		}
	}
}

func (w *Watcher) results(line []byte) []any {
	var m struct {
		Message struct {
			Content []protocol.Block `json:"content"`
		} `json:"message"`
	}
	if json.Unmarshal(line, &m) != nil {
		return nil
	}
	var out []any
	for _, b := range m.Message.Content {
		if b.Type != "tool_result" {
			continue
		}
		w.mu.Lock()
		isBash := w.bash[b.ToolUseID]
		delete(w.bash, b.ToolUseID)
		w.mu.Unlock()
		if !isBash {
			continue
		}
		if blocked := w.Blocked(protocol.ContentText(b.Content, false)); len(blocked) > 0 {
			out = append(out, protocol.Sandboxed{Type: protocol.TypeAgentjq, Subtype: protocol.EventSandbox,
				ToolUseID: b.ToolUseID, Tool: "Bash", Blocked: blocked})
		}
	}
	return out
}

// maxBlocked bounds what one event names.
const maxBlocked = 20

var (
	violationRE = regexp.MustCompile(`(?m)^deny ([a-z-]+) (\S+)`)
	// A quoted path: an apostrophe inside a word (couldn't) opens none.
	quotedRE = regexp.MustCompile(`(?:^|[^\w])'([^'\n]+)'|"([^"\n]+)"|‘([^’\n]+)’|“([^”\n]+)”`)
	// erofsRE: a write the sandbox refused, as the error says it: EROFS,
	// and git's messages for a lock or object directory it could not make.
	erofsRE  = regexp.MustCompile(`(?i)read-only file system|EROFS|could not lock config file|unable to create temporary object directory`)
	deniedRE = regexp.MustCompile(`(?i)permission denied|operation not permitted|couldn't read|EACCES|EPERM`)
	pathRE   = regexp.MustCompile(`(?:^|[\s:(])(/?[\w.~-][\w./~-]*)`)
)

// Blocked reads a Bash result's text for what the sandbox refused: the
// hosts and paths of claude's <sandbox_violations> report, the path of
// each "Read-only file system" error (a write outside what the sandbox
// allows), and each refused read of a path in denyRead.
func (w *Watcher) Blocked(text string) []protocol.Blocked {
	var out []protocol.Blocked
	seen := map[string]bool{}
	add := func(b protocol.Blocked) {
		k := b.Kind + "\x00" + b.Path + "\x00" + b.Host
		if !seen[k] && len(out) < maxBlocked {
			seen[k] = true
			out = append(out, b)
		}
	}
	if i := strings.Index(text, "<sandbox_violations>"); i >= 0 {
		report := text[i:]
		if j := strings.Index(report, "</sandbox_violations>"); j >= 0 {
			report = report[:j]
		}
		for _, m := range violationRE.FindAllStringSubmatch(report, -1) {
			switch {
			case strings.Contains(m[1], "network"):
				add(protocol.Blocked{Kind: "network", Host: m[2]})
			case strings.Contains(m[1], "read"):
				add(protocol.Blocked{Kind: "read", Path: m[2]})
			default:
				add(protocol.Blocked{Kind: "write", Path: m[2]})
			}
		}
		text = strings.Replace(text, text[i:i+len(report)], "", 1)
	}
	for _, l := range strings.Split(text, "\n") {
		switch {
		case erofsRE.MatchString(l):
			add(protocol.Blocked{Kind: "write", Path: w.abs(errPath(l)), Text: clip(l)})
		case deniedRE.MatchString(l):
			// Refused: a read of a denyRead path, or a write to a file
			// the sandbox holds (claude's own settings, a control file).
			for _, p := range candidates(l) {
				abs := w.abs(p)
				if within(abs, w.denyRead) {
					add(protocol.Blocked{Kind: "read", Path: abs, Text: clip(l)})
					break
				}
				if within(abs, w.denyWrite) || protect.Root(abs, "") != "" {
					add(protocol.Blocked{Kind: "write", Path: abs, Text: clip(l)})
					break
				}
			}
		}
	}
	return out
}

// errPath picks the path an error line names: a quoted one, else the
// first word that looks like a path before the error.
func errPath(l string) string {
	if m := quotedRE.FindStringSubmatch(l); m != nil {
		return quoted(m)
	}
	parts := erofsRE.Split(l, 2)
	if c := candidates(parts[0]); len(c) > 0 {
		return c[len(c)-1]
	}
	if len(parts) > 1 {
		if c := candidates(parts[1]); len(c) > 0 {
			return c[0]
		}
	}
	return ""
}

func candidates(l string) []string {
	var out []string
	for _, m := range quotedRE.FindAllStringSubmatch(l, -1) {
		out = append(out, quoted(m))
	}
	for _, m := range pathRE.FindAllStringSubmatch(l, -1) {
		if strings.ContainsAny(m[1], "/.") {
			out = append(out, strings.TrimRight(m[1], ".:,"))
		}
	}
	return out
}

// quoted is the text a quotedRE match holds, whichever quotes it had.
func quoted(m []string) string {
	for _, g := range m[1:] {
		if g != "" {
			return g
		}
	}
	return ""
}

func (w *Watcher) abs(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(w.project, p)
}

func clip(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// olderThan compares dotted versions numerically.
func olderThan(v, min string) bool {
	a, b := strings.Split(v, "."), strings.Split(min, ".")
	for i := 0; i < len(a) && i < len(b); i++ {
		x, err1 := strconv.Atoi(a[i])
		y, err2 := strconv.Atoi(b[i])
		if err1 != nil || err2 != nil {
			return false
		}
		if x != y {
			return x < y
		}
	}
	return len(a) < len(b)
}
