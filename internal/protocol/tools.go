package protocol

import "slices"

// ClaudeTools are the built-in tool names a policy rule may name: the
// tools the checked claude CLI versions list on their init line (the
// fixtures hold them; TestInitToolsAreKnown in fixtures checks the list
// against every init line there), and the names of older versions and of
// permission requests that rules match all the same (Glob, Grep, LS,
// MultiEdit, NotebookRead, TodoWrite, Agent, BashOutput, KillShell,
// SlashCommand; SandboxNetworkAccess, the sandbox's network request).
// MCP tools (mcp__server__tool) are not listed: their names come from the
// servers.
var ClaudeTools = []string{
	// On the init line of claude 2.1.328 and 2.1.332.
	"AskUserQuestion", "Bash", "CronCreate", "CronDelete", "CronList", "Edit",
	"EnterPlanMode", "EnterWorktree", "ExitPlanMode", "ExitWorktree", "ListAgents",
	"Monitor", "NotebookEdit", "Read", "ReportFindings", "ScheduleWakeup",
	"SendMessage", "Skill", "Task", "TaskStop", "ToolSearch", "WebFetch",
	"WebSearch", "Workflow", "Write",
	// Older versions' names, and permission-only ones.
	"Agent", "BashOutput", "Glob", "Grep", "KillShell", "LS", "MultiEdit",
	"NotebookRead", "SandboxNetworkAccess", "SlashCommand", "TodoWrite",
}

// KnownTool reports whether name is one of ClaudeTools.
func KnownTool(name string) bool { return slices.Contains(ClaudeTools, name) }
