package daemon

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// A session with partial messages (session.create partial: true, which
// passes --include-partial-messages) and a real Task call (the scripted
// model's AGENT): message.delta carries the streamed text; the subagent
// gets exactly one subagent.spawn and one subagent.done, with its
// tool_use id on every subagent event and its task id from task_started
// on; seqs rise by one. claude backgrounds the Task, so its tool_result
// ("Async agent launched") is an update and task_notification the end.
func TestLiveSubagentAndDeltas(t *testing.T) {
	t.Parallel()
	srv, wd := liveServer(t, Options{})
	c := connect(t, srv, true)
	c.hello(srv.Token())
	var cr CreateResult
	c.must("session.create", CreateParams{Workdir: wd, Partial: true}, &cr)
	sid := cr.SessionID
	zero := int64(0)
	c.must("session.subscribe", SubscribeParams{SessionID: sid, AfterSeq: &zero}, nil)
	c.must("session.prompt", PromptParams{SessionID: sid, Text: "start an AGENT"}, nil)
	// The turn that ends after the subagent's end.
	c.waitFor("turn.done after subagent.done", 90*time.Second, func() bool {
		done := false
		for _, e := range c.events[sid] {
			done = done || e.Kind == "subagent.done"
			if done && e.Kind == "turn.done" {
				return true
			}
		}
		return false
	})
	evs := eventsOf(c, sid)
	checkSeqs(t, "client", evs, 1)

	var deltas strings.Builder
	var spawns, dones, updates int
	var taskID string
	inSubagent := 0
	var statuses []string
	for _, e := range evs {
		switch e.Kind {
		case "message.delta":
			var p MessageDeltaPayload
			mustJSON(t, e, &p)
			if p.Text == "" {
				t.Errorf("seq %d: an empty message.delta", e.Seq)
			}
			deltas.WriteString(p.Text)
			if p.ParentToolUseID != "" {
				inSubagent++
			}
		case "subagent.spawn", "subagent.update", "subagent.done":
			var p SubagentPayload
			mustJSON(t, e, &p)
			if p.ToolUseID != "toolu_t1" {
				t.Errorf("seq %d %s: toolUseId %q, want toolu_t1", e.Seq, e.Kind, p.ToolUseID)
			}
			if len(p.Detail) == 0 || string(p.Detail) == "null" {
				t.Errorf("seq %d %s: no detail", e.Seq, e.Kind)
			}
			statuses = append(statuses, e.Kind+":"+p.Status)
			switch e.Kind {
			case "subagent.spawn":
				spawns++
				if dones+updates > 0 {
					t.Errorf("seq %d: subagent.spawn after other subagent events", e.Seq)
				}
			case "subagent.update":
				updates++
				if dones > 0 {
					t.Errorf("seq %d: subagent.update after subagent.done", e.Seq)
				}
			case "subagent.done":
				dones++
				if p.Status != "completed" || p.TaskID == "" || p.TaskID != taskID {
					t.Errorf("seq %d: subagent.done %+v, want status completed and task id %q", e.Seq, p, taskID)
				}
				if !strings.Contains(string(p.Detail), "task_notification") {
					t.Errorf("seq %d: subagent.done is not from task_notification: %s", e.Seq, p.Detail)
				}
			}
			if p.TaskID != "" {
				taskID = p.TaskID
			}
		}
	}
	if spawns != 1 || dones != 1 {
		t.Errorf("%d subagent.spawn and %d subagent.done, want one each: %v", spawns, dones, statuses)
	}
	// The subagent's message, the task's start, its launched result, its
	// task_updated: all updates.
	want := []string{"subagent.update:started", "subagent.update:launched", "subagent.update:running", "subagent.update:completed"}
	for _, w := range want {
		if !strings.Contains(strings.Join(statuses, " "), w) {
			t.Errorf("no %s among %v", w, statuses)
		}
	}
	// What the CLI streams: 2.1.328 and 2.1.332 send no stream_event for a
	// subagent's messages (they arrive whole, with parent_tool_use_id).
	t.Logf("message.delta events inside the subagent: %d", inSubagent)
	if !strings.Contains(deltas.String(), "The helper finished.") {
		t.Errorf("message.delta texts %q do not stream the reply", deltas.String())
	}
}

func mustJSON(t *testing.T, e testEvent, v any) {
	t.Helper()
	if err := json.Unmarshal(e.Payload, v); err != nil {
		t.Fatalf("seq %d %s: %v", e.Seq, e.Kind, err)
	}
}
