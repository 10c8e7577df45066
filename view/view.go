// Package view renders an agent session for a person: the human view of
// `agentjq filter --view`. It reads the NDJSON stream (or an agentjq
// recording) and writes one short line per thing that happened, as it
// happens:
//
//	● claude-opus-5-5  /home/user/project  claude 2.1.328  default
//	  I will write the file.
//	▶ Write  banana.txt  (7 B)
//	? Write  banana.txt → allow (rules: Write(*.txt))
//	✓ Write  File created successfully at: /home/user/project/banana.txt …  (126 B)
//	  The file is written.
//	■ success  2 turns  0.82s  $0.0004
//
// Subagent work is indented under a "│ " rule. The view is for people:
// its format may change between releases; scripts use filter's programs.
package view

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/agentjq/agentjq/recording"
)

// Options tune the view.
type Options struct {
	// Color turns on escape codes. The caller decides it from the stream's
	// TTY and the --color flag; the view never looks at the environment.
	Color bool
	// Width is the column budget of one-line summaries (tool calls,
	// results, requests). Assistant text is never cut. 0 means 100.
	Width int
	// Lenient reads a damaged recording as far as it goes
	// (recording.Lines.Lenient).
	Lenient bool
	// All shows a transcript's bookkeeping lines too (queue operations,
	// attachments, API request snapshots, cost state...).
	All bool
}

// DefaultWidth is the width used when Options.Width is 0.
const DefaultWidth = 100

// Render reads NDJSON events (or a recording) from r, named name, and
// writes the view to w, one event at a time, so that it works on a live
// session. Lines that cannot be read (not JSON, a bad recording entry, a
// recording header of an unknown version) are shown as warnings where
// they stand, and then make Render fail with a *BadInput, after the
// whole stream is shown.
func Render(ctx context.Context, r io.Reader, name string, w io.Writer, opts Options) error {
	rn := New(w, opts)
	if err := rn.feed(ctx, r, name); err != nil {
		return err
	}
	if err := rn.Close(); err != nil {
		return err
	}
	if rn.broken > 0 {
		return &BadInput{Name: name, Lines: rn.broken, First: rn.first}
	}
	return nil
}

// feed renders every line of r.
func (rn *Renderer) feed(ctx context.Context, r io.Reader, name string) error {
	lines := recording.NewLines(r, name)
	lines.Lenient = rn.opts.Lenient
	lines.Warn = func(err error) {
		rn.put(0, rn.st.yellow.Sprint("⚠"), rn.st.yellow.Sprint(err.Error()))
	}
	shown := false
	for {
		if err := ctx.Err(); err != nil {
			_ = rn.Close()
			return err
		}
		ln, err := lines.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		var bad *recording.LineError
		if err != nil && !errors.As(err, &bad) {
			_ = rn.Close()
			return err
		}
		if h, ok := lines.Recording(); ok && !shown {
			shown = true
			rn.header(h)
		}
		switch {
		case bad != nil:
			rn.lineNo = bad.Line
			rn.brokenLine(bad.Err.Error(), ln.Text)
		case ln.Dir != "":
			rn.lineNo = ln.Num
			rn.entry(ln.Entry)
		case len(bytes.TrimSpace(ln.Text)) > 0:
			rn.lineNo = ln.Num
			rn.out(ln.Text)
		}
		if err := rn.flush(); err != nil {
			return err
		}
	}
}

// BadInput says that lines of the stream could not be read (they were
// shown as warnings).
type BadInput struct {
	Name  string
	Lines int
	First string
}

func (e *BadInput) Error() string {
	return fmt.Sprintf("%s: %d line(s) could not be read (the first: %s)", e.Name, e.Lines, e.First)
}

// Event renders one line of an event stream (not of a recording: Render
// reads those). Lines that are not JSON are shown as warnings; Event
// fails only when writing fails.
func (r *Renderer) Event(line []byte) error {
	if r.err != nil {
		return r.err
	}
	line = bytes.TrimRight(line, "\r\n")
	r.lineNo++
	if len(bytes.TrimSpace(line)) == 0 {
		return nil
	}
	r.out(line)
	return r.flush()
}

// Close ends an open line and says so when the stream stopped in the
// middle of a turn.
func (r *Renderer) Close() error {
	if r.err != nil {
		return r.err
	}
	r.closeOpen()
	r.endTranscript()
	if r.turnOpen {
		r.put(0, r.st.yellow.Sprint("■"), r.st.yellow.Sprint("ended without a result"))
		r.turnOpen = false
	}
	return r.flush()
}

func (r *Renderer) flush() error {
	if r.buf.Len() == 0 {
		return nil
	}
	_, err := r.w.Write(r.buf.Bytes())
	r.buf.Reset()
	if err != nil {
		r.err = err
	}
	return err
}
