package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/agentjq/agentjq/filter"
	"github.com/agentjq/agentjq/iostreams"
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
		return usageError("filter --view: the view renderer is not part of this build yet")
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
