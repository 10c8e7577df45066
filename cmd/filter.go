package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentjq/agentjq/filter"
	"github.com/agentjq/agentjq/internal/termlock"
	"github.com/agentjq/agentjq/iostreams"
	"github.com/agentjq/agentjq/view"
)

// FilterCmd is the filter subcommand. jq's flags do not fit kong (--arg
// takes two values, --args changes what positionals mean), so every
// argument passes through to filter.ParseArgs, --help included.
type FilterCmd struct {
	Args []string `arg:"" optional:"" passthrough:""`
}

// Run parses jq's flags and runs the program.
func (c *FilterCmd) Run(ctx context.Context, ios *iostreams.IO) error {
	o, err := filter.ParseArgs(c.Args)
	if err != nil {
		fmt.Fprintf(ios.Err, "agentjq: %v\nRun 'agentjq filter --help' for usage.\n", err)
		return silentExit(filter.ExitUsage)
	}
	if o.Help {
		filter.WriteHelp(ios.Out)
		return nil
	}
	if o.View {
		return runView(ctx, ios, o)
	}
	o.Environ = ios.Environ
	o.Dir = ios.Dir
	o.Color = ios.ColorOut(iostreams.ColorMode(o.ColorMode))
	o.FlushEachInput = !isRegularFile(ios.Out)
	err = filter.Run(ctx, ios.In, ios.Out, ios.Err, o)
	var fe *filter.Error
	if errors.As(err, &fe) {
		if fe.Reported {
			return silentExit(fe.Code)
		}
		return &exitError{code: fe.Code, err: fe.Err}
	}
	return err
}

// isRegularFile reports whether w is a regular file (output redirected
// to a file), where flushing after each input would only cost time.
func isRegularFile(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode().IsRegular()
}

// runView renders the stream (stdin or the files, one after the other)
// for a person. Lines that could not be read were shown as warnings; the
// exit status is then a bad input line's (5), after everything is shown.
func runView(ctx context.Context, ios *iostreams.IO, o *filter.Options) error {
	vo := view.Options{Color: ios.ColorOut(iostreams.ColorMode(o.ColorMode)), Lenient: o.Lenient}
	// On a terminal a prompt of spawn's may hold (termlock): wait for it.
	out := termlock.NewWriter(ctx, ios.Out)
	if len(o.Files) == 0 {
		return viewExit(view.Render(ctx, ios.In, "<stdin>", out, vo))
	}
	var bad error
	for _, name := range o.Files {
		path := name
		if ios.Dir != "" && !filepath.IsAbs(path) {
			path = filepath.Join(ios.Dir, path)
		}
		f, err := os.Open(path)
		if err != nil {
			return &exitError{code: filter.ExitUsage, err: err}
		}
		err = view.Render(ctx, f, name, out, vo)
		f.Close()
		var bi *view.BadInput
		switch {
		case errors.As(err, &bi):
			if bad == nil {
				bad = err
			}
		case err != nil:
			return err
		}
	}
	return viewExit(bad)
}

func viewExit(err error) error {
	var bi *view.BadInput
	if errors.As(err, &bi) {
		return &exitError{code: filter.ExitRuntime, err: err}
	}
	return err
}
