package replay

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/recording"
)

// Grade is how much a drift matters to a client of the agent.
//
//   - Timing: the same lines, in another order within a turn (or keys in
//     another order, which is never even compared). Not drift.
//   - Compatible: only additions: a key, a line kind, a member of a list
//     that carries meaning. A client that ignores what it does not know
//     keeps working.
//   - Breaking: something a client may read is gone or changed: a key or
//     a line kind no longer sent, a value's JSON type changed, a
//     vocabulary value changed (a tool name, a permission mode), a member
//     of a meaningful list gone, a line of another kind in its place, the
//     agent's exit status, an input the live session never reached.
//
// A removed optional key (2.1.332 no longer sends can_use_tool's
// server_policy_ask_only) is breaking too: agentjq hands the agent's lines
// to filters, policies and approvers unchanged, and the check cannot know
// whether one of them reads the key.
type Grade int

// The grades, least first: a set of differences has the grade of its
// worst.
const (
	NoDrift Grade = iota
	Timing
	Compatible
	Breaking
)

// ExitCompatible is replay --check's exit status for compatible drift
// only (0 is no drift or timing only, 1 breaking drift).
const ExitCompatible = 3

func (g Grade) String() string {
	switch g {
	case Timing:
		return "timing"
	case Compatible:
		return "compatible"
	case Breaking:
		return "breaking"
	}
	return "none"
}

// ExitCode is replay --check's exit status for a check of this grade.
func (g Grade) ExitCode() int {
	switch g {
	case Compatible:
		return ExitCompatible
	case Breaking:
		return protocol.ExitError
	}
	return protocol.ExitSuccess
}

// Change is what a Difference found.
type Change int

// The changes Drift finds.
const (
	LineAdded    Change = iota // a line only the new transcript has
	LineGone                   // a line only the recording has
	KindChanged                // a line of another kind in the same place of the turn
	LineMoved                  // the same line kind at another place of its turn
	KeyAdded                   // a key path only the new line has
	KeyGone                    // a key path only the recorded line has
	TypeChanged                // the JSON type at a path changed
	ValueChanged               // a vocabulary value (vocabPaths) changed
	MemberAdded                // a member of a meaningful list (listPaths) is new
	MemberGone                 // a member of a meaningful list is gone
	Note                       // something about the whole session (Detail)
)

// Difference is one drift between a recorded transcript and a new one.
type Difference struct {
	Grade              Grade
	Change             Change
	OldIndex, NewIndex int    // positions in the transcripts; -1 when absent
	Kind               string // the recorded line's kind (the new one's when added)
	NewKind            string // KindChanged: the new line's kind
	Turn               int    // LineMoved: the turn (1 is the first)
	Path               string // key path, list path or vocabulary path
	Old, New           string // types (TypeChanged), values (ValueChanged), the member (Member*)
	Detail             string // Note
}

func (d Difference) String() string {
	pair := fmt.Sprintf("line %d→%d %s", d.OldIndex+1, d.NewIndex+1, d.Kind)
	switch d.Change {
	case LineAdded:
		return fmt.Sprintf("+ line %d %s: new", d.NewIndex+1, d.Kind)
	case LineGone:
		return fmt.Sprintf("- line %d %s: no longer sent", d.OldIndex+1, d.Kind)
	case KindChanged:
		return fmt.Sprintf("~ %s: now %s", pair, d.NewKind)
	case LineMoved:
		return fmt.Sprintf("~ %s: moved within turn %d", pair, d.Turn)
	case KeyAdded:
		return fmt.Sprintf("~ %s: +%s (new key)", pair, d.Path)
	case KeyGone:
		return fmt.Sprintf("~ %s: -%s (key no longer sent)", pair, d.Path)
	case TypeChanged:
		return fmt.Sprintf("~ %s: %s is %s, was %s", pair, d.Path, d.New, d.Old)
	case ValueChanged:
		return fmt.Sprintf("~ %s: %s is %q, was %q", pair, d.Path, d.New, d.Old)
	case MemberAdded:
		return fmt.Sprintf("~ %s: %s +%q (new member)", pair, d.Path, d.New)
	case MemberGone:
		return fmt.Sprintf("~ %s: %s -%q (member no longer listed)", pair, d.Path, d.Old)
	}
	return "! " + d.Detail
}

// findingKey is what a finding reports, whatever the line.
type findingKey struct {
	grade                              Grade
	change                             Change
	kind, newKind, path, before, after string
}

// key is what d reports without its lines: a finding repeated on several
// lines (system/init repeats every turn) is listed once. A moved line or
// a note is always its own finding (repeats false).
func (d Difference) key() (k findingKey, repeats bool) {
	return findingKey{d.Grade, d.Change, d.Kind, d.NewKind, d.Path, d.Old, d.New}, d.Change != LineMoved && d.Change != Note
}

// Drift compares two transcripts of agent lines by shape. Lines are
// grouped by stream (the main agent, each subagent); within a stream they
// are aligned by kind (longest common subsequence) and aligned lines are
// compared by key paths, the JSON types at them, vocabulary values and
// meaningful lists. Lines left over are paired within their turn: the
// same kind is a line that moved (timing), another kind of the same type
// a changed line. How the streams interleave is not compared: it varies
// from run to run. An empty result means no drift.
func Drift(a, b [][]byte) []Difference {
	sa, sb := shapes(a), shapes(b)
	ta, tb := turns(sa), turns(sb)
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
		diffs = append(diffs, driftAligned(sa, sb, ta, tb, ia[st], ib[st])...)
	}
	sort.SliceStable(diffs, func(i, j int) bool { return diffPos(diffs[i]) < diffPos(diffs[j]) })
	return diffs
}

func shapes(lines [][]byte) []LineShape {
	s := make([]LineShape, len(lines))
	for i, l := range lines {
		s[i] = Shape(l)
	}
	return s
}

// turns numbers each line's turn: 1 until the first result line (which
// ends turn 1), and so on.
func turns(s []LineShape) []int {
	t := make([]int, len(s))
	n := 1
	for i, x := range s {
		t[i] = n
		if strings.HasPrefix(x.Kind, "result") {
			n++
		}
	}
	return t
}

func diffPos(d Difference) int {
	if d.OldIndex >= 0 {
		return d.OldIndex
	}
	return d.NewIndex
}

// driftAligned aligns the lines xa of sa with the lines xb of sb.
func driftAligned(sa, sb []LineShape, ta, tb []int, xa, xb []int) []Difference {
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
	var gone, added []int
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && sa[xa[i]].Kind == sb[xb[j]].Kind:
			diffs = append(diffs, compareLines(sa, sb, xa[i], xb[j])...)
			i++
			j++
		case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
			added = append(added, xb[j])
			j++
		default:
			gone = append(gone, xa[i])
			i++
		}
	}
	// Leftovers: first the same kind in the same turn (moved), then the
	// same type in the same turn (changed kind), then truly gone or new.
	paired := map[int]bool{}
	pair := func(match func(o, c int) bool, found func(o, c int)) {
		rest := gone[:0:0]
		for _, o := range gone {
			hit := -1
			for _, c := range added {
				if !paired[c] && ta[o] == tb[c] && match(o, c) {
					hit = c
					break
				}
			}
			if hit < 0 {
				rest = append(rest, o)
				continue
			}
			paired[hit] = true
			found(o, hit)
		}
		gone = rest
	}
	pair(func(o, c int) bool { return sa[o].Kind == sb[c].Kind }, func(o, c int) {
		diffs = append(diffs, Difference{Grade: Timing, Change: LineMoved, OldIndex: o, NewIndex: c, Kind: sa[o].Kind, Turn: ta[o]})
		diffs = append(diffs, compareLines(sa, sb, o, c)...)
	})
	pair(func(o, c int) bool { return lineType(sa[o].Kind) == lineType(sb[c].Kind) }, func(o, c int) {
		diffs = append(diffs, Difference{Grade: Breaking, Change: KindChanged, OldIndex: o, NewIndex: c, Kind: sa[o].Kind, NewKind: sb[c].Kind})
	})
	for _, o := range gone {
		diffs = append(diffs, Difference{Grade: Breaking, Change: LineGone, OldIndex: o, NewIndex: -1, Kind: sa[o].Kind})
	}
	for _, c := range added {
		if !paired[c] {
			diffs = append(diffs, Difference{Grade: Compatible, Change: LineAdded, OldIndex: -1, NewIndex: c, Kind: sb[c].Kind})
		}
	}
	return diffs
}

// lineType is the top-level type of a kind ("result" of "result/success").
func lineType(kind string) string {
	if i := strings.IndexAny(kind, "/["); i >= 0 {
		return kind[:i]
	}
	return kind
}

// compareLines compares two lines of the same kind.
func compareLines(sa, sb []LineShape, o, c int) []Difference {
	a, b := sa[o], sb[c]
	at := func(g Grade, ch Change, path, old, new string) Difference {
		return Difference{Grade: g, Change: ch, OldIndex: o, NewIndex: c, Kind: a.Kind, Path: path, Old: old, New: new}
	}
	var diffs []Difference
	gone, added := setDiff(a.Paths, b.Paths)
	for _, p := range gone {
		diffs = append(diffs, at(Breaking, KeyGone, p, "", ""))
	}
	for _, p := range added {
		diffs = append(diffs, at(Compatible, KeyAdded, p, "", ""))
	}
	// A null where a value was (or the reverse) is a value, not a type:
	// optional fields are null until they are set.
	for _, p := range slices.Sorted(maps.Keys(a.types)) {
		x, y := a.types[p]&^tNull, b.types[p]&^tNull
		if _, ok := b.types[p]; ok && x != 0 && y != 0 && x != y {
			diffs = append(diffs, at(Breaking, TypeChanged, p, x.String(), y.String()))
		}
	}
	for _, p := range slices.Sorted(maps.Keys(a.values)) {
		if y, ok := b.values[p]; ok && y != a.values[p] {
			diffs = append(diffs, at(Breaking, ValueChanged, p, a.values[p], y))
		}
	}
	lists := map[string]bool{}
	for p := range a.lists {
		lists[p] = true
	}
	for p := range b.lists {
		lists[p] = true
	}
	for _, p := range slices.Sorted(maps.Keys(lists)) {
		gone, added := setDiff(sortedSet(a.lists[p]), sortedSet(b.lists[p]))
		for _, x := range gone {
			diffs = append(diffs, at(Breaking, MemberGone, p, x, ""))
		}
		for _, x := range added {
			diffs = append(diffs, at(Compatible, MemberAdded, p, "", x))
		}
	}
	return diffs
}

func sortedSet(s []string) []string {
	set := map[string]bool{}
	for _, x := range s {
		set[x] = true
	}
	return slices.Sorted(maps.Keys(set))
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

// Finding is one line of a check's report: a difference, and how many
// lines showed it.
type Finding struct {
	Difference
	Lines int
}

func (f Finding) String() string {
	s := fmt.Sprintf("%-10s  %s", f.Grade, f.Difference)
	if f.Lines > 1 {
		s += fmt.Sprintf(" (%d lines)", f.Lines)
	}
	return s
}

// Report is the graded comparison of a recording with a new transcript.
type Report struct {
	// RecordedVersion and LiveVersion are the agent's versions ("" when
	// a recording never said).
	RecordedVersion, LiveVersion string
	// Findings, worst first, each once.
	Findings []Finding
	// Warnings are the new session's version_drift warnings: the live
	// agent is not a checked version.
	Warnings []string
	Grade    Grade
}

// Count is the number of findings of grade g.
func (r Report) Count(g Grade) int {
	n := 0
	for _, f := range r.Findings {
		if f.Grade == g {
			n++
		}
	}
	return n
}

// GradeRecordings compares the agent's output in two recordings (Drift), notes a
// changed exit status of the agent (breaking) and the notes given (each
// breaking: an input the live session never reached), and grades the
// whole.
func GradeRecordings(old, cur []recording.Entry, notes ...string) Report {
	diffs := Drift(recording.Transcript(old, protocol.DirOut), recording.Transcript(cur, protocol.DirOut))
	if a, okA := exitOf(old); okA {
		if b, okB := exitOf(cur); okB && a != b {
			notes = append(notes, fmt.Sprintf("the agent exited with status %d, recorded %d", b, a))
		}
	}
	for _, n := range notes {
		diffs = append(diffs, Difference{Grade: Breaking, Change: Note, OldIndex: -1, NewIndex: -1, Detail: n})
	}
	r := Report{RecordedVersion: AgentVersion(old), LiveVersion: AgentVersion(cur), Warnings: versionWarnings(cur)}
	seen := map[findingKey]int{}
	for _, d := range diffs {
		r.Grade = max(r.Grade, d.Grade)
		k, repeats := d.key()
		if i, ok := seen[k]; ok && repeats {
			r.Findings[i].Lines++
			continue
		}
		seen[k] = len(r.Findings)
		r.Findings = append(r.Findings, Finding{Difference: d, Lines: 1})
	}
	sort.SliceStable(r.Findings, func(i, j int) bool { return r.Findings[i].Grade > r.Findings[j].Grade })
	return r
}

// AgentVersion is the agent's version a recording learnt: its meta entry,
// else the claude_code_version of its first system/init line.
func AgentVersion(entries []recording.Entry) string {
	for _, e := range entries {
		switch e.Dir {
		case protocol.DirMeta:
			var m struct {
				AgentVersion string `json:"agent_version"`
			}
			if json.Unmarshal(e.Msg, &m) == nil && m.AgentVersion != "" {
				return m.AgentVersion
			}
		case protocol.DirOut:
			var m struct {
				Type    string `json:"type"`
				Subtype string `json:"subtype"`
				Version string `json:"claude_code_version"`
			}
			if json.Unmarshal(e.Msg, &m) == nil && m.Type == protocol.TypeSystem && m.Subtype == "init" && m.Version != "" {
				return m.Version
			}
		}
	}
	return ""
}

// versionWarnings are a session's version_drift warnings (spawn's canary:
// the agent is not a checked version).
func versionWarnings(entries []recording.Entry) []string {
	var w []string
	for _, e := range entries {
		if e.Dir != protocol.DirEvent {
			continue
		}
		var v protocol.Warning
		if json.Unmarshal(e.Msg, &v) == nil && v.Subtype == protocol.EventWarning && v.Code == protocol.WarnVersion {
			w = append(w, v.Message)
		}
	}
	return w
}

// Describe names an agent version for a report: "claude 2.1.332", or
// "claude (version unknown)".
func Describe(agent, version string) string {
	if agent == "" {
		agent = "claude"
	}
	if version == "" {
		return agent + " (version unknown)"
	}
	return agent + " " + version
}
