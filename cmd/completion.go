package cmd

import (
	"strings"

	"github.com/alecthomas/kong"

	"github.com/agentjq/agentjq/filter"
	"github.com/agentjq/agentjq/internal/completion"
	"github.com/agentjq/agentjq/iostreams"
	"github.com/agentjq/agentjq/man"
)

// CompletionCmd prints a shell completion script.
type CompletionCmd struct {
	Shell string `arg:"" enum:"bash,zsh,fish" help:"The shell: bash, zsh or fish."`
}

// Help is shown after the flags.
func (c *CompletionCmd) Help() string {
	return `The script completes subcommands, flags, their values (--agent,
--approver-format, man's pages) and files where a flag takes one.

Examples:
  source <(agentjq completion bash)
  agentjq completion zsh > "${fpath[1]}/_agentjq"
  agentjq completion fish > ~/.config/fish/completions/agentjq.fish`
}

// Run prints the script.
func (c *CompletionCmd) Run(ios *iostreams.IO, kctx *kong.Context) error {
	return completion.Write(ios.Out, c.Shell, completionTree(kctx.Model))
}

// completionTree is the kong model plus what kong cannot see: filter's
// own flags and the names of the manual pages.
func completionTree(app *kong.Application) *completion.Command {
	var ff []completion.Flag
	for _, f := range filter.Flags {
		if f.Long == "help" { // every command has -h, --help already
			continue
		}
		fl := completion.Flag{Help: f.Help, NArgs: len(strings.Fields(f.Args))}
		if f.Short != "" {
			fl.Names = append(fl.Names, "-"+f.Short)
		}
		fl.Names = append(fl.Names, "--"+f.Long)
		switch {
		case f.Long == "color":
			fl.Kind, fl.Values = completion.KindEnum, []string{filter.ColorAuto, filter.ColorAlways, filter.ColorNever}
		case fl.NArgs == 1:
			fl.Kind = completion.PlaceholderKind(f.Args)
		case fl.NArgs > 1:
			fl.Kind = completion.KindText
		}
		ff = append(ff, fl)
	}
	return completion.FromKong(app, completion.Extra{
		Flags: map[string][]completion.Flag{"filter": ff},
		Args:  map[string][]string{"man": man.ShortNames()},
	})
}
