package approve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentjq/agentjq/internal/proc"
	"github.com/agentjq/agentjq/internal/protocol"
)

// ChainOptions configure the approval chain of a session.
type ChainOptions struct {
	// Policies are rules files (JSON) and jq policies (.jq), in order.
	Policies []string
	// Approver is a shell command that answers requests; ApproverFormat is
	// "control" (a long-lived co-process, one control_request line in, one
	// line out) or "hook" (a Claude Code PreToolUse hook, one process per
	// request).
	Approver       string
	ApproverFormat string
	// ApproverTimeout bounds one approver answer when the request's context
	// has no deadline of its own (default 1m).
	ApproverTimeout time.Duration
	// TTY opens the terminal for prompting; nil when there is none.
	TTY func() (io.ReadWriteCloser, error)
	// TerminalInput, when stdin is the terminal too, is the one reader of
	// it: prompts take their answers from it, not from TTY.
	TerminalInput *TerminalInput
	// Quiet is the prompter's Quiet (see Prompter).
	Quiet func() (done func())
	// Person, when set, is the person at the end of the chain in place of
	// the terminal (the editor of an ACP session): asked only what the
	// policies and the approver left undecided.
	Person Decider
	// Cwd is the session's working directory: the base of relative path
	// rules when a request carries none, and the approver's directory.
	Cwd string
	// Home expands "~/" in path rules.
	Home string
	// Env is the approver's environment (nil: agentjq's own), without the
	// agent's credentials (proc.AgentCredentials) unless PassCredentials.
	Env             []string
	PassCredentials bool
	// Stderr receives policy runtime errors and the approver's stderr.
	Stderr io.Writer
	// ReadFile reads policy files (default os.ReadFile).
	ReadFile func(string) ([]byte, error)
}

// Chain is the whole approval chain: rules files, jq policies, the approver
// command, the terminal, and the fail-closed default, asked in that order.
//
// Rules decide what they match; an unmatched request takes the files'
// "default" ("deny" unless every file says "ask"; "ask" passes the request
// on). A jq policy with no output passes it on too. An "ask" from rules or
// jq skips the remaining policies and goes to the approver or the terminal;
// if neither answers, it is denied.
type Chain struct {
	held     []string // Chain.SetHeld
	rules    *RuleSet
	jq       []*JQPolicy
	approver Decider
	closer   io.Closer
	opts     ChainOptions

	// shell follows the Bash tool's working directory across calls.
	shell shellCwd

	ttyOnce  sync.Once
	prompter *Prompter
	tty      io.Closer

	calls calls // the decision of each tool call, by tool_use_id
}

// NewChain loads every policy file and prepares the approver. A policy
// that does not load is a *PolicyError (file:line:column, exit 2).
func NewChain(opts ChainOptions) (*Chain, error) {
	if opts.ReadFile == nil {
		opts.ReadFile = os.ReadFile
	}
	if opts.Stderr == nil {
		opts.Stderr = io.Discard
	}
	c := &Chain{opts: opts}
	var files []*RulesFile
	for _, name := range opts.Policies {
		data, err := opts.ReadFile(name)
		if err != nil {
			return nil, &PolicyError{File: name, Msg: err.Error()}
		}
		if strings.HasSuffix(name, ".jq") {
			p, err := ParseJQPolicy(name, data)
			if err != nil {
				return nil, err
			}
			p.Stderr = opts.Stderr
			c.jq = append(c.jq, p)
			continue
		}
		f, err := ParseRulesFile(name, data, opts.Home)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	if len(files) > 0 {
		c.rules = NewRuleSet(files, opts.Home)
	}
	if opts.Approver != "" {
		env := opts.Env
		if !opts.PassCredentials {
			if env == nil {
				env = os.Environ()
			}
			env = proc.WithoutAgentCredentials(env)
		}
		ap := ApproverOptions{Command: opts.Approver, Dir: opts.Cwd, Env: env, Stderr: opts.Stderr, Timeout: opts.ApproverTimeout}
		switch opts.ApproverFormat {
		case "", "control":
			cp := NewCoProcess(ap)
			c.approver, c.closer = cp, cp
		case "hook":
			c.approver = NewHook(ap)
		default:
			return nil, &PolicyError{File: "--approver-format", Msg: fmt.Sprintf("unknown format %q (control or hook)", opts.ApproverFormat)}
		}
	}
	return c, nil
}

// Close stops the approver co-process and closes the terminal.
func (c *Chain) Close() error {
	var err error
	if c.closer != nil {
		err = c.closer.Close()
	}
	if c.tty != nil {
		if e := c.tty.Close(); err == nil {
			err = e
		}
	}
	return err
}

// SessionDenier is a person (ChainOptions.Person) whose answers can add
// deny rules for the rest of the session, as the ACP editor's "always
// reject" does. The agent runs many calls without asking (reads,
// read-only Bash, everything a mode such as acceptEdits allows), so a rule
// consulted only when the person is asked would let the same call run
// unasked later: the chain screens every call for these rules (Guards) and
// denies what one matches before any policy is asked.
type SessionDenier interface {
	Decider
	// SessionDenies returns the verdict of the person's session deny rule
	// that matches req, if one does.
	SessionDenies(req *Request) (Verdict, bool)
}

// The agent runs many calls without asking (Read inside the project,
// read-only Bash, whatever its settings allow), so a chain that only
// answered can_use_tool would never see them. agentjq's PreToolUse hook
// asks Decide about every call before it runs (Request.Before); the same
// decision then answers the permission request that verdict sends back.
//
// Guards reports whether the chain decides anything beyond the fail-closed
// default: a policy, an approver or a terminal that opens, or a person who
// can add session deny rules (SessionDenier). Only then does agentjq
// screen every call; the default alone denies what the agent asks and has
// no opinion on the rest. It opens the terminal when there is one. Any
// other ChainOptions.Person (the daemon's clients) does not count, on
// purpose: it is asked what the agent asks, as claude's own user is.
func (c *Chain) Guards() bool {
	_, denier := c.opts.Person.(SessionDenier)
	return c.screensAll() || denier
}

func (c *Chain) screensAll() bool {
	return c.rules != nil || len(c.jq) > 0 || c.approver != nil || c.terminal() != nil
}

// PassesUndecided reports whether a call Screen leaves undecided is no
// objection (the agent's own permission flow goes on) rather than an ask.
// It is so when the chain screens calls only for the person's session deny
// rules: no policy, approver or terminal, so the person is asked exactly
// what the agent asks (not about every Read). With any of those, an
// undecided call comes back as a permission request.
func (c *Chain) PassesUndecided() bool {
	return !c.screensAll()
}

// Decide runs the chain. It never returns an error: every failure becomes
// a deny with a message the agent can read.
func (c *Chain) Decide(ctx context.Context, req *Request) (Verdict, error) {
	v, _ := c.Explain(ctx, req, nil)
	return v, nil
}

// Screen is Decide of a call before it runs, as the PreToolUse hook
// reports it (req.ShellCwd is the directory the agent's shell is in): see
// Request.Before.
func (c *Chain) Screen(ctx context.Context, req *Request) Verdict {
	r := *req
	r.Before = true
	v, _ := c.Decide(ctx, &r)
	return v
}

// Explain runs the chain and reports each step to trace (when not nil).
// It is the one place a tool call is decided, whichever of its requests
// asks (see call): the policies are asked once, and the approver and the
// person at most once, what the policies passed on to them.
func (c *Chain) Explain(ctx context.Context, req *Request, trace func(string)) (Verdict, error) {
	if trace == nil {
		trace = func(string) {}
	}
	r := *req
	if r.Cwd == "" {
		r.Cwd = c.opts.Cwd
	}
	req = &r
	k, done := c.calls.take(ctx, req)
	defer done()
	if k != nil {
		// The PreToolUse hook saw this call first, in the directory the
		// agent's shell was really in; the permission request carries no
		// directory of its own.
		if req.ShellCwd == "" {
			req.ShellCwd = k.cwd
		} else if req.Before {
			k.cwd = req.ShellCwd
		}
	} else if ctx.Err() != nil {
		return c.ctxVerdict(ctx), nil
	}
	if v, ok := c.denyUnsandboxed(req); ok {
		trace(step("sandbox", v))
		return v, nil
	}
	if v, ok := c.sessionDenies(req); ok {
		trace(step("session", v))
		return v, nil
	}
	v, answered := k.decided(req)
	switch {
	case answered:
		trace(step("decided", *v))
		again := *v
		again.Again = true
		if req.Before {
			return before(again, req.Input), nil
		}
		return again, nil
	case v != nil:
		// The policies already judged this input: never ask them again,
		// so the call is not decided twice.
		trace(step("hook", *v))
	default:
		p := c.policies(ctx, req, trace)
		v = &p
	}
	a := *v
	if !req.Before && a.Behavior != protocol.Allow && a.Behavior != protocol.Deny {
		a = c.askOthers(ctx, req, a, trace)
	}
	if ctx.Err() == nil {
		// A withdrawn or timed-out request decided nothing to keep.
		if req.Before {
			k.note(req, v, nil)
		} else {
			k.note(req, v, &a)
		}
	}
	if req.Before {
		return before(a, req.Input), nil
	}
	return a, nil
}

// before is what the hook is told: Deny (block the call), Allow (the
// policies allow it as it is: no objection), or Ask: the policies did not
// decide, or only allowed a changed input, so the call must come back as
// a permission request for the approver, the terminal or the default.
func before(v Verdict, input json.RawMessage) Verdict {
	final := v.Behavior == protocol.Allow || v.Behavior == protocol.Deny
	if v.Behavior == protocol.Deny || (final && sameInput(v.UpdatedInput, input)) {
		return v
	}
	passed := Verdict{Behavior: protocol.Ask, Message: v.Message, Rule: v.Rule, Source: v.Source, Again: v.Again}
	if final {
		// An allow of a rewritten input: only the permission answer can
		// carry the rewrite, so have the agent ask.
		passed.Message = "agentjq: the policy allows this call with a changed input."
	}
	return passed
}

// agentjq runs every Bash command in the sandbox, so a Bash call asking to
// run outside it (dangerouslyDisableSandbox, which claude may add when a
// command failed in the sandbox) is denied whatever the policies say.
var unsandboxedDeny = Verdict{Behavior: protocol.Deny, Source: protocol.ByRules, Rule: "sandbox", Message: "agentjq: agentjq runs every command in the sandbox; a Bash call with dangerouslyDisableSandbox is denied. Run the command without it (it stays in the sandbox), or change the policy if it needs more than the sandbox allows."}

// unsandboxed reports a Bash input that asks to leave the sandbox: a
// dangerouslyDisableSandbox key in any case whose value is anything but
// false. An input that is not an object is no such request (the rules
// deny it as unreadable).
func unsandboxed(tool string, input json.RawMessage) bool {
	if tool != "Bash" {
		return false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(input, &m) != nil {
		return false
	}
	for k, v := range m {
		if strings.EqualFold(k, "dangerouslyDisableSandbox") && !bytes.Equal(bytes.TrimSpace(v), []byte("false")) {
			return true
		}
	}
	return false
}

// denyUnsandboxed is the chain's verdict for such a call.
func (c *Chain) denyUnsandboxed(req *Request) (Verdict, bool) {
	if !unsandboxed(req.ToolName, req.Input) {
		return Verdict{}, false
	}
	return unsandboxedDeny, true
}

// sessionDenies is the verdict of the person's session deny rule matching
// req, finished as a deny.
func (c *Chain) sessionDenies(req *Request) (Verdict, bool) {
	sd, ok := c.opts.Person.(SessionDenier)
	if !ok {
		return Verdict{}, false
	}
	v, ok := sd.SessionDenies(req)
	if !ok {
		return Verdict{}, false
	}
	v.Behavior = protocol.Deny
	return c.finish(req, v), true
}

// policies asks the rules files and jq policies: an allow or a deny they
// decided (already finished), or else an "ask" or no opinion ("" with the
// rules' unmatched message) for the rest of the chain.
func (c *Chain) policies(ctx context.Context, req *Request, trace func(string)) Verdict {
	var asked *Verdict
	unmatched := ""
	shell := c.shellDirs(req)
	if v, ok := protectWithoutRules(c.rules, req, shell, c.opts.Home, c.held); ok {
		trace(step("protected", v))
		return c.finish(req, v)
	}
	if c.rules != nil {
		v := c.rules.decideAt(req, shell)
		trace(step("rules", v))
		switch v.Behavior {
		case protocol.Allow, protocol.Deny:
			return c.finish(req, v)
		case protocol.Ask:
			asked = &v
		default:
			unmatched = v.Message
		}
	}
	if asked == nil && len(c.jq) > 0 {
		var allow *Verdict
		for _, p := range c.jq {
			v, err := p.Decide(ctx, req)
			if err != nil {
				return c.ctxVerdict(ctx)
			}
			trace(step("jq "+p.Name, v))
			switch v.Behavior {
			case protocol.Deny:
				return c.finish(req, v)
			case protocol.Ask:
				if asked == nil {
					asked = &v
				}
			case protocol.Allow:
				if allow == nil {
					allow = &v
				}
			}
		}
		if asked == nil && allow != nil {
			return c.finish(req, *allow)
		}
	}
	if asked != nil {
		return *asked
	}
	return Verdict{Message: unmatched}
}

// protectWithoutRules denies a write to a control file when the chain has
// no rules files (jq policies and approvers never make such a write
// allowed).
func protectWithoutRules(rs *RuleSet, req *Request, shell []string, home string, held []string) (Verdict, bool) {
	if rs != nil {
		return Verdict{}, false // the rules protect
	}
	bare := NewRuleSet(nil, home)
	bare.held = held
	v := bare.decideAt(req, shell)
	return v, v.Rule == protectedRule
}

// askOthers asks the approver and the terminal what the policies passed
// on (passed: an "ask" or no opinion), then fails closed.
func (c *Chain) askOthers(ctx context.Context, req *Request, passed Verdict, trace func(string)) Verdict {
	var asked *Verdict
	unmatched := ""
	if passed.Behavior == protocol.Ask {
		asked = &passed
	} else {
		unmatched = passed.Message
	}
	if c.approver != nil {
		v, err := c.approver.Decide(ctx, req)
		if ctx.Err() != nil {
			return c.ctxVerdict(ctx)
		}
		if err != nil {
			v = Verdict{Behavior: protocol.Deny, Message: "agentjq: the approver failed: " + err.Error(), Source: protocol.ByError, Rule: "approver"}
		}
		trace(step("approver", v))
		switch v.Behavior {
		case protocol.Allow, protocol.Deny:
			return c.finish(req, v)
		case protocol.Ask:
			asked = &v
		}
	}
	if p := c.person(); p != nil {
		v, err := p.Decide(ctx, req)
		if ctx.Err() != nil {
			return c.ctxVerdict(ctx)
		}
		if err == nil {
			trace(step("tty", v))
			if v.Behavior == protocol.Allow || v.Behavior == protocol.Deny {
				return c.finish(req, v)
			}
		}
	}
	v := Verdict{Behavior: protocol.Deny, Source: protocol.ByDefault}
	switch {
	case req.IsQuestion():
		v.Message = NoOneToAnswer
	case asked != nil:
		v.Rule = asked.Rule
		v.Message = asked.Message
		if v.Message == "" {
			v.Message = "agentjq: this call needs approval (" + asked.Rule + ")"
		}
		v.Message += " No approver or terminal was available to approve it, so it was denied."
	case unmatched != "":
		v.Message = unmatched
	default:
		v.Message = NoApprover
	}
	trace(step("default", v))
	return c.finish(req, v)
}

func step(stage string, v Verdict) string {
	b := v.Behavior
	if b == "" {
		b = "no opinion"
	}
	s := stage + ": " + b
	if v.Rule != "" {
		s += " (" + v.Rule + ")"
	}
	if v.Message != "" {
		s += ": " + v.Message
	}
	return s
}

// person is the last stage: ChainOptions.Person, else the terminal.
func (c *Chain) person() Decider {
	if c.opts.Person != nil {
		return c.opts.Person
	}
	if p := c.terminal(); p != nil {
		return p
	}
	return nil
}

// terminal opens the terminal on first use.
func (c *Chain) terminal() *Prompter {
	if c.opts.TTY == nil {
		return nil
	}
	c.ttyOnce.Do(func() {
		rw, err := c.opts.TTY()
		if err != nil || rw == nil {
			return
		}
		c.tty = rw
		if c.opts.TerminalInput != nil {
			c.prompter = NewPrompterOn(rw, c.opts.TerminalInput, c.opts.Home)
		} else {
			c.prompter = NewPrompter(rw, c.opts.Home)
		}
		c.prompter.Quiet = c.opts.Quiet
	})
	return c.prompter
}

func (c *Chain) ctxVerdict(ctx context.Context) Verdict {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return Verdict{Behavior: protocol.Deny, Source: protocol.ByTimeout,
			Message: "agentjq: no decision came within the approval timeout, so the call was denied."}
	}
	return Verdict{Behavior: protocol.Deny, Source: protocol.ByCancel, Message: "agentjq: the request was withdrawn."}
}

// finish makes a verdict safe to send: an allow always carries the input
// (answers included for a question), a deny always a message; see
// checkAnswer. The Bash tool's directory is followed from here.
func (c *Chain) finish(req *Request, v Verdict) Verdict {
	v, ran := protectRewrite(c.rules, req, c.finishAnswer(req, v), c.shellDirs(req), c.opts.Home, c.held)
	c.shell.observe(ran, v, c.opts.Home)
	return v
}

// finishAnswer enforces what every answer must be before it is sent: an
// allow carries an object as its input (a protocol error denies) and no
// permission update that would write rules into the agent's settings
// files; a deny carries a message that says something.
func (c *Chain) finishAnswer(req *Request, v Verdict) Verdict {
	if v.Behavior == protocol.Allow && len(v.UpdatedInput) > 0 && !objectInput(v.UpdatedInput) {
		v = Verdict{Behavior: protocol.Deny, Source: protocol.ByError, Rule: v.Rule,
			Message: fmt.Sprintf("agentjq: protocol error: %s allowed the call with an updatedInput that is not an object (%s), so it was denied.", answerSource(v), clip(string(v.UpdatedInput), 40))}
	}
	if v.Behavior == protocol.Allow {
		asked := len(v.UpdatedPermissions)
		v.UpdatedPermissions = sessionOnly(v.UpdatedPermissions)
		if dropped := asked - len(v.UpdatedPermissions); dropped > 0 && c.opts.Stderr != nil {
			for range dropped {
				fmt.Fprintf(c.opts.Stderr, "agentjq: dropped a permission update from %s: only the \"session\" destination is passed to the agent (others would write rules into its settings files)\n", answerSource(v))
			}
		}
		if len(v.UpdatedInput) == 0 {
			v.UpdatedInput = req.Input
		}
		if req.IsQuestion() && !hasAllAnswers(v.UpdatedInput) {
			return Verdict{Behavior: protocol.Deny, Message: NoOneToAnswer, Source: v.Source, Rule: v.Rule}
		}
		v.Message = ""
		return v
	}
	v.Behavior = protocol.Deny
	if strings.TrimSpace(v.Message) == "" {
		v.Message = "agentjq: denied."
	}
	return v
}

// protectRewrite holds an allow's rewritten input, which is what runs, to
// the same protection; it returns the request as it will run.
func protectRewrite(rs *RuleSet, req *Request, v Verdict, shell []string, home string, held []string) (Verdict, *Request) {
	if v.Behavior != protocol.Allow || bytes.Equal(v.UpdatedInput, req.Input) || req.IsQuestion() {
		return v, req
	}
	r := *req
	r.Input = v.UpdatedInput
	if unsandboxed(r.ToolName, r.Input) {
		return unsandboxedDeny, req
	}
	if rs == nil {
		rs = NewRuleSet(nil, home)
		rs.held = held
	}
	if p := rs.decideAt(&r, shell); p.Rule == protectedRule {
		return p, req
	}
	// What runs is the rewrite, so the rules' denies and asks hold for
	// it as they would have for the call itself: an allow by a later
	// policy (a jq policy, the approver) cannot carry a call the rules
	// deny, nor one they want a person to approve, which nobody asked.
	if o := rs.evaluateAt(&r, shell); o.behavior == protocol.Deny || o.behavior == protocol.Ask {
		return Verdict{Behavior: protocol.Deny, Source: protocol.ByRules, Rule: o.rule.where(),
			Message: fmt.Sprintf("agentjq: %s allowed the call with a changed input, but policy rule %s (%s) %s `%s`, so it was denied.",
				answerSource(v), o.rule.text, o.rule.pos, map[string]string{protocol.Deny: "denies", protocol.Ask: "requires approval for"}[o.behavior], clip(o.unit, 200))}, req
	}
	return v, &r
}

func answerSource(v Verdict) string {
	if v.Rule != "" {
		return v.Rule
	}
	if v.Source != "" {
		return v.Source
	}
	return "the decider"
}

// objectInput reports whether an updatedInput is usable: a JSON object.
// null, a string or an array would reach the agent as the tool's input.
func objectInput(b json.RawMessage) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 0 && b[0] == '{'
}

// sessionOnly keeps the permission updates whose destination is the
// session, except a setMode to bypassPermissions: updates for userSettings, projectSettings or localSettings
// (or with no or an unknown destination) would persist rules into the
// agent's own settings files, outside agentjq's policy, and are dropped.
func sessionOnly(list []json.RawMessage) []json.RawMessage {
	var kept []json.RawMessage
	for _, raw := range list {
		var u struct {
			Type        string `json:"type"`
			Mode        string `json:"mode"`
			Destination string `json:"destination"`
		}
		if decodeStrict(raw, &u) != nil || u.Destination != "session" {
			continue
		}
		if u.Type == "setMode" && u.Mode == "bypassPermissions" {
			// A mode that skips permission checks is no answer to one
			// request: agentjq's hook must go on deciding every call.
			continue
		}
		kept = append(kept, raw)
	}
	return kept
}

// call is the one decision about a tool call, keyed by its tool_use_id. It
// is made by whichever of the call's two requests comes first (the
// PreToolUse hook, or can_use_tool) and read by the other: the policies'
// verdict, and the whole chain's answer once the approver or the person
// gave one, each for the input it judged. Most calls never ask: the
// table is bounded.
type call struct {
	turn     chan struct{} // held while deciding: the other request waits
	cwd      string        // the shell's directory, as the hook reported it
	input    json.RawMessage
	policies *Verdict // the policies' verdict on input
	answer   *Verdict // the chain's answer on input (a permission request)
}

const maxCalls = 1024

type calls struct {
	mu    sync.Mutex
	byID  map[string]*call
	order []string
}

// take finds (or makes) the call of req and holds it until done; nil when
// req names no tool_use_id, or ctx ended first.
func (t *calls) take(ctx context.Context, req *Request) (k *call, done func()) {
	if req.ToolUseID == "" {
		return nil, func() {}
	}
	t.mu.Lock()
	if t.byID == nil {
		t.byID = map[string]*call{}
	}
	k = t.byID[req.ToolUseID]
	if k == nil {
		k = &call{turn: make(chan struct{}, 1)}
		t.byID[req.ToolUseID] = k
		t.order = append(t.order, req.ToolUseID)
		for len(t.order) > maxCalls {
			delete(t.byID, t.order[0])
			t.order = t.order[1:]
		}
	}
	t.mu.Unlock()
	select {
	case k.turn <- struct{}{}:
		return k, func() { <-k.turn }
	case <-ctx.Done():
		return nil, func() {}
	}
}

// decided is what the call already holds for req's input: the answer, or
// else the policies' verdict (answer false).
func (k *call) decided(req *Request) (v *Verdict, answer bool) {
	if k == nil || !sameInput(k.input, req.Input) {
		return nil, false
	}
	if k.answer != nil {
		return k.answer, true
	}
	return k.policies, false
}

func (k *call) note(req *Request, policies, answer *Verdict) {
	if k == nil {
		return
	}
	if !sameInput(k.input, req.Input) {
		k.answer = nil
	}
	k.input, k.policies = req.Input, policies
	if answer != nil {
		k.answer = answer
	}
}

// sameInput compares two tool inputs as JSON values; an empty one is the
// same as the other (an allow that did not change the input).
func sameInput(a, b json.RawMessage) bool {
	if len(a) == 0 || len(b) == 0 {
		return true
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// shellDirs are the directories the agent's Bash shell may be in for req:
// the one the PreToolUse hook reported when it saw the call (the CLI's own
// word), else what the tracker followed from the calls it judged.
func (c *Chain) shellDirs(req *Request) []string {
	if req.ShellCwd != "" {
		return []string{req.ShellCwd}
	}
	return c.shell.at(req.Cwd)
}

// shellCwd follows where claude's Bash tool is. The tool keeps its working
// directory between calls, and a cd runs without asking, so a file tool's
// relative path is judged against every directory the shell may be in. Every Bash
// call the chain decides and does not deny may have run: its possible end
// directories join the set (the set only grows, since agentjq cannot tell
// whether a call it did not deny really ran, or whether claude put the
// shell back in the project). Past maxDirs directories, or after a cd
// agentjq cannot follow, the directory is unknown and relative paths are
// not allowed by any rule.
type shellCwd struct {
	mu      sync.Mutex
	dirs    []string // absolute; nil until the first request names the cwd
	unknown bool
	// seen are the calls already followed (tool_use id and input),
	// oldest first: a call seen on the stream and then decided is followed
	// once, not twice. The first time is enough: the stream shows a call's
	// tool_use after every call before it, so the set then already holds
	// every directory the call can start in; following it again later
	// would add directories it cannot start in (false denies). A call
	// decided with a changed input is followed again: that input is the
	// one that runs.
	seen []string
}

// maxSeen bounds the memory of followed calls; an id forgotten is at worst
// followed twice.
const maxSeen = 1024

// at returns the directories the shell may be in (empty: unknown).
func (s *shellCwd) at(sessionCwd string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.unknown {
		return []string{}
	}
	if s.dirs == nil && sessionCwd != "" {
		s.dirs = []string{filepath.Clean(sessionCwd)}
	}
	return append([]string(nil), s.dirs...)
}

// observe records a decided Bash call.
func (s *shellCwd) observe(req *Request, v Verdict, home string) {
	if req.ToolName != "Bash" || v.Behavior == "deny" {
		return
	}
	in, bad := readToolInput("Bash", req.Input)
	a, err := analyzeBash(in.Command)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.unknown || s.followed(req.ToolUseID, string(req.Input)) {
		return
	}
	// A call whose input cannot be read may still run: where it leaves
	// the shell is unknown.
	if bad != "" || err != nil || a.end.unknown {
		s.unknown = true
		return
	}
	if s.dirs == nil {
		if req.Cwd == "" {
			s.unknown = true
			return
		}
		s.dirs = []string{filepath.Clean(req.Cwd)}
	}
	var add []string
	for _, base := range s.dirs {
		for _, d := range a.end.dirs {
			switch {
			case d == "":
				continue
			case filepath.IsAbs(d):
				add = append(add, filepath.Clean(d))
			case d == "~" || strings.HasPrefix(d, "~/"):
				if home == "" {
					s.unknown = true
					return
				}
				add = append(add, filepath.Join(home, d[1:]))
			default:
				add = append(add, filepath.Join(base, d))
			}
		}
	}
	for _, d := range add {
		if !slices.Contains(s.dirs, d) {
			s.dirs = append(s.dirs, d)
		}
	}
	if len(s.dirs) > maxDirs {
		s.unknown = true
	}
}

// followed reports whether the call was followed before, and notes it.
func (s *shellCwd) followed(id, input string) bool {
	if id == "" {
		return false
	}
	key := id + "\x00" + input
	for _, x := range s.seen {
		if x == key {
			return true
		}
	}
	s.seen = append(s.seen, key)
	if len(s.seen) > maxSeen {
		s.seen = s.seen[1:]
	}
	return false
}

// ObserveBash records a Bash call seen on the agent's stream (a tool_use),
// which may run without the chain deciding it (claude runs read-only
// commands such as cd without asking), so the file tools' relative paths
// after it are judged where the shell may really be. A call the chain then decides is
// not followed twice (toolUseID). A call that is then denied stays
// followed: the set of directories only grows, which is fail-closed.
//
// Who calls it: `agentjq approve` (Serve), which reads the agent's whole
// stream and has no PreToolUse hook. spawn does not: whenever its chain
// can allow anything (a policy, an approver or a terminal: Chain.Guards),
// it registers agentjq's PreToolUse hook, which puts every call through
// Screen (so the tracker follows every call that is not denied) and reports
// the shell's real directory (Request.ShellCwd) besides; without the hook,
// the chain is the default alone, which allows nothing, or the agent (the
// context profile) asks nothing. Reading every assistant line for Bash
// calls would cost the data path and add nothing there.
func (c *Chain) ObserveBash(cwd, toolUseID string, input json.RawMessage) {
	req := &Request{CanUseTool: protocol.CanUseTool{ToolName: "Bash", Input: input, ToolUseID: toolUseID}, Cwd: cwd}
	if req.Cwd == "" {
		req.Cwd = c.opts.Cwd
	}
	c.shell.observe(req, Verdict{Behavior: protocol.Allow}, c.opts.Home)
}
