// Package agentlib is the jq library `agentjq filter` puts in front of every
// program: definitions that know the event shapes of the agent CLIs'
// stream-json (assistant text, tool calls and results, permission requests,
// agentjq's decisions, the result's outcome...).
//
// Source is a sequence of jq `def`s only, so that Source + "\n" + program
// is a valid jq program. Docs lists every public definition for --help and
// the man page; a test keeps the two in step.
package agentlib

import (
	_ "embed" // for go:embed

	"github.com/itchyny/gojq"

	"github.com/agentjq/agentjq/internal/protocol"
)

// Source is the jq module text.
//
//go:embed agent.jq
var Source string

// Functions are the definitions Source calls that are written in Go:
// compile every program that uses Source with them.
var Functions = []gojq.CompilerOption{
	// _key_input(tool): the key of a tool input, from protocol's table.
	gojq.WithFunction("_key_input", 1, 1, func(input any, args []any) any {
		tool, _ := args[0].(string)
		return protocol.ToolKey(tool, input).Text
	}),
	// _inputs yields nothing here: filter binds it to the stream.
	InputsFunction(nil),
}

func init() {
	// _price and _prices from the shipped table; filter puts the table
	// with --prices FILE's models in their place.
	Functions = append(Functions, PriceFunctions(DefaultPrices())...)
}

// Doc documents one definition of Source.
type Doc struct {
	Name    string // name/arity as jq shows it, e.g. "events/1"
	Usage   string // an example program
	Summary string
}

// Docs documents the definitions, grouped as in agent.jq.
var Docs = []Doc{
	{"events/1", `events("assistant")`, "the events of one type"},
	{"events/2", `events("system"; "init")`, "the events of one type and subtype"},
	{"is_init", `select(is_init)`, "true on system/init, the header the agent repeats every turn"},
	{"init", `init | .model`, "the system/init events"},
	{"version", `version`, "the agent CLI version (claude_code_version) of a system/init"},
	{"results", `results | .result`, "the result events that close each turn"},
	{"in_subagent", `select(in_subagent)`, "true on events made inside a subagent (parent_tool_use_id set)"},
	{"subagent", `subagent | assistant_text`, "the events made inside a subagent"},
	{"main_agent", `main_agent | tool_calls`, "the events of the main agent, outside any subagent"},
	{"decisions", `decisions | select(.behavior == "deny")`, "agentjq's permission decisions (tool, behavior, decided_by, via: hook or permission, rule, message)"},
	{"warnings", `warnings | .message`, "agentjq's warning events (code, message)"},
	{"agentjq_exit", `agentjq_exit | .code`, "agentjq's last event: exit code, outcome, agent exit, turns, denials"},
	{"content_text", `.content | content_text`, "a tool_result's content (string or array of blocks) as text"},
	{"assistant_text", `assistant_text`, "the text of an assistant message (text blocks joined)"},
	{"thinking", `thinking`, "the text of thinking blocks"},
	{"text_deltas", `text_deltas`, "the text of partial-message deltas (--include-partial-messages)"},
	{"delta_text", `delta_text`, "the same as text_deltas"},
	{"user_text", `user_text`, "the text of user messages: prompts, replays, interruption notes"},
	{"tool_calls", `tool_calls | .name`, "each tool call as {name, id, input, parent}"},
	{"tool_calls/1", `tool_calls("Bash") | .input.command`, "the tool calls of one tool"},
	{"tool_results", `tool_results | select(.is_error)`, "each tool result as {tool_use_id, content (text), is_error, parent}"},
	{"key_input", `tool_calls | key_input`, "the argument a person reads first of a tool call, a permission request or a bare tool input: Bash command, Read/Write/Edit file_path, Grep/Glob pattern, WebFetch url, WebSearch query, Task description (else prompt), AskUserQuestion first question, Skill skill... (the input as JSON when none fits)"},
	{"control_requests", `control_requests | .subtype`, "control requests from the agent, as .request plus request_id"},
	{"permission_requests", `permission_requests | [.tool_name, key_input]`, "can_use_tool requests (tool_name, input, tool_use_id, request_id...)"},
	{"hook_callbacks", `hook_callbacks | .input.hook_event_name`, "hook_callback requests"},
	{"mcp_messages", `mcp_messages | .message.method`, "mcp_message requests"},
	{"permission_responses", `permission_responses | .behavior`, "answers to can_use_tool found in a control_response: {request_id, behavior, message, updated_input}"},
	{"outcome", `outcome`, "success, error or denied for a result (as agentjq computes it); the outcome of agentjq's exit event"},
	{"cost", `cost`, "total_cost_usd of a result (cumulative over a session)"},
	{"turns", `turns`, "num_turns of a result"},
	{"duration", `duration / 1000`, "duration_ms of a result, in milliseconds"},
	{"usage", `usage.output_tokens`, "the token usage of a result"},
	{"denials", `denials | .tool`, "a result's permission denials as {tool, tool_use_id, input}"},
	{"is_api_error", `select(is_api_error)`, "true on an assistant message that reports an API error"},
	{"errors", `errors | "\(.kind): \(.message)"`, "every error as {kind, message, ...}: api_error, result, tool_error, permission_denied, warning, exit, control_error"},
	{"message_usage", `message_usage | .output_tokens`, "an assistant message's tokens on each line that carries them (a transcript's or stream's assistant lines, a stream's message_delta): {message_id, request_id, model, session_id, timestamp, cwd, sidechain, input_tokens, output_tokens, cache_read_input_tokens, cache_creation_input_tokens, cache_creation_1h_input_tokens}"},
	{"messages_usage", `-n '[messages_usage] | map(.output_tokens) | add'`, "whole input (reads it with inputs; use -n): message_usage once per message id, the larger count of each field, as ccusage counts"},
	{"messages_usage/1", `-n 'messages_usage(inputs | message_usage | select(.sidechain | not))'`, "messages_usage of the usage objects its argument yields"},
	{"usage_cost", `-n 'messages_usage | usage_cost'`, "a usage object's cost in USD from the price table (null for an unknown model)"},
	{"prices", `-n 'prices.models | keys'`, "the price table: agentjq's (prices.json: dated, Anthropic's published prices) with --prices FILE's models over it"},
	{"daily_report", `-n daily_report ~/.claude/projects/*/`, "whole input (use -n): what ccusage daily --json prints, per UTC day: tokens, cost, models, per-model breakdowns, totals"},
	{"daily_report/1", `-n 'daily_report(inputs | message_usage)'`, "daily_report of the usage objects its argument yields"},
	{"session_report", `-n session_report --project`, "whole input (use -n): what ccusage session --json prints, per session"},
	{"session_report/1", `-n 'session_report(inputs | message_usage)'`, "session_report of the usage objects its argument yields"},
	{"usage_table", `-n -r 'daily_report | usage_table'`, "a daily_report or session_report as ccusage's table, one line a string"},
	{"tool_pairs", `-s 'tool_pairs | select(.is_error)'`, "whole stream (-s): each tool call with its result's content and is_error, and denied"},
	{"subagents", `-s 'subagents | {description, n: (.events | length)}'`, "whole stream (-s): subagent events grouped by their Task call: {parent, description, subagent_type, status, summary, events}"},
}
