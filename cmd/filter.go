package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/agentjq/agentjq/filter"
	"github.com/agentjq/agentjq/internal/termlock"
	"github.com/agentjq/agentjq/internal/transcript"
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
	if err := transcriptInputs(ios, o); err != nil {
		return err
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
	vo := view.Options{Color: ios.ColorOut(iostreams.ColorMode(o.ColorMode)), Lenient: o.Lenient, All: o.All}
	// On a terminal a prompt of spawn's may hold (termlock): wait for it.
	out := termlock.NewWriter(ctx, ios.Out)
	if len(o.Files) == 0 {
		return viewExit(view.Render(ctx, ios.In, "<stdin>", out, vo))
	}
	var paths, names []string
	for _, name := range o.Files {
		path := name
		if ios.Dir != "" && !filepath.IsAbs(path) {
			path = filepath.Join(ios.Dir, path)
		}
		if transcript.IsSubagentFile(path) {
			continue // shown under its session's Task call
		}
		paths, names = append(paths, path), append(names, name)
	}
	err := view.RenderFiles(ctx, paths, names, out, vo)
	var bi *view.BadInput
	if err != nil && !errors.As(err, &bi) {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return &exitError{code: filter.ExitUsage, err: err}
		}
		return err
	}
	return viewExit(err)
}

// transcriptInputs turns --project into its transcript folder and each
// folder among the files into its *.jsonl files, oldest first; for a
// program (not --view) each session's subagent files follow it.
func transcriptInputs(ios *iostreams.IO, o *filter.Options) error {
	var files []string
	for _, dir := range o.Projects {
		if dir == "" {
			dir = ios.Dir
			if dir == "" {
				dir, _ = os.Getwd()
			}
		} else if ios.Dir != "" && !filepath.IsAbs(dir) {
			dir = filepath.Join(ios.Dir, dir)
		}
		dir, _ = filepath.Abs(dir)
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			dir = real
		}
		td := transcript.ProjectDir(ios.Getenv, dir)
		if _, err := os.Stat(td); err != nil {
			return &exitError{code: filter.ExitUsage, err: fmt.Errorf("--project: no transcripts of %s: %w", dir, err)}
		}
		files = append(files, td)
	}
	files = append(files, o.Files...)
	if len(o.Projects) == 0 && !slices.ContainsFunc(files, func(f string) bool { return isDir(ios, f) }) {
		return nil
	}
	var out []string
	for _, f := range files {
		if !isDir(ios, f) {
			out = append(out, f)
			continue
		}
		path := f
		if ios.Dir != "" && !filepath.IsAbs(path) {
			path = filepath.Join(ios.Dir, path)
		}
		sessions, err := transcript.Sessions(path)
		if err != nil {
			return &exitError{code: filter.ExitUsage, err: err}
		}
		for _, s := range sessions {
			name := s
			if rel, err := filepath.Rel(path, s); err == nil && path != f {
				name = filepath.Join(f, rel)
			}
			out = append(out, name)
			if !o.View {
				for _, sub := range transcript.Subagents(s) {
					out = append(out, sub.Path)
				}
			}
		}
	}
	o.Files = out
	return nil
}

func isDir(ios *iostreams.IO, name string) bool {
	if ios.Dir != "" && !filepath.IsAbs(name) {
		name = filepath.Join(ios.Dir, name)
	}
	fi, err := os.Stat(name)
	return err == nil && fi.IsDir()
}

func viewExit(err error) error {
	var bi *view.BadInput
	if errors.As(err, &bi) {
		return &exitError{code: filter.ExitRuntime, err: err}
	}
	return err
}
