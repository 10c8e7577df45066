package daemon

import (
	"encoding/json"
	"sync"
)

// subagents follows each subagent through claude's signals, so that a
// client sees exactly one subagent.spawn and one subagent.done per
// subagent, with its tool_use id and task id on every event.
//
// claude reports a subagent twice over: the Task/Agent tool call and its
// tool_result, and (2.1.x) the task_started / task_updated /
// task_notification system lines. A backgrounded subagent (task_started
// says is_backgrounded; claude 2.1.328 and 2.1.332 background every Task
// in headless mode) gets its tool_result at once ("Async agent launched"),
// so that result is an update and task_notification is its end; a
// foreground one ends with its tool_result. task_* lines without a tool
// call (a background Bash task) are tracked by their task id.
type subagents struct {
	mu     sync.Mutex
	byTool map[string]*subagent // by tool_use id, else "task:"+task id
	byTask map[string]string    // task id → key in byTool
}

type subagent struct {
	toolUseID  string
	taskID     string
	background bool
	done       bool
}

// key is the tracking key of a signal: its tool_use id, the tool_use id
// its task was started with, else the task id itself.
func (a *subagents) key(toolUseID, taskID string) string {
	if toolUseID != "" {
		return toolUseID
	}
	if k, ok := a.byTask[taskID]; ok {
		return k
	}
	return "task:" + taskID
}

func (a *subagents) get(key string) (*subagent, bool) {
	if a.byTool == nil {
		a.byTool, a.byTask = map[string]*subagent{}, map[string]string{}
	}
	sa, ok := a.byTool[key]
	if !ok {
		sa = &subagent{}
		a.byTool[key] = sa
	}
	return sa, ok
}

func (sa *subagent) payload(status string, detail json.RawMessage) SubagentPayload {
	return SubagentPayload{ToolUseID: sa.toolUseID, TaskID: sa.taskID, Status: status, Detail: orNull(detail)}
}

// called is a Task/Agent tool_use block: the spawn.
func (a *subagents) called(toolUseID string, input json.RawMessage) (string, SubagentPayload) {
	a.mu.Lock()
	defer a.mu.Unlock()
	sa, known := a.get(toolUseID)
	if known {
		return "", SubagentPayload{}
	}
	sa.toolUseID = toolUseID
	return "subagent.spawn", sa.payload("started", input)
}

// message is a line made inside the subagent (parent_tool_use_id).
func (a *subagents) message(parent string, line []byte) SubagentPayload {
	a.mu.Lock()
	defer a.mu.Unlock()
	sa, _ := a.get(parent)
	sa.toolUseID = parent
	return sa.payload("running", line)
}

// result is a tool_result block; kind "" when it is not a subagent's.
func (a *subagents) result(toolUseID string, isError bool, content json.RawMessage) (string, SubagentPayload) {
	a.mu.Lock()
	defer a.mu.Unlock()
	sa, ok := a.byTool[toolUseID]
	if !ok {
		return "", SubagentPayload{}
	}
	switch {
	case sa.done:
		return "subagent.update", sa.payload("result", content)
	case isError:
		sa.done = true
		return "subagent.done", sa.payload("failed", content)
	case sa.background:
		return "subagent.update", sa.payload("launched", content)
	}
	sa.done = true
	return "subagent.done", sa.payload("completed", content)
}

// task is a task_* system line.
func (a *subagents) task(l *agentLine, line []byte) (string, SubagentPayload) {
	a.mu.Lock()
	defer a.mu.Unlock()
	key := a.key(l.ToolUseID, l.TaskID)
	sa, known := a.get(key)
	if l.ToolUseID != "" {
		sa.toolUseID = l.ToolUseID
	}
	if l.TaskID != "" {
		sa.taskID = l.TaskID
		a.byTask[l.TaskID] = key
	}
	status := l.Status
	if status == "" {
		status = l.Patch.Status
	}
	switch l.Subtype {
	case "task_started":
		sa.background = l.IsBackgrounded
		if !known {
			return "subagent.spawn", sa.payload("started", line)
		}
		return "subagent.update", sa.payload("started", line)
	case "task_notification":
		if !sa.done {
			sa.done = true
			return "subagent.done", sa.payload(status, line)
		}
	}
	return "subagent.update", sa.payload(status, line)
}
