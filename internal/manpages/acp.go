package manpages

import "github.com/agentjq/agentjq/internal/roff"

// acpExit is agentjq acp's exit status table.
var acpExit = []ExitRow{
	{"0", "The editor closed stdin (or sent SIGINT, SIGTERM or SIGHUP); every session ended."},
	{"1", "An error reading or writing the protocol, or an editor that stopped reading stdout for a grace period."},
	{"2", "A usage error: a bad flag, a policy that does not load, a --record-dir that cannot be made a directory."},
}

// acpFeatures is the ACP feature table: feature, agentjq acp, Zed's
// claude-agent-acp 0.23.1 (from its initialize and its source).
var acpFeatures = [][3]string{
	{"session/new", "yes; the editor's cwd and MCP servers, claude under agentjq's policies, sandbox and recording.", "yes."},
	{"session/load", "yes, with --record-dir: replays the recorded stream, then resumes claude in the mode it was left in (plan stays plan).", "yes: replays claude's transcript."},
	{"session/list", "yes, with --record-dir: the recorded sessions, titled by their first prompt, cwd filter.", "yes: claude's sessions, titled by claude's summary."},
	{"session/resume", "yes, with --record-dir; a session created in another process and never prompted starts afresh under its id (acpx's sessions new, then prompt).", "yes."},
	{"session/fork", "yes, with --record-dir: claude --resume --fork-session under a new id (unstable in ACP v1).", "yes (unstable)."},
	{"session/close", "yes: the session ends (a running turn is cancelled) before the answer.", "yes."},
	{"image prompts", "yes (promptCapabilities.image): base64 image blocks to claude.", "yes."},
	{"audio prompts", "no: claude takes no audio.", "no."},
	{"MCP servers over http and sse", "yes (mcpCapabilities): passed to claude's --mcp-config with their headers.", "yes."},
	{"slash-command descriptions", "yes: the descriptions and argument hints of claude's answer to initialize.", "yes."},
	{"usage_update", "yes, at the end of each turn: used, size and cost, all numbers (acpx 0.19.1 accepts them).", "yes, but one with used: null was seen, which acpx 0.19.1 rejects as Invalid params."},
	{"session/set_mode", "yes: default, acceptEdits, plan, dontAsk; bypassPermissions with --allow-bypass-permissions.", "yes."},
}

// acpSections is the ACP part of agentjq-acp(1).
func acpSections(p *roff.Page) {
	p.Subsection("Configuring an editor")
	p.Para("Zed: add a custom agent server to settings.json:")
	p.Code(
		`"agent_servers": {`,
		`  "agentjq claude": {`,
		`    "command": "agentjq",`,
		`    "args": ["acp", "--policy", "/home/me/.config/agentjq/policy.json",`,
		`             "--record-dir", "/home/me/.local/state/agentjq/acp"],`,
		`    "env": {}`,
		`  }`,
		`}`,
	)
	p.Para("Any other ACP client (JetBrains, Neovim plugins, the ACP SDKs): run the command agentjq with the arguments acp [flags] as the agent process, speaking ACP on its stdin and stdout; its stderr is diagnostics only.")
	p.Subsection("Protocol")
	p.Para("ACP version 1 (protocolVersion 1), JSON-RPC 2.0, one message per line. initialize advertises only what works: loadSession and the session capabilities list, resume and fork (only with --record-dir, which they read), close, prompt capabilities image and embeddedContext (audio is not offered: claude takes none), MCP servers over stdio, http and sse. Methods: initialize, authenticate (nothing to do: claude's own credentials apply), session/new, session/load, session/resume, session/fork (unstable in ACP v1), session/list, session/close, session/prompt, session/cancel, session/set_mode.")
	p.Para("session/new starts one claude session through agentjq's bridge, exactly as agentjq spawn would with the same flags (the cwd given by the editor, --include-partial-messages, --session-id set to the ACP session id); its mcpServers (stdio, http and sse, headers and env included) become claude's --mcp-config. session/prompt sends the turn (text, resource links as @URI, embedded text resources, images as base64 image blocks) and streams session/update notifications: agent_message_chunk from the partial text deltas, agent_thought_chunk from thinking, tool_call (kind, title, locations for file tools, the proposed diff for Write and Edit, rawInput) and tool_call_update (in_progress once allowed, completed or failed with the result text and the diff), plan from TodoWrite, available_commands_update from claude's answer to initialize (each command's description and argument hint) and its init line, current_mode_update after set_mode, and usage_update at the end of each turn (used: the tokens of the last model call's context; size: the smallest context window of the models used; cost: the session's cost in USD; every member a number, never null). The response's stopReason: end_turn, max_tokens, max_turn_requests (--max-turns), refusal, cancelled; a turn that failed (an API error) is an error response, and the session goes on. session/close ends the session as the end of stdin does (a running turn is interrupted and answered cancelled) and answers once it has ended; the session is then unknown.")
	p.Para("Without the agent (claude not on PATH, --bin naming nothing runnable, no sandbox) agentjq acp still starts and answers initialize, says so on stderr, and fails every session/new with an error naming what is missing, so that the editor can show it.")
	p.Subsection("ACP features")
	p.Para("What an editor can use, in agentjq acp and, for comparison, in Zed's claude-agent-acp 0.23.1 (npm @zed-industries/claude-agent-acp), both driving the same claude; agentjq's rows are tested with acpx 0.19.1 and the ACP SDK 2.4.0 against the real CLI (cmd/acpx_live_test.go, cmd/acp_live_test.go).")
	for _, f := range acpFeatures {
		p.Item(f[0], "agentjq: "+f[1]+" claude-agent-acp: "+f[2])
	}
	p.Subsection("Permissions")
	p.Para("agentjq's chain decides first: the --policy files, then --approver. Only what they leave undecided goes to the editor as session/request_permission, with the options allow_once, allow_always, reject_once and reject_always. An always answer is a session rule held by agentjq, never written into claude's settings, and deliberately narrow: the same tool on the same file, the very same Bash command, or any other tool with the very same input; never a whole tool. An allow_always only answers what the policies pass on: a policy deny or a protected control file still wins. A reject_always holds on every call of the session, the ones claude runs without asking included (reads, read-only commands, and everything a mode such as acceptEdits allows): agentjq's PreToolUse guard, installed in every acp session, blocks each call such a rule matches before it runs, whatever the policies or the mode say; for a file, the path's spellings (/p/./a, /p//a) are one file. Without --policy or --approver the guard objects to nothing else, so the editor is asked exactly what claude asks (not about every Read); with them, what the policies leave undecided is asked of the editor as before. session/cancel interrupts the turn (see Cancelling and ending), answers every open request as cancelled (a deny that stops the turn) and withdraws it from the editor with $/cancel_request; the client's own cancelled outcome means the same. A request withdrawn any other way (the --approval-timeout ran out, the agent withdrew it) is taken down with $/cancel_request too, and denied. AskUserQuestion cannot be answered over request_permission: it is denied with a message telling the model no one can answer (or answered by a policy's answers).")
	p.Subsection("Modes")
	p.Para("default, acceptEdits, plan and dontAsk map to claude's set_permission_mode; bypassPermissions is offered only with --allow-bypass-permissions. Whatever the mode, agentjq's PreToolUse guard still puts every call before the policies and the editor's reject_always answers.")
	p.Subsection("Recordings, session/load, resume, fork and list")
	p.Para("With --record-dir DIR (made if it does not exist) every session is recorded with agentjq's recording format (agentjq-recording(5), redacted unless --no-redact) to DIR/ID.ndjson; each later load, resume or restart of it adds DIR/ID.2.ndjson, DIR/ID.3.ndjson and so on. The header names claude's version (claude --version). The record dir is how a session is taken up again, by this agentjq acp or a later one (acpx runs each command in a process of its own: sessions new in one, prompt in the next).")
	p.Para("session/load replays the recorded lines of every segment, in order, through the same mapping as a live session (the user's turns as user_message_chunk, images included): the exact recorded stream, not a reconstruction from claude's transcript. session/resume does the same without the replay. Either then continues live with claude --resume ID, which needs the same HOME as the recorded run, in the permission mode claude was left in (its init lines and the set_permission_mode it accepted, as recorded; bypassPermissions only with --allow-bypass-permissions); the response's modes say that mode. A session that never had a turn has no conversation in claude yet: it starts afresh under its id (--session-id), in its mode. session/fork starts a new session (a new id, its own recordings) from the recorded one's conversation: claude --resume ID --fork-session. session/list lists the recorded sessions (filtered by cwd when given), the most recently active first: the cwd, the first prompt as the title, the time of the last recorded line as updatedAt.")
	p.Subsection("Cancelling and ending")
	p.Para("session/cancel sends claude an interrupt. An agent that has not ended the turn one grace period later ($AGENTJQ_GRACE, default 5s) is stopped as a second SIGINT stops agentjq spawn (its stdin closed and SIGTERM, then SIGKILL a grace period later): the prompt is answered with stopReason cancelled at once, and the session goes on in a new claude that resumes it (--resume, a new recording segment with --record-dir), so the next session/prompt works. If that claude cannot start, the session ends and later prompts get an error saying why.")
	p.Para("agentjq acp ends as agentjq spawn does. When the editor closes stdin, every request already received is still answered: idle sessions end (their stdin closed), a running turn is interrupted and its prompt answered, and then agentjq exits. The first SIGINT, SIGTERM or SIGHUP does the same at once, in any state (before initialize too); the next escalates every session (SIGTERM to claude), the third kills them. Each stage waits one grace period, so agentjq exits within about six grace periods of the first signal even when claude ignores interrupts and SIGTERM. An editor that stops reading stdout is given up on after a grace period without progress: what was queued for it is dropped (said on stderr), and agentjq ends as if stdin had closed.")
	p.Subsection("What is and is not routed through the editor")
	p.Para("Routed: the permission requests the policies leave undecided (session/request_permission), and everything the session shows (session/update). Not routed: fs/read_text_file, fs/write_text_file and terminal/*. claude's Read, Write, Edit and Bash tools run inside the CLI on the real files and in its own shell; there is no faithful way to substitute the editor's buffers or terminals for them, so agentjq does not pretend to. claude therefore does not see unsaved editor buffers, and commands run in claude's shell, not in an editor terminal; the editor sees each file a tool touches (locations) and each proposed change (diff content). The client's fs and terminal capabilities are read and ignored.")
	p.Subsection("A deterministic agent for editor-plugin tests")
	p.Para("A session recorded with --record-dir replays without a model or a CLI: point --bin at a two-line shim that runs agentjq replay --as-agent on the recording, and agentjq acp sends the same updates for the same prompts:")
	p.Code(
		`#!/bin/sh`,
		`exec agentjq replay --as-agent /path/to/ID.ndjson -- "$@"`,
		``,
		`agentjq acp --bin ./claude-shim`,
	)
}
