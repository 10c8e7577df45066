package filter

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/agentjq/agentjq/filter/agentlib"
	"github.com/agentjq/agentjq/internal/protocol"
)

// Synopsis is the usage line of `agentjq filter`.
const Synopsis = "agentjq filter [FLAGS] [PROGRAM] [FILE...]"

// Description says what filter does, for --help and the man page.
const Description = `Run a jq program (gojq) over an NDJSON agent event stream: the output of
spawn, replay or a saved session. Each line is one JSON value; a bad line is
reported as "agentjq: FILE:LINE: message" and skipped. Output is one compact
line per value and is flushed after each input on a pipe. Objects and arrays
a program passes through unchanged (., select(...)) keep their original
bytes: key order, number spelling, escapes. A recording (agentjq record) is
read as the stream spawn showed. A FILE that is a folder stands for its
*.jsonl files, oldest first: Claude Code's own transcripts
(~/.claude/projects/PROJECT), each session's subagent files after it;
--project names the current project's folder. The agentlib definitions
below are part of every program. Without PROGRAM, the program is ".".`

// Examples are shown by --help and the man page.
var Examples = []struct{ Command, Explanation string }{
	{`agentjq spawn -p "fix the tests" | agentjq filter -r 'assistant_text'`,
		"follow what the agent says, live"},
	{`agentjq filter -c 'tool_calls | {name, key: key_input}' session.ndjson`,
		"list the tools a session called"},
	{`agentjq filter 'select(.type == "result") | {cost: .total_cost_usd, turns: .num_turns}' run.rec`,
		"cost and turns of each turn of a recording"},
}

// KeyInputIntro and KeyInputRows document key_input's table (the one
// approve and --view use too) for --help and the man page.
const KeyInputIntro = `key_input, approve test and --view show the same key of a tool call: the
first of the tool's fields below that is a non-empty string (a dotted name
reaches inside), for other tools the first of the generic ones, else the
input as compact JSON.`

// KeyInputRows are the tools that share a list of key fields, and the list.
func KeyInputRows() [][2]string {
	byFields := map[string][]string{}
	for tool, fields := range protocol.KeyFields {
		f := strings.Join(fields, ", ")
		byFields[f] = append(byFields[f], tool)
	}
	var rows [][2]string
	for f, tools := range byFields {
		sort.Strings(tools)
		rows = append(rows, [2]string{strings.Join(tools, ", "), f})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i][0] < rows[j][0] })
	return append(rows, [2]string{"other tools", strings.Join(protocol.GenericKeyFields, ", ")})
}

// WriteHelp writes filter's --help.
func WriteHelp(w io.Writer) {
	var b strings.Builder
	fmt.Fprintf(&b, "Usage: %s\n\n%s\n\nFlags:\n", Synopsis, Description)
	for _, f := range Flags {
		names := "    "
		if f.Short != "" {
			names = "-" + f.Short + ", "
		}
		names += "--" + f.Long
		if f.Args != "" {
			names += " " + f.Args
		}
		fmt.Fprintf(&b, "  %-26s %s\n", names, f.Help)
	}
	if len(agentlib.Docs) > 0 {
		b.WriteString("\nAgent definitions (agentlib, in every program):\n")
		for _, d := range agentlib.Docs {
			fmt.Fprintf(&b, "  %-22s %s\n", d.Name, d.Summary)
		}
	}
	b.WriteString("\nKey input:\n")
	for _, l := range strings.Split(KeyInputIntro, "\n") {
		fmt.Fprintf(&b, "  %s\n", l)
	}
	for _, r := range KeyInputRows() {
		fmt.Fprintf(&b, "  %s: %s\n", r[0], r[1])
	}
	// Examples come last, as in every subcommand's help.
	b.WriteString("\nExit status:\n")
	for _, r := range ExitTable {
		fmt.Fprintf(&b, "  %d  %s\n", r.Code, r.Meaning)
	}
	b.WriteString("\nExamples:\n")
	for i, ex := range Examples {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "  # %s\n  %s\n", ex.Explanation, ex.Command)
	}
	io.WriteString(w, b.String())
}
