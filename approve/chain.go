package approve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
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

// Decide runs the chain. It never returns an error: every failure becomes
// a deny with a message the agent can read.
func (c *Chain) Decide(ctx context.Context, req *Request) (Verdict, error) {
	v, _ := c.Explain(ctx, req, nil)
	return v, nil
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
		p, _ := c.policies(ctx, req, trace)
		v = &p
	}
	a := *v
	if !req.Before && a.Behavior != protocol.Allow && a.Behavior != protocol.Deny {
		a, _ = c.askOthers(ctx, req, a, trace)
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

// policies asks the rules files and jq policies. final is true when they
// decided (allow or deny, already finished); otherwise v is an "ask" or no
// opinion ("" with the rules' unmatched message) for the rest of the chain.
func (c *Chain) policies(ctx context.Context, req *Request, trace func(string)) (v Verdict, final bool) {
	var asked *Verdict
	unmatched := ""
	shell := c.shellDirs(req)
	if v, ok := protectWithoutRules(c.rules, req, shell, c.opts.Home, c.held); ok {
		trace(step("protected", v))
		return c.finish(req, v), true
	}
	if c.rules != nil {
		v := c.rules.decideAt(req, shell)
		trace(step("rules", v))
		switch v.Behavior {
		case protocol.Allow, protocol.Deny:
			return c.finish(req, v), true
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
				return c.ctxVerdict(ctx), true
			}
			trace(step("jq "+p.Name, v))
			switch v.Behavior {
			case protocol.Deny:
				return c.finish(req, v), true
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
			return c.finish(req, *allow), true
		}
	}
	if asked != nil {
		return *asked, false
	}
	return Verdict{Message: unmatched}, false
}

// askOthers asks the approver and the terminal what the policies passed
// on (passed: an "ask" or no opinion), then fails closed.
func (c *Chain) askOthers(ctx context.Context, req *Request, passed Verdict, trace func(string)) (Verdict, error) {
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
			return c.ctxVerdict(ctx), nil
		}
		if err != nil {
			v = Verdict{Behavior: protocol.Deny, Message: "agentjq: the approver failed: " + err.Error(), Source: protocol.ByError, Rule: "approver"}
		}
		trace(step("approver", v))
		switch v.Behavior {
		case protocol.Allow, protocol.Deny:
			return c.finish(req, v), nil
		case protocol.Ask:
			asked = &v
		}
	}
	if p := c.person(); p != nil {
		v, err := p.Decide(ctx, req)
		if ctx.Err() != nil {
			return c.ctxVerdict(ctx), nil
		}
		if err == nil {
			trace(step("tty", v))
			if v.Behavior == protocol.Allow || v.Behavior == protocol.Deny {
				return c.finish(req, v), nil
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
	return c.finish(req, v), nil
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

func (c *Chain) finishAnswer(req *Request, v Verdict) Verdict {
	asked := len(v.UpdatedPermissions)
	if v = checkAnswer(v); v.Behavior == protocol.Allow {
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

// shellDirs are the directories the agent's Bash shell may be in for req:
// the one the PreToolUse hook reported when it saw the call (the CLI's own
// word), else what the tracker followed from the calls it judged.
func (c *Chain) shellDirs(req *Request) []string {
	if req.ShellCwd != "" {
		return []string{req.ShellCwd}
	}
	return c.shell.at(req.Cwd)
}
