package daemon

import (
	"encoding/json"
	"strings"
	"testing"
)

// The lifecycles the live test cannot produce: a foreground Task (no
// task_started before its result), a failed launch, a task with no tool
// call. Each gets one spawn and one done.
func TestSubagentLifecycles(t *testing.T) {
	task := func(sub, tool, taskID string, extra string) *agentLine {
		var l agentLine
		line := `{"type":"system","subtype":"` + sub + `","tool_use_id":"` + tool + `","task_id":"` + taskID + `"` + extra + `}`
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatal(err)
		}
		return &l
	}
	var a subagents
	var got []string
	note := func(kind string, p SubagentPayload) {
		if kind != "" {
			got = append(got, kind+":"+p.ToolUseID+":"+p.TaskID+":"+p.Status)
		}
	}
	// Foreground: the tool_result ends it; a later notification is news.
	note(a.called("fg", nil))
	note(a.task(task("task_started", "fg", "T1", `,"is_backgrounded":false`), nil))
	note(a.result("fg", false, nil))
	note(a.task(task("task_notification", "fg", "T1", `,"status":"completed"`), nil))
	// A failed launch ends it even in the background.
	note(a.called("bad", nil))
	note(a.task(task("task_started", "bad", "T2", `,"is_backgrounded":true`), nil))
	note(a.result("bad", true, nil))
	// A task with no tool call (a background command), followed by task id.
	note(a.task(task("task_started", "", "T3", `,"is_backgrounded":true`), nil))
	note(a.task(task("task_updated", "", "T3", `,"patch":{"status":"completed"}`), nil))
	note(a.task(task("task_notification", "", "T3", `,"status":"completed"`), nil))
	// A tool_result of an ordinary tool is no subagent's.
	note(a.result("other", false, nil))
	want := []string{
		"subagent.spawn:fg::started", "subagent.update:fg:T1:started", "subagent.done:fg:T1:completed", "subagent.update:fg:T1:completed",
		"subagent.spawn:bad::started", "subagent.update:bad:T2:started", "subagent.done:bad:T2:failed",
		"subagent.spawn::T3:started", "subagent.update::T3:completed", "subagent.done::T3:completed",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
