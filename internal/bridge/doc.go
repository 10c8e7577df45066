// Package bridge runs an agent CLI as a child process and carries a session
// across it: turns in on the agent's stdin, events out on ours byte for
// byte, every control request answered exactly once, the process tree owned
// and shut down in stages, and one outcome computed at the end.
//
// It knows nothing of kong, the terminal or any policy: cmd/spawn.go builds
// Options and wires in what decides (a Decider: approve's chain; a
// GuardFunc: hooks' guard; Handlers: hosted hooks and MCP servers).
//
// The map. A line the agent writes, and a control request in it:
//
//	agent stdout
//	  │ pump.go      readAgentStdout: chunks, classify (protocol.Scan), agentLine
//	  │              ├─ proxy?    forward.go  forwarder.forwardAgentLine ─→ the client
//	  │              ├─ too deep  deep.go     tooDeep: a request in it refused unread
//	  │              ├─ result    turns.go    result: the turn ends
//	  │              └─ any       out.go      tap (recording) · passOut ─→ our stdout
//	  ▼
//	answer.go    controls.control: control_request → startAnswer (a goroutine
//	  │          each; can_use_tool in arrival order), cancel → withdraw,
//	  │          response → ours; then answer, by subtype:
//	  ├─ hook_callback  the guard (Options.Guard) first, then the user's hooks;
//	  │                 hookDecided records its decision
//	  ├─ can_use_tool   canUseTool: Options.Approver.Decide, the default deny;
//	  │                 respondPermission records and sends it
//	  └─ mcp_message    Options.Handlers (cmd: mcphost)
//	  ▼
//	out.go       event (the decision, to stdout and the tap) ·
//	             agentStdin.write: a queueWriter over internal/asyncq ─→ the agent's stdin
//
// Around it: session.go runs the loop (Run, run, loop: input, signals,
// timers, shutdown stages, outcome); turns.go's turnBook counts turns and
// background tasks in flight; lifecycle.go passes a front end's signals to
// its sessions; gate.go holds stdout while a prompt is open; profile.go and
// initmerge.go build the agent's command line and initialize request.
package bridge
