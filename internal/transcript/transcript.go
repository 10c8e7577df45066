// Package transcript finds the session files Claude Code writes itself:
// ~/.claude/projects/<escaped project dir>/<session id>.jsonl, one JSON
// object a line, and the subagents' files beside them
// (<session id>/subagents/agent-<id>.jsonl, with a .meta.json naming the
// Task call that started each). filter and --view read them as streams;
// this package only names and orders the files.
package transcript

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
)

// maxSlug is the length above which Claude Code cuts an escaped project
// path and appends a hash (2.1.328 and 2.1.332 alike).
const maxSlug = 200

// ProjectSlug is the name Claude Code gives the folder of a project's
// sessions: every character that is not an ASCII letter or digit becomes
// "-"; a name longer than 200 is cut there and followed by "-" and a hash
// of the path (the Java string hash of its UTF-16 units, in base 36).
func ProjectSlug(dir string) string {
	var b strings.Builder
	for _, r := range dir {
		n := 1
		if r >= 0x10000 {
			n = 2 // one UTF-16 surrogate pair: two characters to JavaScript
		}
		for range n {
			if r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
				b.WriteRune(r)
			} else {
				b.WriteByte('-')
			}
		}
	}
	s := b.String()
	if len(s) <= maxSlug {
		return s
	}
	var h int32
	for _, u := range utf16.Encode([]rune(dir)) {
		h = h*31 + int32(u)
	}
	v := int64(h)
	if v < 0 {
		v = -v
	}
	return s[:maxSlug] + "-" + strconv.FormatInt(v, 36)
}

// ConfigDir is Claude Code's configuration directory: $CLAUDE_CONFIG_DIR,
// else ~/.claude. getenv reads the environment (os.Getenv in a program).
func ConfigDir(getenv func(string) string) string {
	if d := getenv("CLAUDE_CONFIG_DIR"); d != "" {
		return d
	}
	home := getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return filepath.Join(home, ".claude")
}

// ProjectDir is the folder holding the sessions of the project at dir.
func ProjectDir(getenv func(string) string, dir string) string {
	return filepath.Join(ConfigDir(getenv), "projects", ProjectSlug(dir))
}

// Sessions lists the *.jsonl files directly in dir (not the subagents'
// files below), oldest first: by the first timestamp each holds, else by
// its modification time; ties by name. Only the head of each file is
// read, so the cost does not depend on the files' size.
func Sessions(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	type file struct {
		path string
		at   time.Time
	}
	var files []file
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".jsonl") {
			continue
		}
		p := filepath.Join(dir, e.Name())
		at, ok := FirstTimestamp(p)
		if !ok {
			if fi, err := e.Info(); err == nil {
				at = fi.ModTime()
			}
		}
		files = append(files, file{p, at})
	}
	sort.SliceStable(files, func(i, j int) bool {
		if !files[i].at.Equal(files[j].at) {
			return files[i].at.Before(files[j].at)
		}
		return files[i].path < files[j].path
	})
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f.path
	}
	return out, nil
}

// headBytes bounds how much of a file FirstTimestamp reads.
const headBytes = 256 << 10

// FirstTimestamp is the first "timestamp" of the lines in the first
// 256 KiB of the file at path.
func FirstTimestamp(path string) (time.Time, bool) {
	f, err := os.Open(path)
	if err != nil {
		return time.Time{}, false
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, headBytes))
	sc.Buffer(make([]byte, 64<<10), headBytes)
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.Contains(line, []byte(`"timestamp"`)) {
			continue
		}
		var v struct {
			Timestamp string `json:"timestamp"`
		}
		if json.Unmarshal(line, &v) != nil || v.Timestamp == "" {
			continue
		}
		if t, err := time.Parse(time.RFC3339Nano, v.Timestamp); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// Subagent is one subagent's file of a session.
type Subagent struct {
	Path string
	// ToolUseID is the Task (Agent) call that started it, from the
	// .meta.json beside it; "" when there is none.
	ToolUseID   string
	AgentType   string
	Description string
}

// Subagents lists the subagent files of the session file at path
// (<dir>/<session id>/subagents/agent-*.jsonl), by name.
func Subagents(path string) []Subagent {
	dir := filepath.Join(strings.TrimSuffix(path, ".jsonl"), "subagents")
	names, _ := filepath.Glob(filepath.Join(dir, "agent-*.jsonl"))
	sort.Strings(names)
	var out []Subagent
	for _, n := range names {
		s := Subagent{Path: n}
		if b, err := os.ReadFile(strings.TrimSuffix(n, ".jsonl") + ".meta.json"); err == nil {
			var m struct {
				ToolUseID   string `json:"toolUseId"`
				AgentType   string `json:"agentType"`
				Description string `json:"description"`
			}
			if json.Unmarshal(b, &m) == nil {
				s.ToolUseID, s.AgentType, s.Description = m.ToolUseID, m.AgentType, m.Description
			}
		}
		out = append(out, s)
	}
	return out
}

// IsSubagentFile reports whether path is a subagent's file
// (.../subagents/agent-*.jsonl), which a view shows under its session.
func IsSubagentFile(path string) bool {
	return filepath.Base(filepath.Dir(path)) == "subagents" && strings.HasPrefix(filepath.Base(path), "agent-")
}
