package cmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/agentjq/agentjq/approve"
	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/iostreams"
	"github.com/agentjq/agentjq/recording"
)

// ApproveCmd is the approve subcommand: answer (the default), test, explain.
type ApproveCmd struct {
	Answer  ApproveAnswerCmd  `cmd:"" default:"withargs" help:"Answer each can_use_tool request on stdin with one control_response line (the default)."`
	Test    ApproveTestCmd    `cmd:"" help:"Run policies over every permission request in recordings or captures."`
	Explain ApproveExplainCmd `cmd:"" help:"Decide one request read from stdin and say why."`
}

// PolicyFlags name the policy files of the approve subcommands.
type PolicyFlags struct {
	Policy []string `placeholder:"FILE" help:"Rules files (.json, Claude Code permission syntax) or jq policies (.jq); repeatable."`
	Cwd    string   `short:"C" placeholder:"DIR" help:"The session directory relative path rules start from, until a request's stream names one (default: the current directory)."`
}

func (f PolicyFlags) chainOptions(ios *iostreams.IO) (approve.ChainOptions, error) {
	cwd := f.Cwd
	if cwd == "" {
		cwd = ios.Dir
	}
	if cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return approve.ChainOptions{}, err
		}
		cwd = wd
	}
	return approve.ChainOptions{Policies: f.Policy, Cwd: cwd, Home: ios.Getenv("HOME"), Env: ios.Environ, Stderr: ios.Err}, nil
}

// ApproveAnswerCmd answers permission requests as a filter or co-process.
type ApproveAnswerCmd struct {
	PolicyFlags
	Approver        string        `placeholder:"CMD" help:"Ask this approver command for what the policies leave open."`
	ApproverFormat  string        `enum:"control,hook" default:"control" help:"How the approver speaks: control or hook."`
	ApprovalTimeout time.Duration `default:"1m" help:"Deny a request not decided within this long."`
	PassCredentials bool          `name:"pass-credentials" help:"Let the approver inherit the agent's credentials (ANTHROPIC_API_KEY, AWS_*, ...); by default they are removed from its environment."`
}

// Run runs approve.
func (c *ApproveAnswerCmd) Run(ctx context.Context, ios *iostreams.IO) error {
	opts, err := c.chainOptions(ios)
	if err != nil {
		return err
	}
	opts.Approver, opts.ApproverFormat, opts.PassCredentials = c.Approver, c.ApproverFormat, c.PassCredentials
	chain, err := approve.NewChain(opts)
	if err != nil {
		return err
	}
	defer chain.Close()
	bad, err := approve.Serve(ctx, ios.In, ios.Out, chain, approve.ServeOptions{Cwd: opts.Cwd, Timeout: c.ApprovalTimeout, Stderr: ios.Err})
	if err != nil {
		return err
	}
	if bad > 0 {
		return silentExit(protocol.ExitError)
	}
	return nil
}

// Help is shown after the flags.
func (c *ApproveAnswerCmd) Help() string {
	return `Reads the agent's NDJSON on stdin and writes one control_response line for
each can_use_tool request, and nothing else: spawn can run it as its
approver. The chain: rules files, then jq policies, then --approver, then a
deny that names what would have allowed the call. Fail closed: any doubt,
error or timeout denies. Given the whole stream, it follows system/init
(the session directory) and the Bash calls of assistant messages (claude
runs a cd without asking; the shell stays there), so the file tools'
relative paths are judged where the shell is.

Examples:
  agentjq spawn --approver 'agentjq approve --policy examples/policies/rules.json'
  agentjq approve --policy rules.json --policy dry-run.jq < session.ndjson
  agentjq approve --policy rules.json --approver ./hook.sh --approver-format hook < requests.ndjson`
}

// ApproveTestCmd runs policies over recorded sessions.
type ApproveTestCmd struct {
	PolicyFlags
	Expect     string   `placeholder:"FILE" help:"Expected decisions, one \"SELECTOR allow|deny\" a line (SELECTOR: tool_use_id, request_id or FILE:LINE); exit 1 on any difference."`
	Recordings []string `arg:"" name:"recording" help:"agentjq recordings or raw NDJSON captures of the agent's stdout."`
}

// Run runs approve test.
func (c *ApproveTestCmd) Run(ctx context.Context, ios *iostreams.IO) error {
	if len(c.Policy) == 0 {
		return usageError("approve test needs at least one --policy")
	}
	opts, err := c.chainOptions(ios)
	if err != nil {
		return err
	}
	chain, err := approve.NewChain(opts)
	if err != nil {
		return err
	}
	defer chain.Close()
	var exp []approve.Expectation
	if c.Expect != "" {
		data, err := os.ReadFile(c.Expect)
		if err != nil {
			return usageError("%v", err)
		}
		if exp, err = approve.ParseExpectations(c.Expect, data); err != nil {
			return err
		}
	}
	var all []approve.TestResult
	var unreadable []string
	for _, name := range c.Recordings {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		in := &contentSeen{r: f}
		bad := &writeCount{w: ios.Err}
		res, err := testStream(ctx, name, in, chain, opts.Cwd, bad)
		f.Close()
		if err != nil {
			return err
		}
		// A file that is empty, or has lines that are not agent lines, is
		// not a test that passed.
		switch {
		case !in.seen:
			unreadable = append(unreadable, name+": empty: neither a recording nor an agent stream")
		case bad.n > 0:
			unreadable = append(unreadable, fmt.Sprintf("%s: %d lines could not be read", name, bad.n))
		}
		for _, r := range res {
			fmt.Fprintln(ios.Out, r.String())
		}
		all = append(all, res...)
	}
	if len(unreadable) > 0 {
		return &exitError{code: protocol.ExitError, err: errors.New(strings.Join(unreadable, "; "))}
	}
	if c.Expect == "" {
		return nil
	}
	diffs := approve.CheckExpectations(all, exp)
	for _, d := range diffs {
		fmt.Fprintf(ios.Err, "FAIL %s\n", d)
	}
	if len(diffs) > 0 {
		fmt.Fprintf(ios.Err, "agentjq: %d of %d expectations failed\n", len(diffs), len(exp))
		return silentExit(protocol.ExitError)
	}
	return nil
}

// Help is shown after the flags.
func (c *ApproveTestCmd) Help() string {
	return `Prints one line per permission request: FILE:LINE, tool, key input,
decision, and what decided it (the rule with file:line:column, the jq
policy, or the default). With --expect, checks the decisions like unit
tests and exits 1 on any difference.

Examples:
  agentjq approve test --policy rules.json fixtures/captures/claude-code-2.1.328/*.out.ndjson
  agentjq approve test --policy rules.json --expect expected.txt session.rec.ndjson
  agentjq approve test --policy dry-run.jq --policy rules.json yesterday.rec.ndjson`
}

// ApproveExplainCmd decides one request and says why.
type ApproveExplainCmd struct {
	PolicyFlags
}

// Run runs approve explain.
func (c *ApproveExplainCmd) Run(ctx context.Context, ios *iostreams.IO) error {
	opts, err := c.chainOptions(ios)
	if err != nil {
		return err
	}
	chain, err := approve.NewChain(opts)
	if err != nil {
		return err
	}
	defer chain.Close()
	req, err := approve.ReadRequest(ios.In, opts.Cwd)
	if err != nil {
		return usageError("stdin: %v", err)
	}
	var steps []string
	v, _ := chain.Explain(ctx, req, func(s string) { steps = append(steps, s) })
	fmt.Fprintf(ios.Out, "request: %s %s (cwd %s)\n", req.ToolName, approve.KeyInput(req), req.Cwd)
	for _, s := range steps {
		fmt.Fprintf(ios.Out, "  %s\n", s)
	}
	fmt.Fprintf(ios.Out, "decision: %s by %s", v.Behavior, v.Source)
	if v.Rule != "" {
		fmt.Fprintf(ios.Out, " (%s)", v.Rule)
	}
	fmt.Fprintln(ios.Out)
	if v.Message != "" {
		fmt.Fprintf(ios.Out, "message: %s\n", v.Message)
	}
	if v.Behavior == protocol.Allow && string(v.UpdatedInput) != string(req.Input) {
		fmt.Fprintf(ios.Out, "updatedInput: %s\n", strings.TrimSpace(string(v.UpdatedInput)))
	}
	return nil
}

// Help is shown after the flags.
func (c *ApproveExplainCmd) Help() string {
	return `Stdin holds one request: a control_request line, or just its body
({"tool_name":"Bash","input":{"command":"..."}}).

Examples:
  echo '{"tool_name":"Bash","input":{"command":"git push --force"}}' | agentjq approve explain --policy rules.json
  grep -m1 can_use_tool session.ndjson | agentjq approve explain --policy rules.json --policy dry-run.jq`
}

// testStream runs d over every can_use_tool request in one recording or
// capture: a raw NDJSON capture of the agent's stdout, or an agentjq
// recording (its "out" entries). cwd applies until the stream names one.
func testStream(ctx context.Context, name string, r io.Reader, d approve.Decider, cwd string, stderr io.Writer) ([]approve.TestResult, error) {
	t := approve.NewTester(ctx, name, d, cwd, stderr)
	lines := recording.NewLines(r, name)
	lines.Warn = func(err error) { fmt.Fprintf(stderr, "agentjq: warning: %v\n", err) }
	for first := true; ; first = false {
		l, err := lines.Next()
		if err == io.EOF {
			return t.Results, nil
		}
		var bad *recording.LineError
		if h, isRec := lines.Recording(); first && isRec {
			if errors.As(err, &bad) && bad.Line == 1 {
				return t.Results, err // a header that does not parse
			}
			if h.Cwd != "" {
				t.SetCwd(h.Cwd)
			}
		}
		if errors.As(err, &bad) {
			fmt.Fprintf(stderr, "agentjq: %v\n", err)
			continue
		}
		if err != nil {
			return t.Results, err
		}
		if l.Dir != "" && l.Dir != protocol.DirOut {
			continue
		}
		t.Line(l.Num, l.Text)
	}
}

// contentSeen notes whether anything but white space was read.
type contentSeen struct {
	r    io.Reader
	seen bool
}

func (c *contentSeen) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if !c.seen && len(bytes.TrimSpace(p[:n])) > 0 {
		c.seen = true
	}
	return n, err
}

// writeCount counts the writes (one a reported line) passed on to w.
type writeCount struct {
	w io.Writer
	n int
}

func (c *writeCount) Write(p []byte) (int, error) {
	c.n++
	return c.w.Write(p)
}
