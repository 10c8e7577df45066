package approve

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/internal/termlock"
)

// Prompter asks the person at the terminal. It reads whole lines (no raw
// mode) from the terminal it was given, never from stdin, and returns as
// soon as the request's context is done, saying so on the terminal.
// "Always" answers become session rules that allow the same call again
// without asking.
//
// When stdin is that same terminal, the session's turns and the prompts
// share one reader (TerminalInput): a line typed while a prompt is open is
// the prompt's answer, any other line is a turn.
type Prompter struct {
	w     io.Writer
	lines chan string
	sem   chan struct{}
	home  string
	in    *TerminalInput
	// Quiet, when set, is called before a prompt is drawn; the function it
	// returns, once the prompt is answered. spawn holds its stdout
	// meanwhile, so a viewer on the same terminal (spawn | filter --view)
	// prints nothing into the middle of the prompt.
	Quiet func() (done func())

	mu      sync.Mutex
	session *RuleSet
	always  []string
}

// NewPrompter starts reading lines from rw.
func NewPrompter(rw io.ReadWriter, home string) *Prompter {
	p := &Prompter{w: rw, lines: make(chan string, 16), sem: make(chan struct{}, 1), home: home}
	go func() {
		defer close(p.lines)
		br := bufio.NewReader(rw)
		for {
			line, err := br.ReadString('\n')
			if line != "" || err == nil {
				p.lines <- strings.TrimRight(line, "\r\n")
			}
			if err != nil {
				return
			}
		}
	}()
	return p
}

// NewPrompterOn asks on w and reads the answers from in, the one reader
// of a terminal that also carries the session's turns.
func NewPrompterOn(w io.Writer, in *TerminalInput, home string) *Prompter {
	return &Prompter{w: w, lines: in.answers, sem: make(chan struct{}, 1), home: home, in: in}
}

// TerminalInput is the only reader of a terminal that is both stdin (the
// person's turns) and where prompts are answered. Two readers of one
// terminal would race for each line: the "y" meant for a prompt would
// become a turn. While a prompt is open every line typed belongs to it;
// otherwise a line is a turn, read from Turns.
type TerminalInput struct {
	mu        sync.Mutex
	prompting bool
	answers   chan string
	turns     chan []byte
	pending   []byte // the part of a turn not read yet
}

// NewTerminalInput starts reading lines from r. again says whether to read
// on after an end of file (a terminal's Ctrl-D ends the turns, yet later
// prompts still need answers); a reader that is not a terminal ends there.
func NewTerminalInput(r io.Reader, again bool) *TerminalInput {
	t := &TerminalInput{answers: make(chan string, 16), turns: make(chan []byte, 1024)}
	go func() {
		defer close(t.answers)
		br := bufio.NewReader(r)
		turnsOpen := true
		for {
			line, err := br.ReadString('\n')
			if line != "" {
				t.route(line, &turnsOpen)
			}
			if err != nil {
				t.mu.Lock()
				prompting := t.prompting
				t.mu.Unlock()
				if turnsOpen && !prompting {
					close(t.turns)
					turnsOpen = false
				}
				if !again || !errors.Is(err, io.EOF) {
					if turnsOpen {
						close(t.turns)
					}
					return
				}
				if prompting {
					t.answers <- "" // Ctrl-D at a prompt: no answer
				}
				br = bufio.NewReader(r)
			}
		}
	}()
	return t
}

func (t *TerminalInput) route(line string, turnsOpen *bool) {
	t.mu.Lock()
	prompting := t.prompting
	t.mu.Unlock()
	switch {
	case prompting:
		t.answers <- strings.TrimRight(line, "\r\n")
	case *turnsOpen:
		t.turns <- []byte(line)
	}
}

// setPrompting says whether a prompt is open.
func (t *TerminalInput) setPrompting(on bool) {
	t.mu.Lock()
	t.prompting = on
	t.mu.Unlock()
}

// Turns is the stream of the lines typed while no prompt was open.
func (t *TerminalInput) Turns() io.Reader { return turnReader{t} }

type turnReader struct{ t *TerminalInput }

func (r turnReader) Read(p []byte) (int, error) {
	t := r.t
	if len(t.pending) == 0 {
		line, ok := <-t.turns
		if !ok {
			return 0, io.EOF
		}
		t.pending = line
	}
	n := copy(p, t.pending)
	t.pending = t.pending[n:]
	return n, nil
}

var errTTYClosed = errors.New("the terminal was closed")

// termWait bounds the wait for a viewer's write under way before the
// prompt is drawn: one write to a terminal that has stopped (Ctrl-S)
// does not hold the prompt back.
const termWait = 2 * time.Second

// SessionRules lists the rules "always" answers added.
func (p *Prompter) SessionRules() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.always...)
}

// Decide allows what a session rule allows, else asks.
func (p *Prompter) Decide(ctx context.Context, req *Request) (Verdict, error) {
	if !req.IsQuestion() {
		p.mu.Lock()
		rs := p.session
		p.mu.Unlock()
		if rs != nil {
			if o := rs.evaluate(req); o.behavior == protocol.Allow {
				return Verdict{Behavior: protocol.Allow, UpdatedInput: req.Input, Source: protocol.ByTTY, Rule: "session " + o.rule.text}, nil
			}
		}
	}
	select {
	case p.sem <- struct{}{}:
	case <-ctx.Done():
		return Verdict{}, ctx.Err()
	}
	defer func() { <-p.sem }()
	if p.Quiet != nil {
		defer p.Quiet()()
	}
	if f, ok := p.w.(*os.File); ok {
		// A viewer on this terminal that lags behind what spawn held
		// back (filter --view on a slow terminal) waits for the answer.
		defer termlock.Hold(ctx, f, termWait)()
	}
	if p.in != nil {
		p.in.setPrompting(true)
		defer p.in.setPrompting(false)
	}
	p.drain()
	var v Verdict
	var err error
	if req.IsQuestion() {
		v, err = p.pick(ctx, req)
	} else {
		v, err = p.ask(ctx, req)
	}
	if err != nil && ctx.Err() != nil {
		why := "the agent withdrew the request"
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			why = "the approval timeout ran out; denied"
		}
		fmt.Fprintf(p.w, "\nagentjq: %s (%s %s); no answer needed.\n", why, req.ToolName, req.ToolUseID)
		return Verdict{}, ctx.Err()
	}
	if errors.Is(err, errTTYClosed) {
		return Verdict{Behavior: protocol.Deny, Message: "agentjq: the terminal closed before anyone answered, so the call was denied.", Source: protocol.ByTTY}, nil
	}
	return v, err
}

// drain drops lines typed while no prompt was showing.
func (p *Prompter) drain() {
	for {
		select {
		case _, ok := <-p.lines:
			if !ok {
				return
			}
		default:
			return
		}
	}
}

func (p *Prompter) readLine(ctx context.Context) (string, error) {
	select {
	case l, ok := <-p.lines:
		if !ok {
			return "", errTTYClosed
		}
		return strings.TrimSpace(l), nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

func (p *Prompter) ask(ctx context.Context, req *Request) (Verdict, error) {
	name := req.ToolName
	if req.DisplayName != "" && req.DisplayName != req.ToolName {
		name += " (" + req.DisplayName + ")"
	}
	fmt.Fprintf(p.w, "\nagentjq: the agent wants to use %s\n", name)
	for _, l := range keyInputLines(req) {
		fmt.Fprintf(p.w, "  %s\n", l)
	}
	if req.Description != "" {
		fmt.Fprintf(p.w, "  (%s)\n", clip(req.Description, 200))
	}
	for {
		fmt.Fprint(p.w, "[y]es once / [a]lways / [n]o (deny with a message) / [i]nterrupt: ")
		l, err := p.readLine(ctx)
		if err != nil {
			return Verdict{}, err
		}
		switch strings.ToLower(l) {
		case "y", "yes":
			return Verdict{Behavior: protocol.Allow, UpdatedInput: req.Input, Source: protocol.ByTTY, Rule: "yes"}, nil
		case "a", "always":
			// "Always" stays in agentjq's session: the agent's own
			// permission_suggestions are never echoed, since their
			// destination (localSettings, projectSettings, userSettings)
			// would write allow rules into settings files that outlive
			// the session and that agentjq does not judge.
			rules := p.addSession(req)
			return Verdict{Behavior: protocol.Allow, UpdatedInput: req.Input, Source: protocol.ByTTY,
				Rule: "always " + strings.Join(rules, ", ")}, nil
		case "n", "no":
			fmt.Fprint(p.w, "message for the agent (optional): ")
			m, err := p.readLine(ctx)
			if err != nil {
				return Verdict{}, err
			}
			if m == "" {
				m = "The user denied this tool call at the terminal."
			}
			return Verdict{Behavior: protocol.Deny, Message: m, Source: protocol.ByTTY, Rule: "no"}, nil
		case "i", "interrupt":
			return Verdict{Behavior: protocol.Deny, Interrupt: true, Message: "The user interrupted at the terminal.", Source: protocol.ByTTY, Rule: "interrupt"}, nil
		}
	}
}

// keyInputLines show what a call would do: first its key input
// (protocol.ToolKey, as approve test, the view and agentlib's key_input
// show it), then the other fields that help a person decide, and a few
// lines of what a Write would write.
func keyInputLines(req *Request) []string {
	key := protocol.ToolKeyJSON(req.ToolName, req.Input)
	var out []string
	switch {
	case key.Field != "":
		out = append(out, key.Field+": "+clip(key.Text, 500))
	case key.Text != "":
		out = append(out, "input: "+clip(key.Text, 500))
	}
	var in map[string]any
	_ = json.Unmarshal(req.Input, &in)
	for _, k := range []string{"command", "file_path", "notebook_path", "path", "pattern", "url", "query", "subagent_type", "prompt"} {
		if s, ok := in[k].(string); ok && s != "" && k != key.Field {
			out = append(out, k+": "+clip(s, 500))
		}
	}
	if s, ok := in["content"].(string); ok {
		lines := strings.Split(s, "\n")
		out = append(out, fmt.Sprintf("content (%d lines):", len(lines)))
		for i, l := range lines {
			if i == 5 {
				out = append(out, "  …")
				break
			}
			out = append(out, "  | "+clip(l, 160))
		}
	}
	if s, ok := in["old_string"].(string); ok {
		out = append(out, "replacing: "+clip(strings.SplitN(s, "\n", 2)[0], 160))
	}
	if len(out) == 0 {
		out = append(out, "input: "+clip(string(req.Input), 500))
	}
	return out
}

// addSession turns an "always" into session rules: Bash(exact command) for
// each part of a Bash command, the host for the sandbox's network request,
// the tool's name otherwise.
func (p *Prompter) addSession(req *Request) []string {
	var texts []string
	switch req.ToolName {
	case "Bash":
		for _, u := range bashUnits(commandOf(req)) {
			if u.bareBash {
				continue
			}
			// A part agentjq cannot read (a command chosen at run time)
			// would need the bare Bash rule, which allows every command
			// for the rest of the session: that part is asked again.
			if r := suggest(u, req.Cwd); r != "Bash" {
				texts = append(texts, r)
			}
		}
	case "SandboxNetworkAccess":
		// The person allowed one host, not the network.
		if in, bad := readToolInput(req.ToolName, req.Input); bad == "" && networkHost(in.Host) != "" {
			texts = []string{"SandboxNetworkAccess(domain:" + networkHost(in.Host) + ")"}
		}
	default:
		texts = []string{req.ToolName}
	}
	f := &RulesFile{Name: "session", Default: protocol.Ask}
	var kept []string
	for _, t := range texts {
		r, err := parseRule(t, protocol.Allow, p.home)
		if err != nil {
			continue
		}
		r.file = f
		f.rules = append(f.rules, r)
		kept = append(kept, t)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.session != nil {
		f.rules = append(f.rules, p.session.files[0].rules...)
	}
	p.session = NewRuleSet([]*RulesFile{f}, p.home)
	p.always = append(p.always, kept...)
	return kept
}

func commandOf(req *Request) string {
	var in struct {
		Command string `json:"command"`
	}
	_ = json.Unmarshal(req.Input, &in)
	return in.Command
}

// pick shows each question's options and reads a choice.
func (p *Prompter) pick(ctx context.Context, req *Request) (Verdict, error) {
	var in toolInput
	if json.Unmarshal(req.Input, &in) != nil || len(in.Questions) == 0 {
		return Verdict{Behavior: protocol.Deny, Message: NoOneToAnswer, Source: protocol.ByTTY}, nil
	}
	answers := map[string]string{}
	fmt.Fprintf(p.w, "\nagentjq: the agent asks:\n")
	for _, q := range in.Questions {
		if len(q.Options) == 0 {
			return Verdict{Behavior: protocol.Deny, Message: NoOneToAnswer, Source: protocol.ByTTY}, nil
		}
		if q.Header != "" {
			fmt.Fprintf(p.w, "[%s] ", q.Header)
		}
		fmt.Fprintf(p.w, "%s\n", q.Question)
		for i, o := range q.Options {
			if o.Description != "" {
				fmt.Fprintf(p.w, "  %d) %s: %s\n", i+1, o.Label, o.Description)
			} else {
				fmt.Fprintf(p.w, "  %d) %s\n", i+1, o.Label)
			}
		}
		for {
			if q.MultiSelect {
				fmt.Fprintf(p.w, "choose 1-%d (several: 1,3), or an empty line to decline: ", len(q.Options))
			} else {
				fmt.Fprintf(p.w, "choose 1-%d, or an empty line to decline: ", len(q.Options))
			}
			l, err := p.readLine(ctx)
			if err != nil {
				return Verdict{}, err
			}
			if l == "" {
				return Verdict{Behavior: protocol.Deny, Source: protocol.ByTTY, Rule: "declined",
					Message: "The user declined to answer at the terminal. Do not assume an answer."}, nil
			}
			labels, ok := parseChoice(l, q)
			if ok {
				answers[q.Question] = strings.Join(labels, ", ")
				break
			}
		}
	}
	updated, err := withAnswers(req.Input, answers)
	if err != nil {
		return Verdict{Behavior: protocol.Deny, Message: NoOneToAnswer, Source: protocol.ByTTY}, nil
	}
	return Verdict{Behavior: protocol.Allow, UpdatedInput: updated, Source: protocol.ByTTY, Rule: "picker"}, nil
}

func parseChoice(l string, q question) ([]string, bool) {
	var labels []string
	seen := map[int]bool{}
	for _, f := range strings.FieldsFunc(l, func(r rune) bool { return r == ',' || r == ' ' }) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 || n > len(q.Options) {
			return nil, false
		}
		if !seen[n] {
			seen[n] = true
			labels = append(labels, q.Options[n-1].Label)
		}
	}
	if len(labels) == 0 || (!q.MultiSelect && len(labels) > 1) {
		return nil, false
	}
	return labels, true
}

// hasAllAnswers reports whether every question has a non-empty answer.
func hasAllAnswers(input json.RawMessage) bool {
	var in struct {
		Questions []question     `json:"questions"`
		Answers   map[string]any `json:"answers"`
	}
	if json.Unmarshal(input, &in) != nil || len(in.Questions) == 0 {
		return false
	}
	for _, q := range in.Questions {
		s, ok := in.Answers[q.Question].(string)
		if !ok || strings.TrimSpace(s) == "" {
			return false
		}
	}
	return true
}
