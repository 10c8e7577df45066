package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/alecthomas/kong"

	"github.com/agentjq/agentjq/approve"
	"github.com/agentjq/agentjq/internal/syncio"
	"github.com/agentjq/agentjq/iostreams"
	"github.com/agentjq/agentjq/protocol"
	"github.com/agentjq/agentjq/recording"
	"github.com/agentjq/agentjq/replay"
)

// The live drift check (replay --check FILE without --against) re-runs a
// recording's inputs against the agent installed now and compares the
// shapes of the two transcripts.
//
// What is fed, and when:
//   - the recorded user turns and the client's own control requests
//     (initialize, set_permission_mode, interrupt: every "in"
//     control_request whose request_id agentjq did not make), one at a
//     time, in order. Each waits until the live session has seen as many
//     lines of the kind (direction and Shape kind) that preceded it in
//     the recording as the recording had by then: a second turn waits for
//     the first turn's result, an interrupt for the same tool call and
//     permission answer. An interrupt then waits the recorded gap (at most
//     5s), since it is timing-dependent. Then stdin reaches EOF.
//   - agentjq's own lines (its initialize for --init/--mcp-tool/--hook,
//     permission answers, hook and MCP answers) are made by the session
//     itself, as they were.
//
// Permission requests are answered as recorded, in order per tool: an
// allow keeps the recorded changes to the input (answers added to an
// AskUserQuestion, say) over the live request's input; a deny carries the
// recorded message.
//
// The session's flags: those of the recording's argv that shape the
// transcript are re-used (--agent, --model, --permission-mode,
// --allowed-tools, --disallowed-tools, --system-prompt,
// --append-system-prompt, --max-turns, --partial, --init, --mcp-tool*,
// --mcp-server, --hook*, and the agent arguments after --); a flag given
// to replay --check replaces the recorded one (agent arguments after --
// replace the recorded ones as a whole). --policy, --approver, --prompt,
// --resume and --session-id are not re-used. The agent runs in a fresh
// empty directory unless -C is given. Re-used --hook, --mcp-tool and
// --mcp-server flags run their shell commands: check only recordings you
// trust.

// checkWait bounds every wait of the feeder for the live session.
const checkWait = 2 * time.Minute

// liveInput is one line the check feeds the agent.
type liveInput struct {
	seq   int64
	line  []byte
	gate  gateKey
	count int // wait until count lines of gate were seen (0: no wait)
	delay time.Duration
}

type gateKey struct {
	dir  protocol.Direction
	kind string
}

// fedByClient reports whether an inbound line came from the session's
// client (stdin) rather than from agentjq itself.
func fedByClient(line []byte) bool {
	env, err := protocol.DecodeEnvelope(line)
	if err != nil {
		return false
	}
	switch env.Type {
	case protocol.TypeUser:
		return true
	case protocol.TypeControlRequest:
		return !strings.HasPrefix(env.RequestID, "agentjq-")
	}
	return false
}

// checkInputs derives what to feed, and when, from a recording.
func checkInputs(entries []recording.Entry) []liveInput {
	var inputs []liveInput
	counts := map[gateKey]int{}
	var prev *recording.Entry
	prevFed := false
	for i := range entries {
		e := &entries[i]
		if e.Dir != protocol.DirIn && e.Dir != protocol.DirOut {
			continue
		}
		k := gateKey{e.Dir, replay.Shape(e.Msg).Kind}
		fed := e.Dir == protocol.DirIn && fedByClient(e.Msg)
		if fed {
			in := liveInput{seq: e.Seq, line: e.Msg}
			if prev != nil && !prevFed {
				in.gate = gateKey{prev.Dir, replay.Shape(prev.Msg).Kind}
				in.count = counts[in.gate]
				if env, _ := protocol.DecodeEnvelope(e.Msg); env.ControlSubtype() == protocol.SubInterrupt {
					gap := time.Duration((e.MS - prev.MS) * float64(time.Millisecond))
					in.delay = min(max(gap, 0), 5*time.Second)
				}
			}
			inputs = append(inputs, in)
		}
		counts[k]++
		prev, prevFed = e, fed
	}
	return inputs
}

// feeder writes the inputs to the session's stdin as the session reaches
// their gates; saw is the session's tap.
type feeder struct {
	mu      sync.Mutex
	counts  map[gateKey]int
	changed chan struct{}
	// stuck is set when a gate was not reached in time.
	stuck string
}

func newFeeder() *feeder {
	return &feeder{counts: map[gateKey]int{}, changed: make(chan struct{}, 1)}
}

func (f *feeder) saw(dir protocol.Direction, line []byte) {
	if dir != protocol.DirIn && dir != protocol.DirOut {
		return
	}
	k := gateKey{dir, replay.Shape(line).Kind}
	f.mu.Lock()
	f.counts[k]++
	f.mu.Unlock()
	select {
	case f.changed <- struct{}{}:
	default:
	}
}

func (f *feeder) reached(k gateKey, n int) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.counts[k] >= n
}

// feed writes inputs to w in order, each once its gate is reached, then
// closes w. A gate not reached within wait stops the feeding (the session
// then ends on EOF and the drift shows what went missing).
func (f *feeder) feed(ctx context.Context, w io.WriteCloser, inputs []liveInput, wait time.Duration) {
	defer w.Close()
	for _, in := range inputs {
		if in.count > 0 {
			deadline := time.NewTimer(wait)
			for !f.reached(in.gate, in.count) {
				select {
				case <-ctx.Done():
					deadline.Stop()
					return
				case <-deadline.C:
					f.mu.Lock()
					f.stuck = fmt.Sprintf("input seq %d was never sent: the live session did not reach %d %s line(s) of kind %s within %s", in.seq, in.count, in.gate.dir, in.gate.kind, wait)
					f.mu.Unlock()
					return
				case <-f.changed:
				}
			}
			deadline.Stop()
		}
		if in.delay > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(in.delay):
			}
		}
		if _, err := w.Write(append(append([]byte(nil), in.line...), '\n')); err != nil {
			return
		}
	}
}

// recordedVerdict is one recorded answer to a can_use_tool request.
type recordedVerdict struct {
	behavior, message string
	input, updated    json.RawMessage
	perms             []json.RawMessage
	interrupt         bool
}

// recordedDecider answers permission requests as the recording did, in
// order per tool name.
type recordedDecider struct {
	mu     sync.Mutex
	queues map[string][]recordedVerdict
}

func newRecordedDecider(entries []recording.Entry) *recordedDecider {
	type asked struct {
		tool  string
		input json.RawMessage
	}
	reqs := map[string]asked{}
	d := &recordedDecider{queues: map[string][]recordedVerdict{}}
	for _, e := range entries {
		env, err := protocol.DecodeEnvelope(e.Msg)
		if err != nil {
			continue
		}
		switch {
		case e.Dir == protocol.DirOut && env.Type == protocol.TypeControlRequest && env.ControlSubtype() == protocol.SubCanUseTool:
			var r protocol.CanUseTool
			if json.Unmarshal(env.Request, &r) == nil {
				reqs[env.RequestID] = asked{r.ToolName, r.Input}
			}
		case e.Dir == protocol.DirIn && env.Type == protocol.TypeControlResp:
			a, ok := reqs[env.ResponseID()]
			if !ok {
				continue
			}
			delete(reqs, env.ResponseID())
			var v struct {
				Response struct {
					Subtype  string `json:"subtype"`
					Error    string `json:"error"`
					Response struct {
						Behavior           string            `json:"behavior"`
						Message            string            `json:"message"`
						UpdatedInput       json.RawMessage   `json:"updatedInput"`
						UpdatedPermissions []json.RawMessage `json:"updatedPermissions"`
						Interrupt          bool              `json:"interrupt"`
					} `json:"response"`
				} `json:"response"`
			}
			if json.Unmarshal(e.Msg, &v) != nil {
				continue
			}
			r := v.Response.Response
			rv := recordedVerdict{behavior: r.Behavior, message: r.Message, input: a.input, updated: r.UpdatedInput, perms: r.UpdatedPermissions, interrupt: r.Interrupt}
			if v.Response.Subtype != "success" || rv.behavior == "" {
				rv.behavior, rv.message = protocol.Deny, "agentjq replay --check: the recorded answer was an error: "+v.Response.Error
			}
			d.queues[a.tool] = append(d.queues[a.tool], rv)
		}
	}
	return d
}

// Decide implements approve.Decider.
func (d *recordedDecider) Decide(_ context.Context, req *approve.Request) (approve.Verdict, error) {
	d.mu.Lock()
	q := d.queues[req.ToolName]
	if len(q) == 0 {
		d.mu.Unlock()
		return approve.Verdict{Behavior: protocol.Deny, Source: "recording",
			Message: "agentjq replay --check: the recording has no answer for this " + req.ToolName + " request"}, nil
	}
	rv := q[0]
	d.queues[req.ToolName] = q[1:]
	d.mu.Unlock()
	v := approve.Verdict{Behavior: rv.behavior, Message: rv.message, Interrupt: rv.interrupt, UpdatedPermissions: rv.perms, Source: "recording"}
	if v.Behavior == protocol.Allow {
		v.UpdatedInput = mergeUpdates(req.Input, rv.input, rv.updated)
	}
	return v, nil
}

// mergeUpdates applies what the recorded answer changed in the recorded
// input (top-level keys added or changed) to the live input: the live
// paths stay, recorded answers come along.
func mergeUpdates(live, recIn, recOut json.RawMessage) json.RawMessage {
	if len(recOut) == 0 {
		return live
	}
	var l, ri, ro map[string]json.RawMessage
	if json.Unmarshal(live, &l) != nil || json.Unmarshal(recOut, &ro) != nil {
		return live
	}
	_ = json.Unmarshal(recIn, &ri)
	changed := false
	for k, v := range ro {
		if old, ok := ri[k]; ok && canonical(old) == canonical(v) {
			continue
		}
		l[k] = v
		changed = true
	}
	if !changed {
		return live
	}
	b, err := json.Marshal(l)
	if err != nil {
		return live
	}
	return b
}

func canonical(b []byte) string {
	var v any
	if json.Unmarshal(b, &v) != nil {
		return string(b)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

// recordedSession parses the spawn (or record) flags of a recording's argv.
func recordedSession(argv []string) (SpawnFlags, []string, error) {
	var g struct {
		Spawn  SpawnCmd  `cmd:""`
		Record RecordCmd `cmd:""`
	}
	if len(argv) < 2 {
		return SpawnFlags{Agent: "claude"}, nil, nil
	}
	p, err := kong.New(&g, kong.Exit(func(int) { panic(exitRequest{}) }), kong.Writers(io.Discard, io.Discard))
	if err != nil {
		return SpawnFlags{}, nil, err
	}
	args := argv[1:]
	if args[0] == "record" && !hasArg(args, "-o") && !hasArg(args, "--output") {
		args = append(append([]string{}, args...), "-o", "x")
	}
	kctx, err := func() (k *kong.Context, err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("unparsable argv %q", argv)
			}
		}()
		return p.Parse(args)
	}()
	if err != nil {
		return SpawnFlags{}, nil, fmt.Errorf("the recording's argv: %w", err)
	}
	f, args := g.Spawn.SpawnFlags, g.Spawn.AgentArgs
	if strings.HasPrefix(kctx.Command(), "record") {
		f, args = g.Record.SpawnFlags, g.Record.AgentArgs
	}
	args, err = splitAgentArgs(args)
	if err != nil {
		return SpawnFlags{}, nil, fmt.Errorf("the recording's argv: %w", err)
	}
	return f, args, nil
}

func hasArg(args []string, name string) bool {
	for _, a := range args {
		if a == name || strings.HasPrefix(a, name+"=") {
			return true
		}
	}
	return false
}

// checkFlags merges the recorded session flags with the ones given to
// replay --check (see the rule at the top of this file).
func checkFlags(rec, cli SpawnFlags, recArgs, cliArgs []string) (SpawnFlags, []string, bool) {
	f := cli // bin, cwd, timeouts and the rest come from the command line
	overridden := false
	str := func(dst *string, recorded, given, def string) {
		if given != def {
			*dst = given
			overridden = overridden || given != recorded
			return
		}
		*dst = recorded
	}
	str(&f.Agent, rec.Agent, cli.Agent, "claude")
	if f.Agent == "" {
		f.Agent = "claude"
	}
	str(&f.Model, rec.Model, cli.Model, "")
	str(&f.PermissionMode, rec.PermissionMode, cli.PermissionMode, "")
	str(&f.AllowedTools, rec.AllowedTools, cli.AllowedTools, "")
	str(&f.DisallowedTools, rec.DisallowedTools, cli.DisallowedTools, "")
	str(&f.SystemPrompt, rec.SystemPrompt, cli.SystemPrompt, "")
	str(&f.AppendSystem, rec.AppendSystem, cli.AppendSystem, "")
	if cli.MaxTurns == 0 {
		f.MaxTurns = rec.MaxTurns
	} else {
		overridden = overridden || cli.MaxTurns != rec.MaxTurns
	}
	if !cli.Partial {
		f.Partial = rec.Partial
	} else {
		overridden = overridden || !rec.Partial
	}
	if !cli.Init {
		f.Init = rec.Init
	} else {
		overridden = overridden || !rec.Init
	}
	list := func(dst *[]string, recorded, given []string) {
		if len(given) > 0 {
			*dst = given
			overridden = true
			return
		}
		*dst = recorded
	}
	list(&f.MCPTool, rec.MCPTool, cli.MCPTool)
	list(&f.MCPToolDesc, rec.MCPToolDesc, cli.MCPToolDesc)
	list(&f.MCPToolSchema, rec.MCPToolSchema, cli.MCPToolSchema)
	list(&f.MCPServer, rec.MCPServer, cli.MCPServer)
	list(&f.Hook, rec.Hook, cli.Hook)
	if len(f.Hook) > 0 && cli.HookTimeout == 60*time.Second && rec.HookTimeout != 0 {
		f.HookTimeout = rec.HookTimeout
	}
	if len(f.MCPTool) > 0 && cli.MCPToolTimeout == 2*time.Minute && rec.MCPToolTimeout != 0 {
		f.MCPToolTimeout = rec.MCPToolTimeout
	}
	args := recArgs
	if len(cliArgs) > 0 {
		args = cliArgs
		overridden = true
	}
	// Nothing asks a person: permission answers come from the recording.
	f.Policy, f.Approver, f.NoPrompt = nil, "", true
	f.Prompt, f.Resume, f.SessionID = "", "", ""
	return f, args, overridden
}

// liveCheck re-runs the recording against the live agent into a temporary
// recording and returns its path (the caller removes its directory).
func (c *ReplayCmd) liveCheck(ctx context.Context, ios *iostreams.IO, h recording.Header, entries []recording.Entry) (path string, stuck string, err error) {
	recFlags, recArgs, err := recordedSession(h.Argv)
	if err != nil {
		return "", "", err
	}
	liveArgs, err := splitAgentArgs(c.AgentArgs)
	if err != nil {
		return "", "", err
	}
	f, agentArgs, overridden := checkFlags(recFlags, c.SpawnFlags, recArgs, liveArgs)
	tmp, err := os.MkdirTemp("", "agentjq-check-")
	if err != nil {
		return "", "", err
	}
	path = filepath.Join(tmp, "new.rec")
	workdir := f.Cwd
	if workdir == "" {
		workdir = filepath.Join(tmp, "project")
		if err := os.Mkdir(workdir, 0o755); err != nil {
			return path, "", err
		}
		if real, err := filepath.EvalSymlinks(workdir); err == nil {
			workdir = real
		}
		f.Cwd = workdir
	}
	if f.Timeout == 0 {
		f.Timeout = 10 * time.Minute
	}
	argv := h.Argv
	if overridden || len(argv) == 0 {
		argv = sessionArgv(f, agentArgs)
	}
	rec, err := openRecording(ios, path, RedactFlags{}, f.Agent, argv, workdir)
	if err != nil {
		return path, "", err
	}
	fd := newFeeder()
	tap := func(dir protocol.Direction, line []byte) {
		rec.Tap(dir, line)
		fd.saw(dir, line)
	}
	pr, pw := io.Pipe()
	sub := *ios
	sub.In, sub.Out = pr, io.Discard
	var errBuf bytes.Buffer
	sub.Err = &syncio.Writer{W: &errBuf}
	sub.InTTY, sub.OutTTY = false, false
	fctx, cancel := context.WithCancel(ctx)
	fed := make(chan struct{})
	go func() { defer close(fed); fd.feed(fctx, pw, checkInputs(entries), checkWait) }()
	runErr := runSpawnWith(ctx, &sub, f, agentArgs, tapFunc(tap), newRecordedDecider(entries))
	cancel()
	pr.Close()
	<-fed
	if cerr := rec.Close(); cerr != nil && runErr == nil {
		runErr = cerr
	}
	if runErr != nil && !isSessionExit(runErr) {
		if errBuf.Len() > 0 {
			ios.Err.Write(errBuf.Bytes())
		}
		return path, "", runErr
	}
	if h.Cwd != "" {
		if err := rewriteFile(path, map[string]string{workdir: h.Cwd}); err != nil {
			return path, "", err
		}
	}
	fd.mu.Lock()
	stuck = fd.stuck
	fd.mu.Unlock()
	return path, stuck, nil
}

// isSessionExit tells the agent's own exit status (a failed turn is a
// transcript like any other) from a failure to run the session at all.
func isSessionExit(err error) bool {
	var q *exitError
	return errors.As(err, &q) && q.quiet
}

// sessionArgv renders the flags a check re-uses as a spawn command line.
func sessionArgv(f SpawnFlags, agentArgs []string) []string {
	a := []string{"agentjq", "spawn"}
	add := func(flag, v string) {
		if v != "" {
			a = append(a, flag, v)
		}
	}
	if f.Agent != "claude" {
		add("--agent", f.Agent)
	}
	add("--model", f.Model)
	add("--permission-mode", f.PermissionMode)
	add("--allowed-tools", f.AllowedTools)
	add("--disallowed-tools", f.DisallowedTools)
	add("--system-prompt", f.SystemPrompt)
	add("--append-system-prompt", f.AppendSystem)
	if f.MaxTurns > 0 {
		add("--max-turns", fmt.Sprint(f.MaxTurns))
	}
	if f.Partial {
		a = append(a, "--partial")
	}
	if f.Init {
		a = append(a, "--init")
	}
	for _, s := range f.MCPTool {
		add("--mcp-tool", s)
	}
	for _, s := range f.MCPToolDesc {
		add("--mcp-tool-desc", s)
	}
	for _, s := range f.MCPToolSchema {
		add("--mcp-tool-schema", s)
	}
	for _, s := range f.MCPServer {
		add("--mcp-server", s)
	}
	for _, s := range f.Hook {
		add("--hook", s)
	}
	if len(agentArgs) > 0 {
		a = append(append(a, "--"), agentArgs...)
	}
	return a
}

// rewriteFile replaces machine-specific paths in a recording (as plain
// text: paths need no JSON escaping), longest first.
func rewriteFile(path string, repl map[string]string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	b = rewritePaths(b, repl)
	return os.WriteFile(path, b, 0o600)
}

func rewritePaths(b []byte, repl map[string]string) []byte {
	keys := make([]string, 0, len(repl))
	for k := range repl {
		if k != "" && k != repl[k] {
			keys = append(keys, k)
		}
	}
	// Longest first, so a directory's subdirectory is replaced whole.
	for i := range keys {
		for j := i + 1; j < len(keys); j++ {
			if len(keys[j]) > len(keys[i]) {
				keys[i], keys[j] = keys[j], keys[i]
			}
		}
	}
	for _, k := range keys {
		b = bytes.ReplaceAll(b, []byte(k), []byte(repl[k]))
	}
	return b
}

// exitOf returns the agent's exit status from a recording's exit event.
func exitOf(entries []recording.Entry) (int, bool) {
	e, ok := exitEvent(entries)
	if !ok || e.AgentExit == nil {
		return 0, false
	}
	return *e.AgentExit, true
}

// exitEvent returns a recording's exit event.
func exitEvent(entries []recording.Entry) (protocol.Exit, bool) {
	for i := len(entries) - 1; i >= 0; i-- {
		var v protocol.Exit
		if entries[i].Dir == protocol.DirEvent && json.Unmarshal(entries[i].Msg, &v) == nil && v.Subtype == protocol.EventExit {
			return v, true
		}
	}
	return protocol.Exit{}, false
}
