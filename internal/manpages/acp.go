package manpages

import "github.com/agentjq/agentjq/internal/roff"

// acpExit is agentjq acp's exit status table.
var acpExit = []ExitRow{
	{"0", "The editor closed stdin (or sent SIGINT, SIGTERM or SIGHUP); every session ended."},
	{"1", "An error reading or writing the protocol, or an editor that stopped reading stdout for a grace period."},
	{"2", "A usage error: a bad flag, a policy that does not load, --record-dir not a directory."},
	{"127", "The agent binary was not found."},
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
	p.Para("ACP version 1 (protocolVersion 1), JSON-RPC 2.0, one message per line. initialize advertises only what works: loadSession (only with --record-dir), prompt capabilities embeddedContext (text resources; images and audio are not offered), MCP servers over stdio (http and sse are not offered and are refused). Methods: initialize, authenticate (nothing to do: claude's own credentials apply), session/new, session/load, session/prompt, session/cancel, session/set_mode. Session list, resume and close are not implemented and not advertised.")
	p.Para("session/new starts one claude session through agentjq's bridge, exactly as agentjq spawn would with the same flags (the cwd given by the editor, --include-partial-messages, --session-id set to the ACP session id); its mcpServers become claude's --mcp-config. session/prompt sends the turn and streams session/update notifications: agent_message_chunk from the partial text deltas, agent_thought_chunk from thinking, tool_call (kind, title, locations for file tools, the proposed diff for Write and Edit, rawInput) and tool_call_update (in_progress once allowed, completed or failed with the result text and the diff), plan from TodoWrite, available_commands_update from the init's slash commands, current_mode_update after set_mode. The response's stopReason: end_turn, max_tokens, max_turn_requests (--max-turns), refusal, cancelled; a turn that failed (an API error) is an error response, and the session goes on.")
	p.Subsection("Permissions")
	p.Para("agentjq's chain decides first: the --policy files, then --approver. Only what they leave undecided goes to the editor as session/request_permission, with the options allow_once, allow_always, reject_once and reject_always. An always answer is a session rule held by agentjq, never written into claude's settings, and deliberately narrow: the same tool on the same file, the very same Bash command, or any other tool with the very same input; never a whole tool. An allow_always only answers what the policies pass on: a policy deny or a protected control file still wins. A reject_always holds on every call of the session, the ones claude runs without asking included (reads, read-only commands, and everything a mode such as acceptEdits allows): agentjq's PreToolUse guard, installed in every acp session, blocks each call such a rule matches before it runs, whatever the policies or the mode say; for a file, the path's spellings (/p/./a, /p//a) are one file. Without --policy or --approver the guard objects to nothing else, so the editor is asked exactly what claude asks (not about every Read); with them, what the policies leave undecided is asked of the editor as before. session/cancel interrupts the turn (see Cancelling and ending), answers every open request as cancelled (a deny that stops the turn) and withdraws it from the editor with $/cancel_request; the client's own cancelled outcome means the same. A request withdrawn any other way (the --approval-timeout ran out, the agent withdrew it) is taken down with $/cancel_request too, and denied. AskUserQuestion cannot be answered over request_permission: it is denied with a message telling the model no one can answer (or answered by a policy's answers).")
	p.Subsection("Modes")
	p.Para("default, acceptEdits, plan and dontAsk map to claude's set_permission_mode; bypassPermissions is offered only with --allow-bypass-permissions. Whatever the mode, agentjq's PreToolUse guard still puts every call before the policies and the editor's reject_always answers.")
	p.Subsection("Recordings and session/load")
	p.Para("With --record-dir DIR every session is recorded with agentjq's recording format (agentjq-recording(5), redacted unless --no-redact) to DIR/ID.ndjson; each later load of it adds DIR/ID.2.ndjson, DIR/ID.3.ndjson and so on. session/load replays the recorded lines of every segment, in order, through the same mapping as a live session (the user's turns as user_message_chunk): the exact recorded stream, not a reconstruction from claude's transcript. The session then continues live with claude --resume ID, which needs the same HOME as the recorded run.")
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
