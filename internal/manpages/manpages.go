// Package manpages generates agentjq's manual pages from the code: the
// command pages from the kong model (flags, arguments, help texts and
// their examples), filter's page from its own flag table, the protocol
// page from the protocol package's tables, the recording page from
// recording.Manual. The pages in man/ are its output; a test fails when
// they drift.
package manpages

import (
	"fmt"
	"github.com/agentjq/agentjq/daemon"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/alecthomas/kong"

	"github.com/agentjq/agentjq/filter"
	"github.com/agentjq/agentjq/filter/agentlib"
	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/internal/roff"
	"github.com/agentjq/agentjq/recording"
)

const (
	source = "agentjq"
	manual = "agentjq manual"
)

// ExitRow is one row of an exit status table; Code is a number or a
// placeholder such as N.
type ExitRow struct {
	Code    string
	Meaning string
}

// Input is what the generator reads.
type Input struct {
	// App is agentjq's kong model.
	App *kong.Application
	// Exit holds the exit status tables of the commands whose tables do
	// not live in a domain package, by command name (approve, replay).
	Exit map[string][]ExitRow
}

// Commands are the commands with a page of their own, in the order the
// main page lists them.
var Commands = []string{"spawn", "filter", "approve", "record", "replay", "proxy", "acp"}

// Generate returns every page by file name.
func Generate(in Input) (map[string][]byte, error) {
	if in.App == nil {
		return nil, fmt.Errorf("manpages: no kong model")
	}
	pages := map[string][]byte{}
	pages["agentjq.1"] = mainPage(in.App)
	for _, name := range Commands {
		node := child(in.App.Node, name)
		if node == nil {
			return nil, fmt.Errorf("manpages: the kong model has no %q command", name)
		}
		var p *roff.Page
		switch name {
		case "filter":
			p = filterPage(node)
		default:
			rows, err := exitRows(name, in.Exit)
			if err != nil {
				return nil, err
			}
			p = commandPage(node, rows)
		}
		pages["agentjq-"+name+".1"] = p.Bytes()
	}
	rec, err := roff.FromMarkdown(recording.Manual)
	if err != nil {
		return nil, fmt.Errorf("recording.Manual: %w", err)
	}
	pages["agentjq-recording.5"] = rec.Bytes()
	pol, err := roff.FromMarkdown(policyManual)
	if err != nil {
		return nil, fmt.Errorf("policy manual: %w", err)
	}
	pages["agentjq-policy.5"] = pol.Bytes()
	pages["agentjq-protocol.7"] = protocolPage().Bytes()
	dmn, err := roff.FromMarkdown(daemon.Manual())
	if err != nil {
		return nil, fmt.Errorf("daemon.Manual: %w", err)
	}
	pages["agentjq-daemon.7"] = dmn.Bytes()
	return pages, nil
}

func exitRows(name string, extra map[string][]ExitRow) ([]ExitRow, error) {
	switch name {
	case "spawn", "record":
		var rows []ExitRow
		for _, r := range protocol.SpawnExitTable {
			m := r.Meaning
			if r.Outcome != "" {
				m = "(" + string(r.Outcome) + ") " + m
			}
			rows = append(rows, ExitRow{strconv.Itoa(r.Code), m})
		}
		return rows, nil
	case "acp":
		return acpExit, nil
	}
	rows, ok := extra[name]
	if !ok {
		return nil, fmt.Errorf("manpages: no exit status table for %s", name)
	}
	return rows, nil
}

func child(n *kong.Node, name string) *kong.Node {
	for _, c := range n.Children {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// splitDetail splits a Help() text into its description, its examples
// (the lines after "Examples:") and drops an "Exit status:" block, which
// the page renders from the table itself.
func splitDetail(detail string) (desc []string, examples []string) {
	var paras []string
	before, after, found := strings.Cut(detail, "Examples:\n")
	for _, p := range strings.Split(strings.TrimSpace(before), "\n\n") {
		if strings.HasPrefix(strings.TrimSpace(p), "Exit status:") || strings.TrimSpace(p) == "" {
			continue
		}
		paras = append(paras, p)
	}
	if found {
		for _, l := range strings.Split(after, "\n") {
			if l = strings.TrimSpace(l); l != "" {
				examples = append(examples, l)
			}
		}
	}
	return paras, examples
}

// describe writes Help() paragraphs: indented ones as code.
func describe(p *roff.Page, paras []string) {
	for _, para := range paras {
		lines := strings.Split(para, "\n")
		if strings.HasPrefix(lines[0], "  ") {
			for i := range lines {
				lines[i] = strings.TrimPrefix(lines[i], "  ")
			}
			p.Code(lines...)
			continue
		}
		p.Para(para)
	}
}

func mainPage(app *kong.Application) []byte {
	p := roff.NewPage("agentjq", "1", source, manual)
	p.Section("NAME")
	p.Roff(`agentjq \- put coding\-agent CLIs into Unix pipelines`)
	p.Section("SYNOPSIS")
	p.Roff(roff.Bold("agentjq") + " " + roff.Italic("command") + " [" + roff.Italic("flags") + "] [" + roff.Italic("arguments") + "]")
	p.Section("DESCRIPTION")
	for _, para := range strings.Split(app.Help, "\n\n") {
		p.Para(para)
	}
	p.Para("agentjq runs an agent CLI (Claude Code's claude, or context, a compatible CLI) headless over its stream-json protocol: turns go in on stdin, the agent's events come out on stdout, one JSON object per line, and every permission request the agent makes is answered by a policy, an approver command or the person at the terminal. The other commands filter, record and replay such streams.")
	p.Section("COMMANDS")
	for _, c := range app.Children {
		if c.Hidden {
			continue
		}
		body := c.Help
		switch {
		case hasPage(c.Name):
			body += " See agentjq-" + c.Name + "(1)."
		case c.Name == "serve" || c.Name == "attach" || c.Name == "call":
			body += " See agentjq-daemon(7)."
		}
		p.Item(roff.Bold("agentjq "+c.Name), body)
	}
	p.Section("OPTIONS")
	p.Item(roff.Bold("-h")+", "+roff.Bold("--help"), "Show help; after a command, the command's help.")
	p.Section("EXIT STATUS")
	p.Para("Each command documents its own table. Common to all: 0 is success, 1 an error, 2 a usage error or bad input (as in jq). spawn and record add the outcome of the session: see agentjq-spawn(1).")
	p.Section("ENVIRONMENT")
	envItems(p, "AGENTJQ_AGENT_BIN", "AGENTJQ_GRACE", "NO_COLOR", "TERM", "MANPAGER")
	p.Section("EXAMPLES")
	p.Para("Run one prompt and watch it:")
	p.Code(`agentjq spawn -p 'Summarise README.md' | agentjq filter --view`)
	p.Para("Run a session under a policy, recorded, and list the tools it called:")
	p.Code(`agentjq record -o run.rec --policy rules.json -p 'fix the tests'`, `agentjq filter -c 'tool_calls | {name, key: key_input}' run.rec`)
	p.Para("Check a policy against yesterday's recording before using it:")
	p.Code(`agentjq approve test --policy rules.json run.rec`)
	p.Section("SEE ALSO")
	seeAlso(p, "")
	return p.Bytes()
}

func hasPage(name string) bool {
	for _, c := range Commands {
		if c == name {
			return true
		}
	}
	return false
}

func seeAlso(p *roff.Page, self string) {
	refs := []string{"agentjq(1)"}
	for _, c := range Commands {
		refs = append(refs, "agentjq-"+c+"(1)")
	}
	refs = append(refs, "agentjq-policy(5)", "agentjq-recording(5)", "agentjq-protocol(7)", "jq(1)", "claude(1)")
	var out []string
	for _, r := range refs {
		if r == self {
			continue
		}
		name, sec, _ := strings.Cut(r, "(")
		out = append(out, roff.Bold(name)+"("+sec)
	}
	p.Roff(strings.Join(out, ",\n"))
}

// environment documents every variable agentjq reads or sets.
var environment = map[string]string{
	"AGENTJQ_AGENT_BIN":    "The agent binary when --bin is not given (else the profile's name on PATH).",
	"AGENTJQ_GRACE":        "How long each stage of a staged shutdown (interrupt, close stdin, terminate, kill) waits for the agent before the next, as a Go duration (default 5s).",
	"NO_COLOR":             "When set, no colour on stdout or stderr unless a --color flag asks for it.",
	"TERM":                 "TERM=dumb turns colour off like NO_COLOR.",
	"MANPAGER":             "agentjq man: the pager for a page shown on a terminal, then PAGER, then man(1)'s own choice or less.",
	"HOME":                 "Expands ~/ in path rules of rules files.",
	"PATH":                 "Where the agent binary is looked up.",
	"AGENTJQ_TOOL":         "Set for a --mcp-tool command: the tool's name.",
	"AGENTJQ_TOOL_USE_ID":  "Set for a --mcp-tool command: the call's tool_use_id.",
	"AGENTJQ_ARG_NAME":     "Set for a --mcp-tool command: each scalar argument of the call, its name upper-cased and every character but an ASCII letter or digit replaced by _; a call whose argument names map to the same variable (file and FILE) is refused, and so is a --mcp-tool-schema whose properties do. The values come from the model: quote them in the command (\"$AGENTJQ_ARG_CITY\").",
	"AGENTJQ_HOOK_EVENT":   "Set for a --hook command: the hook event (PreToolUse, ...); CLAUDE_PROJECT_DIR is the agent's directory.",
	"AGENTJQ_POLICY":       "agentjq proxy: policy files, separated by ':', added to --policy.",
	"AGENTJQ_APPROVER":     "agentjq proxy: the approver command when --approver is not given.",
	"AGENTJQ_RECORD":       "agentjq proxy: record the session to this file (a directory: one file per session) when --record is not given.",
	"AGENTJQ_EVENTS":       "agentjq proxy: the file descriptor for agentjq's events when --events is not given.",
	"AGENTJQ_PROXY_CONFIG": "agentjq proxy: the config file when --config is not given.",
	"AGENTJQ_PROXY_PID":    "Set by agentjq proxy for the agent: its pid, so that a proxy started by itself (through a shim found as the real CLI) refuses to run.",
}

func envItems(p *roff.Page, names ...string) {
	for _, n := range names {
		p.Item(roff.Bold(n), environment[n])
	}
}

var pageEnv = map[string][]string{
	"spawn":   {"AGENTJQ_AGENT_BIN", "AGENTJQ_GRACE", "PATH", "HOME", "AGENTJQ_TOOL", "AGENTJQ_TOOL_USE_ID", "AGENTJQ_ARG_NAME", "AGENTJQ_HOOK_EVENT"},
	"record":  {"AGENTJQ_AGENT_BIN", "AGENTJQ_GRACE", "PATH", "HOME"},
	"replay":  {"AGENTJQ_AGENT_BIN"},
	"proxy":   {"AGENTJQ_AGENT_BIN", "AGENTJQ_POLICY", "AGENTJQ_APPROVER", "AGENTJQ_RECORD", "AGENTJQ_EVENTS", "AGENTJQ_PROXY_CONFIG", "AGENTJQ_PROXY_PID", "AGENTJQ_GRACE", "PATH", "HOME"},
	"acp":     {"AGENTJQ_AGENT_BIN", "AGENTJQ_GRACE", "PATH", "HOME"},
	"approve": {"HOME"},
	"filter":  {"NO_COLOR", "TERM"},
}

// flagTag renders a flag's names and value placeholder for a .TP tag.
func flagTag(f *kong.Flag) string {
	var parts []string
	if f.Short != 0 {
		parts = append(parts, roff.Bold("-"+string(f.Short)))
	}
	long := roff.Bold("--" + f.Name)
	if !f.IsBool() && !f.IsCounter() {
		long += "=" + roff.Italic(placeholder(f))
	}
	parts = append(parts, long)
	return strings.Join(parts, ", ")
}

func placeholder(f *kong.Flag) string {
	if f.PlaceHolder != "" {
		return f.PlaceHolder
	}
	if f.Enum != "" {
		return strings.Join(f.EnumSlice(), "|")
	}
	if !f.Target.IsValid() {
		return "VALUE"
	}
	switch t := f.Target.Type(); {
	case t == reflect.TypeOf(time.Duration(0)):
		return "DURATION"
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.String, t.Kind() == reflect.String:
		return "STRING"
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64:
		return "N"
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		return "NUMBER"
	}
	return "VALUE"
}

func flagBody(f *kong.Flag) string {
	body := f.Help
	if f.HasDefault && f.Default != "" && !f.IsBool() {
		body += " Default: " + f.Default + "."
	}
	return body
}

// options writes the positional arguments and flags of one command.
func options(p *roff.Page, n *kong.Node) {
	for _, a := range n.Positional {
		tag := roff.Italic(a.Name)
		if a.IsCumulative() {
			tag += "\\&..."
		}
		help := a.Help
		if a.Passthrough {
			help = "After --: " + help
		}
		p.Item(tag, help)
	}
	for _, f := range n.Flags {
		if f.Hidden || f.Name == "help" {
			continue
		}
		p.Item(flagTag(f), flagBody(f))
	}
	p.Item(roff.Bold("-h")+", "+roff.Bold("--help"), "Show the command's help.")
}

// synopsis is the usage line of a command: flags first, then the
// positional arguments, then what goes to the agent after --.
func synopsis(n *kong.Node) string {
	out := roff.Bold("agentjq "+n.Path()) + " [" + roff.Italic("flags") + "]"
	for _, a := range n.Positional {
		name := roff.Italic(a.Name)
		if a.IsCumulative() {
			name += "\\&..."
		}
		switch {
		case a.Passthrough:
			out += " [" + roff.Bold("--") + " " + name + "]"
		case a.Required:
			out += " " + name
		default:
			out += " [" + name + "]"
		}
	}
	return out
}

func commandPage(n *kong.Node, exits []ExitRow) *roff.Page {
	name := n.Name
	p := roff.NewPage("agentjq-"+name, "1", source, manual)
	p.Section("NAME")
	p.Roff("agentjq\\-" + name + " \\- " + roff.Escape(lowerFirst(strings.TrimSuffix(n.Help, "."))))
	leaves := []*kong.Node{n}
	if len(n.Children) > 0 {
		leaves = nil
		for _, c := range n.Children {
			if !c.Hidden {
				leaves = append(leaves, c)
			}
		}
	}
	p.Section("SYNOPSIS")
	for i, l := range leaves {
		if i > 0 {
			p.Roff(".br")
		}
		p.Roff(synopsis(l))
	}
	if n.DefaultCmd != nil {
		p.Roff(".br")
		p.Roff(roff.Bold("agentjq "+name) + " " + roff.Escape("[flags of "+n.DefaultCmd.Name+"]"))
	}
	p.Section("DESCRIPTION")
	p.Para(n.Help)
	var examples []string
	desc, ex := splitDetail(n.Detail)
	describe(p, desc)
	examples = append(examples, ex...)
	if len(n.Children) > 0 {
		for _, l := range leaves {
			p.Subsection(name + " " + l.Name)
			p.Para(l.Help)
			if n.DefaultCmd == l {
				p.Para("This is the default: agentjq " + name + " with no subcommand runs it.")
			}
			desc, ex := splitDetail(l.Detail)
			describe(p, desc)
			examples = append(examples, ex...)
		}
	}
	if name == "acp" {
		acpSections(p)
	}
	p.Section("OPTIONS")
	for _, l := range leaves {
		if len(leaves) > 1 {
			p.Subsection(name + " " + l.Name)
		}
		options(p, l)
	}
	if name == "record" {
		redactionSections(p)
	}
	p.Section("EXIT STATUS")
	for _, r := range exits {
		p.Item(roff.Bold(r.Code), r.Meaning)
	}
	if processPages[name] {
		processes(p)
	}
	if env := pageEnv[name]; len(env) > 0 {
		p.Section("ENVIRONMENT")
		envItems(p, env...)
	}
	p.Section("EXAMPLES")
	p.Code(examples...)
	p.Section("SEE ALSO")
	seeAlso(p, "agentjq-"+name+"(1)")
	return p
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

func filterPage(n *kong.Node) *roff.Page {
	p := roff.NewPage("agentjq-filter", "1", source, manual)
	p.Section("NAME")
	p.Roff(`agentjq\-filter \- ` + roff.Escape(lowerFirst(strings.TrimSuffix(n.Help, "."))))
	p.Section("SYNOPSIS")
	p.Roff(roff.Bold("agentjq filter") + " [" + roff.Italic("flags") + "] [" + roff.Italic("program") + "] [" + roff.Italic("file") + "\\&...]")
	p.Section("DESCRIPTION")
	p.Para(strings.Join(strings.Fields(filter.Description), " "))
	p.Subsection("Agent definitions")
	p.Para("agentlib, prepended to every program:")
	for _, d := range agentlib.Docs {
		p.Item(roff.Bold(d.Name), d.Summary+". Example: "+d.Usage)
	}
	p.Subsection("Key input")
	p.Para(strings.Join(strings.Fields(filter.KeyInputIntro), " "))
	for _, r := range filter.KeyInputRows() {
		p.Item(roff.Bold(r[0]), r[1])
	}
	p.Section("OPTIONS")
	for _, f := range filter.Flags {
		var tag []string
		if f.Short != "" {
			tag = append(tag, roff.Bold("-"+f.Short))
		}
		long := roff.Bold("--" + f.Long)
		for _, a := range strings.Fields(f.Args) {
			long += " " + roff.Italic(a)
		}
		tag = append(tag, long)
		p.Item(strings.Join(tag, ", "), f.Help)
	}
	p.Section("EXIT STATUS")
	for _, r := range filter.ExitTable {
		p.Item(roff.Bold(strconv.Itoa(r.Code)), r.Meaning)
	}
	p.Section("ENVIRONMENT")
	envItems(p, pageEnv["filter"]...)
	p.Section("EXAMPLES")
	for _, ex := range filter.Examples {
		p.Para(upperFirst(ex.Explanation) + ":")
		p.Code(ex.Command)
	}
	p.Section("SEE ALSO")
	seeAlso(p, "agentjq-filter(1)")
	return p
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func protocolPage() *roff.Page {
	p := roff.NewPage("agentjq-protocol", "7", source, manual)
	p.Section("NAME")
	p.Roff(`agentjq\-protocol \- the stream\-json protocol of the agent CLIs, as agentjq knows it`)
	p.Section("DESCRIPTION")
	p.Para("The agent CLIs (claude, context) run headless with --input-format stream-json --output-format stream-json: NDJSON on stdin and stdout, one JSON object per line, every line with a \"type\" and many with a \"subtype\". This page lists every type and subtype agentjq knows, generated from the tables of its protocol package: a type missing here is one agentjq passes through untouched without knowing it.")
	p.Para("Agent CLI versions checked: " + strings.Join(protocol.CheckedVersions, ", ") + ". Another version gets a version_drift warning event.")
	p.Section("MESSAGE TYPES")
	for _, t := range protocol.MessageTypes {
		p.Subsection(t.Type + " (" + string(t.Sender) + ")")
		p.Para(t.Summary)
		if len(t.Subtypes) == 0 {
			continue
		}
		label := "Subtypes:"
		if t.Type == protocol.TypeControlRequest {
			label = "request.subtype, and the response it gets:"
		}
		p.Para(label)
		for _, s := range t.Subtypes {
			body := roff.Escape(s.Summary)
			if s.Answer != "" {
				body += "\n.br\n" + roff.Italic("Response:") + " " + roff.Escape(s.Answer)
			}
			p.ItemRoff(roff.Bold(s.Name), body)
		}
	}
	p.Section("CONTROL REQUESTS")
	p.Para("A control_request carries request_id and request (with request.subtype). The other side answers with a control_response carrying response.request_id and response.subtype success (with response.response) or error (with response.error). The agent blocks on its own requests until answered; control_cancel_request withdraws one. spawn answers every request, even one nested deeper than the 10000 levels agentjq reads (valid JSON all the same): a can_use_tool is then denied, a PreToolUse or PermissionRequest hook_callback gets a deny, any other request an error, with a message that says \"nesting deeper than 10000\"; the line itself is not passed on (a non_json_output warning says so), and a result nested that deep still ends its turn.")
	p.Code(`{"type":"control_request","request_id":"ID","request":{"subtype":"can_use_tool",...}}`,
		`{"type":"control_response","response":{"subtype":"success","request_id":"ID","response":{...}}}`)
	waitsSection(p)
	p.Section("AGENTJQ'S PRETOOLUSE HOOK")
	p.Para("The agent does not ask about every call. claude 2.1.328 and 2.1.332 (checked live against both) run these without a can_use_tool request: the Read tool inside the working directory, read-only Bash (cat .env, grep -r, head, cd into a subdirectory), and whatever an allow rule of a loaded settings file covers, including a .claude/settings.local.json the agent wrote itself a moment before: the CLI reloads changed settings files, their command hooks and allow rules included. So whenever a policy, an approver or a terminal decides (anything beyond the fail-closed default), spawn registers a PreToolUse hook of its own in the initialize request, with no matcher (every tool) and callback id agentjq_guard:")
	p.Code(`{"type":"control_request","request_id":"agentjq-init-1","request":{"subtype":"initialize","hooks":{"PreToolUse":[{"hookCallbackIds":["agentjq_guard"],"timeout":35}]}}}`)
	p.Para("The CLI then sends a hook_callback before every tool call, auto-allowed ones too, and waits for the answer. Its input carries tool_name, tool_input, tool_use_id, session_id, permission_mode and cwd, which is the directory the CLI's Bash shell is in at that moment (after cd sub it names sub), not the session's start directory. What each answer does, checked live in the default, acceptEdits and dontAsk permission modes (bypassPermissions refuses to start as root, so it is unchecked):")
	p.Item(roff.Bold(`permissionDecision "deny"`), "the call does not run; the model gets an is_error tool_result \"PreToolUse:TOOL hook error: REASON\", and the result's permission_denials lists the call. A settings allow rule does not override it.")
	p.Item(roff.Bold(`permissionDecision "ask"`), "the CLI sends a can_use_tool request for the call even where it would not have asked (read-only Bash, Read in the project, a call a settings allow rule covers, dontAsk mode), with decision_reason set to the hook's reason and no permission_suggestions.")
	p.Item(roff.Bold("{} (no opinion)"), "the CLI's own permission flow goes on: it runs the call or asks with can_use_tool as it would have.")
	p.Item(roff.Bold("an error response, or a decision it does not know"), "the hook counts as failed and the call runs (checked live with subtype error and with permissionDecision \"DENY\"): agentjq answers its own hook with a decision every time, a deny when anything goes wrong.")
	p.Para("agentjq answers from the rules files and jq policies: their deny becomes deny; an undecided call or an ask becomes ask, and the can_use_tool that follows goes to the approver, the terminal or the default, without asking the policies again; their allow becomes no opinion, and a can_use_tool that still follows is decided by the whole chain again. An allow that rewrites the input becomes ask, since only a permission answer carries updatedInput. The user's --hook PreToolUse commands are not registered on their own but run inside agentjq's hook, first and in the order given (see agentjq-policy(5) for how their answers combine). The hook is registered with a timeout longer than agentjq can take, and stdin stays open to the end of the session, since a hook the CLI cannot get an answer for lets the call run.")
	p.Para("Each answer of the hook that decides (deny or allow) is reported as a decision event with via hook; an ask is not, so that an asked call has one decision event, via permission, from its can_use_tool. A call the policies allow and the CLI then asks about anyway (a Write in default mode) has two allow events, one per path, with the same tool_use_id. A deny at the hook and the CLI's permission_denials name the same tool_use_id and count as one denial. agentjq's part of the hook round trip (the callback read, the chain, the answer written) took a median of 0.35 ms a call live; see BenchmarkLiveGuard in BENCHMARKS.md.")
	p.Section("SETTING SOURCES")
	p.Para("spawn runs claude with --setting-sources user unless the agent arguments after -- name --setting-sources themselves. The user's ~/.claude/settings.json loads; the project's .claude/settings.json and the local .claude/settings.local.json do not. Those live in the working directory, which the agent (or the repository it was handed) can write, and the CLI reloads them mid-session: a command hook or an env entry (BASH_ENV) there runs code no policy judges, and an allow rule there skips the permission request. With agentjq's hook registered an allow rule can no longer skip the chain, but hooks and env would still run, hence the default. The project's CLAUDE.md is not loaded either (it belongs to the project source). Pass -- --setting-sources user,project to load them, at that risk.")
	p.Section("OUTCOMES")
	p.Para("agentjq computes one outcome per session from the results, its decisions and the agent's exit; the exit event carries it and it sets agentjq's exit status:")
	for _, r := range protocol.SpawnExitTable {
		if r.Outcome == "" {
			continue
		}
		p.Item(roff.Bold(string(r.Outcome))+" ("+strconv.Itoa(r.Code)+")", r.Meaning)
	}
	p.Section("SEE ALSO")
	seeAlso(p, "agentjq-protocol(7)")
	return p
}

// Names returns the page file names of pages, sorted.
func Names(pages map[string][]byte) []string {
	names := make([]string, 0, len(pages))
	for n := range pages {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
