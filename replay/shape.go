package replay

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// LineShape is what drift checking compares of one agent line: its kind
// (type, subtype, control request subtype, content block types) and the
// set of key paths it carries. Values are ignored, so ids, uuids,
// timestamps, durations, costs, session ids and paths never drift.
type LineShape struct {
	Kind  string
	Paths []string // sorted, e.g. ".message.content[].type"
	// Stream is the line's parent_tool_use_id, or "tasks" for the system
	// events of background tasks (task_*, background_tasks_changed): a
	// subagent's lines and a task's lifecycle come interleaved with the
	// parent's turn in no fixed order, so each stream is compared on its
	// own ("" is the main one).
	Stream string
}

// opaqueKeys hold objects whose keys are data, not schema (tool inputs,
// per-model usage, question answers): only their presence is compared.
var opaqueKeys = map[string]bool{
	"input": true, "updatedInput": true, "tool_input": true, "tool_use_result": true,
	"modelUsage": true, "answers": true, "hooks": true, "arguments": true, "params": true,
	"properties": true, "inputSchema": true, "_meta": true, "structured_output": true,
	"mcp_response": true,
}

// Shape returns the shape of one line.
func Shape(line []byte) LineShape {
	var v any
	dec := json.NewDecoder(strings.NewReader(string(line)))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return LineShape{Kind: "non-JSON"}
	}
	set := map[string]bool{}
	shapePaths("", v, set)
	s := LineShape{Kind: shapeKind(v)}
	if m, ok := v.(map[string]any); ok {
		s.Stream, _ = m["parent_tool_use_id"].(string)
		if typ, _ := m["type"].(string); typ == "system" {
			if st, _ := m["subtype"].(string); strings.HasPrefix(st, "task_") || st == "background_tasks_changed" {
				s.Stream = "tasks"
			}
		}
	}
	for p := range set {
		s.Paths = append(s.Paths, p)
	}
	sort.Strings(s.Paths)
	return s
}

func shapePaths(path string, v any, set map[string]bool) {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			p := path + "." + jqKey(k)
			set[p] = true
			if _, isObj := x.(map[string]any); isObj && opaqueKeys[k] {
				continue
			}
			shapePaths(p, x, set)
		}
	case []any:
		for _, x := range t {
			shapePaths(path+"[]", x, set)
		}
	}
}

func shapeKind(v any) string {
	m, ok := v.(map[string]any)
	if !ok {
		return "non-object"
	}
	str := func(m map[string]any, k string) string { s, _ := m[k].(string); return s }
	kind := str(m, "type")
	if st := str(m, "subtype"); st != "" {
		kind += "/" + st
	}
	if r, ok := m["request"].(map[string]any); ok {
		kind += "/" + str(r, "subtype")
	}
	if r, ok := m["response"].(map[string]any); ok && kind == "control_response" {
		kind += "/" + str(r, "subtype")
	}
	if e, ok := m["event"].(map[string]any); ok {
		kind += "/" + str(e, "type")
	}
	if msg, ok := m["message"].(map[string]any); ok {
		if blocks, ok := msg["content"].([]any); ok {
			var types []string
			for _, b := range blocks {
				if bm, ok := b.(map[string]any); ok {
					types = append(types, str(bm, "type"))
				}
			}
			kind += "[" + strings.Join(types, ",") + "]"
		}
	}
	return kind
}

// Difference is one drift between a recorded transcript and a new one.
type Difference struct {
	OldIndex, NewIndex int // positions in the transcripts; -1 when absent
	Kind               string
	Missing            bool     // the line is in the recording only
	Added              bool     // the line is in the new transcript only
	KeysGone, KeysNew  []string // key paths that disappeared or appeared
}

func (d Difference) String() string {
	switch {
	case d.Missing:
		return fmt.Sprintf("- line %d %s: no longer sent", d.OldIndex+1, d.Kind)
	case d.Added:
		return fmt.Sprintf("+ line %d %s: new", d.NewIndex+1, d.Kind)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "~ line %d→%d %s:", d.OldIndex+1, d.NewIndex+1, d.Kind)
	for _, k := range d.KeysGone {
		b.WriteString(" -" + k)
	}
	for _, k := range d.KeysNew {
		b.WriteString(" +" + k)
	}
	return b.String()
}

// Drift compares two transcripts of agent lines by shape. Lines are
// grouped by stream (the main agent, each subagent); within a stream they
// are aligned by kind (longest common subsequence) and aligned lines are
// compared by key paths. How the streams interleave is not compared: it
// varies from run to run. An empty result means no drift.
func Drift(a, b [][]byte) []Difference {
	sa, sb := make([]LineShape, len(a)), make([]LineShape, len(b))
	for i, l := range a {
		sa[i] = Shape(l)
	}
	for i, l := range b {
		sb[i] = Shape(l)
	}
	var streams []string
	ia, ib := map[string][]int{}, map[string][]int{}
	for i, s := range sa {
		if _, ok := ia[s.Stream]; !ok {
			streams = append(streams, s.Stream)
		}
		ia[s.Stream] = append(ia[s.Stream], i)
	}
	for i, s := range sb {
		if _, seen := ia[s.Stream]; !seen {
			if _, ok := ib[s.Stream]; !ok {
				streams = append(streams, s.Stream)
			}
		}
		ib[s.Stream] = append(ib[s.Stream], i)
	}
	var diffs []Difference
	for _, st := range streams {
		diffs = append(diffs, driftAligned(sa, sb, ia[st], ib[st])...)
	}
	sort.SliceStable(diffs, func(i, j int) bool { return diffPos(diffs[i]) < diffPos(diffs[j]) })
	return diffs
}

func diffPos(d Difference) int {
	if d.OldIndex >= 0 {
		return d.OldIndex
	}
	return d.NewIndex
}

// driftAligned aligns the lines xa of sa with the lines xb of sb.
func driftAligned(sa, sb []LineShape, xa, xb []int) []Difference {
	n, m := len(xa), len(xb)
	// lcs[i][j]: the LCS length of xa[i:], xb[j:].
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if sa[xa[i]].Kind == sb[xb[j]].Kind {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var diffs []Difference
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && sa[xa[i]].Kind == sb[xb[j]].Kind:
			gone, added := setDiff(sa[xa[i]].Paths, sb[xb[j]].Paths)
			if len(gone) > 0 || len(added) > 0 {
				diffs = append(diffs, Difference{OldIndex: xa[i], NewIndex: xb[j], Kind: sa[xa[i]].Kind, KeysGone: gone, KeysNew: added})
			}
			i++
			j++
		case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
			diffs = append(diffs, Difference{OldIndex: -1, NewIndex: xb[j], Kind: sb[xb[j]].Kind, Added: true})
			j++
		default:
			diffs = append(diffs, Difference{OldIndex: xa[i], NewIndex: -1, Kind: sa[xa[i]].Kind, Missing: true})
			i++
		}
	}
	return diffs
}

func setDiff(a, b []string) (gone, added []string) {
	in := func(s []string, x string) bool {
		k := sort.SearchStrings(s, x)
		return k < len(s) && s[k] == x
	}
	for _, x := range a {
		if !in(b, x) {
			gone = append(gone, x)
		}
	}
	for _, x := range b {
		if !in(a, x) {
			added = append(added, x)
		}
	}
	return gone, added
}
