package replay

import (
	"strings"
	"testing"

	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/recording"
)

// session is a small synthetic recording: the agent's lines, in order.
func session(lines ...string) []recording.Entry {
	var e []recording.Entry
	for i, l := range lines {
		e = append(e, recording.Entry{Seq: int64(i + 1), Dir: protocol.DirOut, Msg: []byte(l)})
	}
	return e
}

const (
	gInit   = `{"type":"system","subtype":"init","session_id":"a","tools":["Bash","Write"],"capabilities":["x_v1"],"permissionMode":"default","claude_code_version":"2.1.328"}`
	gText   = `{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"hi"}]},"parent_tool_use_id":null}`
	gRate   = `{"type":"rate_limit_event","rate_limit_info":{"status":"allowed"}}`
	gResult = `{"type":"result","subtype":"success","num_turns":1,"stop_reason":null,"result":"hi"}`
)

func TestGrades(t *testing.T) {
	rec := session(gInit, gText, gRate, gResult)
	for _, c := range []struct {
		name  string
		live  []recording.Entry
		grade Grade
		exit  int
		want  string // in the report
	}{
		{"no drift, other values", session(strings.Replace(gInit, `"a"`, `"b"`, 1), strings.Replace(gText, `"hi"`, `"ho"`, 1), gRate, gResult), NoDrift, 0, ""},
		{"keys in another order", session(`{"subtype":"init","type":"system","tools":["Write","Bash"],"session_id":"a","permissionMode":"default","capabilities":["x_v1"],"claude_code_version":"2.1.328"}`, gText, gRate, gResult), NoDrift, 0, ""},
		{"added key", session(strings.Replace(gInit, `"session_id"`, `"sandbox_enabled":false,"session_id"`, 1), gText, gRate, gResult), Compatible, 3, "+.sandbox_enabled (new key)"},
		{"added line kind", session(gInit, gText, gRate, `{"type":"system","subtype":"status","status":"ok"}`, gResult), Compatible, 3, "+ line 4 system/status: new"},
		{"removed key", session(gInit, gText, gRate, strings.Replace(gResult, `"num_turns":1,`, ``, 1)), Breaking, 1, "-.num_turns (key no longer sent)"},
		{"line kind gone", session(gInit, gText, gResult), Breaking, 1, "- line 3 rate_limit_event: no longer sent"},
		{"changed line kind", session(gInit, gText, gRate, strings.Replace(gResult, `"success"`, `"error_max_turns"`, 1)), Breaking, 1, "~ line 4→4 result/success: now result/error_max_turns"},
		{"reordered within the turn", session(gInit, gRate, gText, gResult), Timing, 0, "moved within turn 1"},
		{"list member added", session(strings.Replace(gInit, `["x_v1"]`, `["x_v1","withdrawn_tools_v1"]`, 1), gText, gRate, gResult), Compatible, 3, `.capabilities[] +"withdrawn_tools_v1" (new member)`},
		{"list member gone", session(strings.Replace(gInit, `["Bash","Write"]`, `["Write"]`, 1), gText, gRate, gResult), Breaking, 1, `.tools[] -"Bash" (member no longer listed)`},
		{"type changed", session(gInit, gText, gRate, strings.Replace(gResult, `"num_turns":1`, `"num_turns":"1"`, 1)), Breaking, 1, ".num_turns is string, was number"},
		{"null became a value", session(gInit, gText, gRate, strings.Replace(gResult, `"stop_reason":null`, `"stop_reason":"end_turn"`, 1)), NoDrift, 0, ""},
		{"vocabulary value changed", session(strings.Replace(gInit, `"default"`, `"plan"`, 1), gText, gRate, gResult), Breaking, 1, `.permissionMode is "plan", was "default"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := GradeRecordings(rec, c.live)
			var report []string
			for _, f := range r.Findings {
				report = append(report, f.String())
			}
			text := strings.Join(report, "\n")
			if r.Grade != c.grade || r.Grade.ExitCode() != c.exit {
				t.Errorf("grade %s (exit %d), want %s (exit %d)\n%s", r.Grade, r.Grade.ExitCode(), c.grade, c.exit, text)
			}
			if c.want == "" && len(r.Findings) != 0 || !strings.Contains(text, c.want) {
				t.Errorf("report lacks %q:\n%s", c.want, text)
			}
			if c.want != "" && !strings.HasPrefix(text, c.grade.String()) {
				t.Errorf("the worst finding is not first, or not graded %s:\n%s", c.grade, text)
			}
		})
	}
}

// TestGradeMovedAcrossTurns: a line that moved into another turn is not
// timing: it is gone from one turn and new in the other.
func TestGradeMovedAcrossTurns(t *testing.T) {
	rec := session(gInit, gText, gRate, gResult, gInit, gText, gResult)
	live := session(gInit, gText, gResult, gInit, gText, gRate, gResult)
	r := GradeRecordings(rec, live)
	if r.Grade != Breaking || r.Count(Breaking) != 1 || r.Count(Compatible) != 1 || r.Count(Timing) != 0 {
		t.Errorf("grade %s, findings %v", r.Grade, r.Findings)
	}
}

// TestGradeRepeatedFindingOnce: system/init repeats every turn; a key it
// gained is one finding over both lines, and the versions are named.
func TestGradeRepeatedFindingOnce(t *testing.T) {
	newInit := strings.Replace(strings.Replace(gInit, `"session_id"`, `"served_by_anthropic":false,"session_id"`, 1), "2.1.328", "2.1.332", 1)
	r := GradeRecordings(session(gInit, gText, gResult, gInit, gText, gResult), session(newInit, gText, gResult, newInit, gText, gResult))
	if len(r.Findings) != 1 || r.Findings[0].Lines != 2 || !strings.Contains(r.Findings[0].String(), "(2 lines)") {
		t.Errorf("findings %v", r.Findings)
	}
	if r.RecordedVersion != "2.1.328" || r.LiveVersion != "2.1.332" {
		t.Errorf("versions %q %q", r.RecordedVersion, r.LiveVersion)
	}
}

// TestGradeNotesAndCanary: an input never sent is breaking; the new
// session's version_drift warning comes along; an exit status changed is
// breaking.
func TestGradeNotesAndCanary(t *testing.T) {
	rec := session(gInit, gText, gResult)
	live := append(session(gInit, gText, gResult), recording.Entry{Seq: 9, Dir: protocol.DirEvent,
		Msg: protocol.Marshal(protocol.NewWarning(protocol.WarnVersion, "agent version 9.9.9 was not checked"))})
	r := GradeRecordings(rec, live)
	if r.Grade != NoDrift || len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "9.9.9") {
		t.Errorf("canary: %+v", r)
	}
	if r := GradeRecordings(rec, live, "input seq 4 was never sent"); r.Grade != Breaking || !strings.Contains(r.Findings[0].String(), "! input seq 4") {
		t.Errorf("a note: %+v", r)
	}
	exit := func(code int) recording.Entry {
		return recording.Entry{Dir: protocol.DirEvent, Msg: protocol.Marshal(protocol.Exit{Type: protocol.TypeAgentjq, Subtype: protocol.EventExit, AgentExit: &code})}
	}
	if r := GradeRecordings(append(session(gInit, gText, gResult), exit(0)), append(session(gInit, gText, gResult), exit(1))); r.Grade != Breaking || !strings.Contains(r.Findings[0].Detail, "status 1, recorded 0") {
		t.Errorf("exit status: %+v", r)
	}
}
