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
	"bufio"
	"bytes"
	"context"
	"errors"
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
}

// DefaultWidth is the width used when Options.Width is 0.
const DefaultWidth = 100

// Render reads NDJSON events (or a recording) from r and writes the view
// to w, one event at a time, so that it works on a live session.
func Render(ctx context.Context, r io.Reader, w io.Writer, opts Options) error {
	rn := New(w, opts)
	br := bufio.NewReaderSize(r, 64*1024)
	for {
		if err := ctx.Err(); err != nil {
			_ = rn.Close()
			return err
		}
		line, rerr := br.ReadBytes('\n')
		if len(line) > 0 {
			if err := rn.Event(line); err != nil {
				return err
			}
		}
		if errors.Is(rerr, io.EOF) {
			break
		}
		if rerr != nil {
			_ = rn.Close()
			return rerr
		}
	}
	return rn.Close()
}

// Event renders one line of the stream. The first line decides whether
// the stream is a recording (recording.IsHeader); a recording's entries
// are then shown by direction. Lines that are not JSON are shown as
// warnings; Event fails only when writing fails.
func (r *Renderer) Event(line []byte) error {
	if r.err != nil {
		return r.err
	}
	line = bytes.TrimRight(line, "\r\n")
	r.lineNo++
	if len(bytes.TrimSpace(line)) == 0 {
		return nil
	}
	switch {
	case r.lineNo == 1 && recording.IsHeader(line):
		r.recording = true
		r.header(line)
	case r.recording:
		e, err := recording.ParseEntry(line)
		if err != nil {
			r.badLine(err.Error(), line)
			break
		}
		r.entry(e)
	default:
		r.out(line)
	}
	return r.flush()
}

// Recorded renders one entry of a recording, for callers that read the
// recording themselves.
func (r *Renderer) Recorded(e recording.Entry) error {
	if r.err != nil {
		return r.err
	}
	r.lineNo++
	r.entry(e)
	return r.flush()
}

// Close ends an open line and says so when the stream stopped in the
// middle of a turn.
func (r *Renderer) Close() error {
	if r.err != nil {
		return r.err
	}
	r.closeOpen()
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
