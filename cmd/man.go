package cmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/alecthomas/kong"

	"github.com/agentjq/agentjq/internal/manpages"
	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/internal/roff"
	"github.com/agentjq/agentjq/iostreams"
	"github.com/agentjq/agentjq/man"
)

// ManCmd shows a manual page from the ones embedded in the binary.
type ManCmd struct {
	Page string `arg:"" optional:"" placeholder:"PAGE" help:"The page: agentjq (the default), spawn, filter, approve, record, replay, policy, recording, protocol, or a page name such as agentjq-spawn(1)."`
	List bool   `help:"List the pages."`
	Roff bool   `help:"Write the page's roff source instead of rendering it."`
}

// Help is shown after the flags.
func (c *ManCmd) Help() string {
	return `On a terminal the page goes through man -l (or $MANPAGER, $PAGER, less
when man is missing); otherwise it is written as plain text.

Examples:
  agentjq man spawn
  agentjq man protocol | grep can_use_tool
  agentjq man --roff policy > agentjq-policy.5`
}

// Run shows the page.
func (c *ManCmd) Run(ctx context.Context, ios *iostreams.IO) error {
	if c.List {
		for _, f := range man.Files() {
			fmt.Fprintln(ios.Out, f)
		}
		return nil
	}
	file, ok := man.Resolve(c.Page)
	if !ok {
		return &exitError{code: protocol.ExitUsage, err: fmt.Errorf("no manual page %q; the pages: %s", c.Page, strings.Join(man.ShortNames(), ", "))}
	}
	src, _ := man.Page(file)
	if c.Roff {
		_, err := ios.Out.Write(src)
		return err
	}
	if ios.OutTTY && showOnTerminal(ctx, ios, src) {
		return nil
	}
	_, err := fmt.Fprint(ios.Out, roff.Text(string(src), termWidth(ios)))
	return err
}

// showOnTerminal hands the page to man(1), or to a pager as plain text.
// It reports false when neither could run, and the caller prints it.
func showOnTerminal(ctx context.Context, ios *iostreams.IO, src []byte) bool {
	if path, err := exec.LookPath("man"); err == nil {
		cmd := exec.CommandContext(ctx, path, "-l", "-")
		cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(src), ios.Out, ios.Err
		cmd.Env = ios.Environ
		cmd.WaitDelay = time.Second
		if cmd.Run() == nil {
			return true
		}
	}
	pager := ios.Getenv("MANPAGER")
	if pager == "" {
		pager = ios.Getenv("PAGER")
	}
	if pager == "" {
		if _, err := exec.LookPath("less"); err != nil {
			return false
		}
		pager = "less -R"
	}
	cmd := exec.CommandContext(ctx, "sh", "-c", pager)
	cmd.Stdin = strings.NewReader(roff.Text(string(src), termWidth(ios)))
	cmd.Stdout, cmd.Stderr = ios.Out, ios.Err
	cmd.Env = ios.Environ
	cmd.WaitDelay = time.Second
	return cmd.Run() == nil
}

// termWidth is $COLUMNS on a terminal, else 80.
func termWidth(ios *iostreams.IO) int {
	if ios.OutTTY {
		if n, err := strconv.Atoi(ios.Getenv("COLUMNS")); err == nil && n >= 40 {
			return n
		}
	}
	return 80
}

// Model returns agentjq's kong model, for the man page and completion
// generators.
func Model() (*kong.Application, error) {
	var cli CLI
	ios, _, _, _ := iostreams.Test()
	p, err := newParser(&cli, ios)
	if err != nil {
		return nil, err
	}
	return p.Model, nil
}

// ManPages generates every manual page from the code, by file name.
// `make man` writes them to man/; a test fails when they differ.
func ManPages() (map[string][]byte, error) {
	app, err := Model()
	if err != nil {
		return nil, err
	}
	if app == nil {
		return nil, errors.New("no kong model")
	}
	return manpages.Generate(manpages.Input{App: app, Exit: exitTables})
}
