package cmd

import (
	"fmt"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/agentjq/agentjq/internal/manpages"
)

// helpPrinter is kong's help with the examples of a command's Help() text
// moved to the end, after the flags, where a reader looks for them.
func helpPrinter(opts kong.HelpOptions, ctx *kong.Context) error {
	node := ctx.Selected()
	if node == nil {
		return kong.DefaultHelpPrinter(opts, ctx)
	}
	detail := node.Detail
	before, examples, ok := strings.Cut(detail, "Examples:\n")
	if !ok {
		return kong.DefaultHelpPrinter(opts, ctx)
	}
	node.Detail = strings.TrimSpace(before)
	defer func() { node.Detail = detail }()
	if err := kong.DefaultHelpPrinter(opts, ctx); err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString("\nExamples:\n")
	for _, l := range strings.Split(examples, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			b.WriteString("  " + l + "\n")
		}
	}
	_, err := fmt.Fprint(ctx.Stdout, b.String())
	return err
}

// Help is shown after the flags.
func (c *ApproveCmd) Help() string {
	return `Without a subcommand, approve answers (approve answer). Policies: rules
files in Claude Code's permission syntax and jq programs; see
agentjq-policy(5).

Examples:
  agentjq spawn --approver 'agentjq approve --policy rules.json'
  agentjq approve test --policy rules.json session.rec
  echo '{"tool_name":"Bash","input":{"command":"rm -rf /"}}' | agentjq approve explain --policy rules.json`
}

// Help is shown after the flags.
func (c *RecordCmd) Help() string {
	return `Takes every flag of spawn and writes both directions of the session, with
timing, to --output: the agent's stdin and stdout, its stderr, and
agentjq's own events (format: agentjq-recording(5)). Secrets are redacted
before anything reaches the disk. Stdout is what spawn would write.

Examples:
  agentjq record -o fix.rec -p 'fix the failing test' --policy rules.json
  agentjq spawn | agentjq record --tee -o session.rec | agentjq filter --view
  agentjq record -o run.rec --redact-env MY_TOKEN --redact 'sk-[a-z0-9]+' < turns.txt`
}

// Help is shown after the flags.
func (c *ReplayCmd) Help() string {
	return `Writes the agent's recorded output to stdout, as fast as possible or with
its timing. With --as-agent it stands where the agent stands: spawn (or any
client) talks to it and gets the recorded answers, and what the client
sends is checked against the recording. A two-line shim makes it an agent
binary: as-agent.sh holding "#!/bin/sh" and
"exec agentjq replay --as-agent session.rec -- \"$@\"".

With --check it re-runs recordings against the agent installed now and
grades the drift: exit 0 none (or timing only), 3 compatible (only
additions), 1 breaking (something gone or changed).

Examples:
  agentjq replay session.rec | agentjq filter -r assistant_text
  agentjq spawn --bin ./as-agent.sh -p 'fix the failing test'
  agentjq replay --check recordings/ || [ $? -eq 3 ]`
}

// exitTables are the exit statuses of approve and replay, for their man
// pages (spawn's and filter's live in protocol and filter).
var exitTables = map[string][]manpages.ExitRow{
	"approve": {
		{Code: "0", Meaning: "success: every request answered, or every --expect line met"},
		{Code: "1", Meaning: "approve: some input lines could not be read (each reported on stderr); approve test: an --expect line was not met; any other error"},
		{Code: "2", Meaning: "usage error, or a policy file that does not load (reported with file:line:column)"},
	},
	"proxy": {
		{Code: "N", Meaning: "the agent's own exit status (128+S when signal S ended it), so that the client reads what it would read without agentjq"},
		{Code: "2", Meaning: "before the agent starts: a usage error, a policy or config file that does not load"},
		{Code: "127", Meaning: "the agent could not be started, or the proxy was started by itself (the \"real\" CLI is a shim for agentjq proxy)"},
	},
	"replay": {
		{Code: "0", Meaning: "the recording was replayed; with --check, no drift, or timing only (lines at another place within their turn), or --update replaced every recording that drifted"},
		{Code: "1", Meaning: "with --as-agent, the client sent something else than the recording holds (reported with the seq and a diff); with --check, breaking drift in some recording (a key, line kind or list member gone, a type or vocabulary value changed); any other error"},
		{Code: "2", Meaning: "usage error"},
		{Code: "3", Meaning: "with --check, compatible drift only: keys, line kinds or list members added, nothing gone or changed"},
		{Code: "5", Meaning: "a recording could not be read: a bad entry, a msg that is not a JSON object, a gzip file cut off or damaged (reported as FILE:LINE; --lenient reads the last two as agentjq once did)"},
		{Code: "N", Meaning: "with --as-agent, the recorded agent's exit status; with --inject exit@SEQ:N, N"},
	},
}
