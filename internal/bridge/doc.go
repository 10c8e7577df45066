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
//	  │              └─ any       tap (recording) · passOut ─→ asyncq.Writer ─→ our stdout
//	  ▼
//	answer.go    controls.control: control_request (protocol.ReadControlRequest)
//	  │          → startAnswer (a goroutine each; can_use_tool in arrival
//	  │          order), cancel → withdraw, response → ours; then answer,
//	  │          by subtype:
//	  ├─ hook_callback  the guard (Options.Guard) first, then the user's hooks;
//	  │                 hookDecided records its decision
//	  ├─ can_use_tool   canUseTool: Options.Approver.Decide, the default deny,
//	  │                 Verdict.Result; respondPermission records and sends it
//	  └─ mcp_message    Options.Handlers (cmd: mcphost)
//	  ▼
//	out.go       event (the decision, to stdout and the tap) ·
//	             agentStdin.write: an asyncq.Writer ─→ the agent's stdin
//
// The walk of one Bash call a rules file allows ({"allow":["Bash(git
// status)"]}, no hook, approver or person), from agentLine until the
// control_response is written to the agent's stdin, as the calls run
// (dlv trace of every project function; each function counted where it
// is first entered): 13 files, 27 returns to a file already left.
//
//	pump → asyncq → pump → answer → protocol/scan → answer → approve/chain
//	→ rules → protocol/control → rules → strictjson → rules → bash
//	→ bashwrap → bash → bashwrap → protect → bashwrap → bash → rules
//	→ rule → rules → rule → rules → chain → answer → control → answer
//	→ out → control → out → answer → control → answer → out → asyncq
//	→ out → asyncq → out → asyncq
//
// In approve: chain.go asks rules.go (the RuleSet, the protected files),
// which reads the input strictly (strictjson.go), splits the command
// (bash.go, whose wrappers and programs are bashwrap.go's) and matches
// each rule (rule.go).
//
// Around it: session.go runs the loop (Run, run, loop: input, signals,
// timers, shutdown stages, outcome); turns.go's turnBook counts turns and
// background tasks in flight; lifecycle.go passes a front end's signals to
// its sessions; gate.go holds stdout while a prompt is open; profile.go and
// initmerge.go build the agent's command line and initialize request.
package bridge
