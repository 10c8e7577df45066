package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/agentjq/agentjq/filter"
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
// for a person.
func runView(ctx context.Context, ios *iostreams.IO, o *filter.Options) error {
	in := ios.In
	if len(o.Files) > 0 {
		readers := make([]io.Reader, 0, len(o.Files))
		for _, name := range o.Files {
			path := name
			if ios.Dir != "" && !filepath.IsAbs(path) {
				path = filepath.Join(ios.Dir, path)
			}
			f, err := os.Open(path)
			if err != nil {
				return &exitError{code: filter.ExitUsage, err: err}
			}
			defer f.Close()
			readers = append(readers, f)
		}
		in = io.MultiReader(readers...)
	}
	return view.Render(ctx, in, ios.Out, view.Options{Color: ios.ColorOut(iostreams.ColorMode(o.ColorMode))})
}
