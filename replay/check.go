package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/agentjq/agentjq/approve"
	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/recording"
	"github.com/agentjq/agentjq/redact"
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
// The session's settings: those of the recording's header (Session) that
// shape the transcript are re-used (--agent, --model, --permission-mode,
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

// FedByClient reports whether an inbound line came from the session's
// client (stdin) rather than from agentjq itself.
func FedByClient(line []byte) bool {
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
		k := gateKey{e.Dir, Shape(e.Msg).Kind}
		fed := e.Dir == protocol.DirIn && FedByClient(e.Msg)
		if fed {
			in := liveInput{seq: e.Seq, line: e.Msg}
			if prev != nil && !prevFed {
				in.gate = gateKey{prev.Dir, Shape(prev.Msg).Kind}
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
	k := gateKey{dir, Shape(line).Kind}
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

// mergeSettings merges the recorded session settings with the ones given
// to replay --check (see the rule at the top of this file): a setting
// given replaces the recorded one, agent arguments as a whole. overridden
// says the result differs from the recording.
func mergeSettings(rec, given recording.Session) (s recording.Session, overridden bool) {
	str := func(dst *string, recorded, g string) {
		if g != "" {
			*dst = g
			overridden = overridden || g != recorded
			return
		}
		*dst = recorded
	}
	str(&s.Agent, rec.Agent, given.Agent)
	if s.Agent == "" {
		s.Agent = "claude"
	}
	str(&s.Model, rec.Model, given.Model)
	str(&s.PermissionMode, rec.PermissionMode, given.PermissionMode)
	str(&s.AllowedTools, rec.AllowedTools, given.AllowedTools)
	str(&s.DisallowedTools, rec.DisallowedTools, given.DisallowedTools)
	str(&s.SystemPrompt, rec.SystemPrompt, given.SystemPrompt)
	str(&s.AppendSystemPrompt, rec.AppendSystemPrompt, given.AppendSystemPrompt)
	s.MaxTurns = rec.MaxTurns
	if given.MaxTurns != 0 {
		s.MaxTurns = given.MaxTurns
		overridden = overridden || given.MaxTurns != rec.MaxTurns
	}
	s.Partial = rec.Partial || given.Partial
	s.Init = rec.Init || given.Init
	overridden = overridden || given.Partial && !rec.Partial || given.Init && !rec.Init
	list := func(dst *[]string, recorded, g []string) {
		if len(g) > 0 {
			*dst = g
			overridden = true
			return
		}
		*dst = recorded
	}
	list(&s.MCPTool, rec.MCPTool, given.MCPTool)
	list(&s.MCPToolDesc, rec.MCPToolDesc, given.MCPToolDesc)
	list(&s.MCPToolSchema, rec.MCPToolSchema, given.MCPToolSchema)
	list(&s.MCPServer, rec.MCPServer, given.MCPServer)
	list(&s.Hook, rec.Hook, given.Hook)
	list(&s.AgentArgs, rec.AgentArgs, given.AgentArgs)
	// A timeout given wins; else the recorded one goes with its commands.
	s.HookTimeout, s.MCPToolTimeout = given.HookTimeout, given.MCPToolTimeout
	if s.HookTimeout == "" && len(s.Hook) > 0 {
		s.HookTimeout = rec.HookTimeout
	}
	if s.MCPToolTimeout == "" && len(s.MCPTool) > 0 {
		s.MCPToolTimeout = rec.MCPToolTimeout
	}
	// Nothing asks a person: permission answers come from the recording.
	s.NoPrompt = true
	return s, overridden
}

// sessionArgv renders the settings a check re-uses as a spawn command
// line, for the new recording's header.
func sessionArgv(s recording.Session) []string {
	a := []string{"agentjq", "spawn"}
	add := func(flag, v string) {
		if v != "" {
			a = append(a, flag, v)
		}
	}
	if s.Agent != "claude" {
		add("--agent", s.Agent)
	}
	add("--model", s.Model)
	add("--permission-mode", s.PermissionMode)
	add("--allowed-tools", s.AllowedTools)
	add("--disallowed-tools", s.DisallowedTools)
	add("--system-prompt", s.SystemPrompt)
	add("--append-system-prompt", s.AppendSystemPrompt)
	if s.MaxTurns > 0 {
		add("--max-turns", fmt.Sprint(s.MaxTurns))
	}
	if s.Partial {
		a = append(a, "--partial")
	}
	if s.Init {
		a = append(a, "--init")
	}
	for _, x := range s.MCPTool {
		add("--mcp-tool", x)
	}
	for _, x := range s.MCPToolDesc {
		add("--mcp-tool-desc", x)
	}
	for _, x := range s.MCPToolSchema {
		add("--mcp-tool-schema", x)
	}
	for _, x := range s.MCPServer {
		add("--mcp-server", x)
	}
	for _, x := range s.Hook {
		add("--hook", x)
	}
	if len(s.AgentArgs) > 0 {
		a = append(append(a, "--"), s.AgentArgs...)
	}
	return a
}

// RunSession runs one session with settings s (and no policy, approver,
// terminal prompt or -p: decide answers every permission request) in
// workdir, the client's lines on stdin, every line of the session to tap.
// It returns nil when the session ran, whatever the agent's exit status
// (a failed turn is a transcript like any other), and an error when it
// could not run at all. cmd supplies it: it is spawn.
type RunSession func(ctx context.Context, s recording.Session, workdir string, stdin io.Reader, tap func(protocol.Direction, []byte, protocol.Known), decide approve.Decider) error

// CheckOptions configure LiveCheck.
type CheckOptions struct {
	// Given are the settings given to replay --check; a non-zero one
	// replaces the recorded one.
	Given recording.Session
	// Workdir is the agent's directory; "" makes a fresh empty one.
	Workdir string
	Run     RunSession
	// Legacy derives the settings of a recording made before headers
	// stored them (Header.Session nil) from its argv; nil, or an error,
	// means the recorded agent with nothing else.
	Legacy func(argv []string) (recording.Session, error)
	// LookupEnv resolves secret variables for the new recording's
	// redaction (the default redaction, as record's).
	LookupEnv      func(string) (string, bool)
	AgentjqVersion string
	// Wait bounds every wait of the feeder for the live session (default
	// 2 minutes).
	Wait time.Duration
}

// LiveCheck re-runs a recording's inputs against the agent installed now
// (see the top of this file) into a new recording in a temporary
// directory and returns its path: the caller removes the directory, and
// grades the two with GradeRecordings. stuck, when not empty, says that an
// input was never sent.
func LiveCheck(ctx context.Context, h recording.Header, entries []recording.Entry, opts CheckOptions) (path, stuck string, err error) {
	var rec recording.Session
	switch {
	case h.Session != nil:
		rec = *h.Session
	case opts.Legacy != nil:
		if rec, err = opts.Legacy(h.Argv); err != nil {
			return "", "", err
		}
	default:
		rec.Agent = h.Agent
	}
	s, overridden := mergeSettings(rec, opts.Given)
	if opts.Wait <= 0 {
		opts.Wait = checkWait
	}
	tmp, err := os.MkdirTemp("", "agentjq-check-")
	if err != nil {
		return "", "", err
	}
	path = filepath.Join(tmp, "new.rec")
	workdir := opts.Workdir
	if workdir == "" {
		workdir = filepath.Join(tmp, "project")
		if err := os.Mkdir(workdir, 0o755); err != nil {
			return path, "", err
		}
		if real, err := filepath.EvalSymlinks(workdir); err == nil {
			workdir = real
		}
	}
	argv := h.Argv
	if overridden || len(argv) == 0 {
		argv = sessionArgv(s)
	}
	red, err := redact.NewRedactor(redact.RedactSpec{Builtin: true}, opts.LookupEnv)
	if err != nil {
		return path, "", err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return path, "", err
	}
	w, err := recording.NewWriter(f, recording.Header{Agent: s.Agent, AgentjqVersion: opts.AgentjqVersion, Argv: argv, Cwd: workdir, Session: &s},
		recording.WriterOptions{Redactor: red, Async: true})
	if err != nil {
		f.Close()
		return path, "", err
	}
	fd := newFeeder()
	tap := func(dir protocol.Direction, line []byte, known protocol.Known) {
		w.Tap(dir, line, known)
		fd.saw(dir, line)
	}
	pr, pw := io.Pipe()
	fctx, cancel := context.WithCancel(ctx)
	fed := make(chan struct{})
	go func() { defer close(fed); fd.feed(fctx, pw, checkInputs(entries), opts.Wait) }()
	runErr := opts.Run(ctx, s, workdir, pr, tap, newRecordedDecider(entries))
	cancel()
	pr.Close()
	<-fed
	if werr := w.Close(); werr != nil && runErr == nil {
		runErr = werr
	}
	if cerr := f.Close(); cerr != nil && runErr == nil {
		runErr = cerr
	}
	if runErr != nil {
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

// rewriteFile replaces machine-specific paths in a recording (as plain
// text: paths need no JSON escaping), longest first.
func rewriteFile(path string, repl map[string]string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	b = RewritePaths(b, repl)
	return os.WriteFile(path, b, 0o600)
}

// RewritePaths replaces each key of repl in b by its value (paths, as
// plain text), longest first.
func RewritePaths(b []byte, repl map[string]string) []byte {
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
	e, ok := ExitEvent(entries)
	if !ok || e.AgentExit == nil {
		return 0, false
	}
	return *e.AgentExit, true
}

// ExitEvent returns a recording's exit event (agentjq's, dir event).
func ExitEvent(entries []recording.Entry) (protocol.Exit, bool) {
	for i := len(entries) - 1; i >= 0; i-- {
		var v protocol.Exit
		if entries[i].Dir == protocol.DirEvent && json.Unmarshal(entries[i].Msg, &v) == nil && v.Subtype == protocol.EventExit {
			return v, true
		}
	}
	return protocol.Exit{}, false
}

// ScriptedInput is a line for Feeder.Feed: it is sent once the session
// has printed Count agent lines of kind After (a Shape kind), then after
// Delay.
type ScriptedInput struct {
	Line  []byte
	After string
	Count int
	Delay time.Duration
}

// Feeder is the check's feeder for a script of inputs (the fixtures'
// generator drives the real agent with it).
type Feeder struct{ f *feeder }

// NewFeeder returns a Feeder; pass Saw every line of the session.
func NewFeeder() *Feeder { return &Feeder{newFeeder()} }

// Saw counts a line of the session.
func (f *Feeder) Saw(dir protocol.Direction, line []byte) { f.f.saw(dir, line) }

// Feed writes the inputs to w in order, each once its gate is reached,
// then closes w; a gate not reached within wait stops the feeding.
func (f *Feeder) Feed(ctx context.Context, w io.WriteCloser, inputs []ScriptedInput, wait time.Duration) {
	var in []liveInput
	for i, x := range inputs {
		in = append(in, liveInput{seq: int64(i + 1), line: x.Line, gate: gateKey{protocol.DirOut, x.After}, count: x.Count, delay: x.Delay})
	}
	f.f.feed(ctx, w, in, wait)
}

// Stuck says why an input was never sent ("" when all were).
func (f *Feeder) Stuck() string {
	f.f.mu.Lock()
	defer f.f.mu.Unlock()
	return f.f.stuck
}
