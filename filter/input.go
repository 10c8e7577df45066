package filter

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/agentjq/agentjq/recording"
)

// lineReader yields the payload lines of the inputs, in order: each file
// (or the reader given to Run), split on '\n' only, any length. An input
// whose first line is a recording header yields what spawn's stdout
// showed: the recorded agent lines (dir "out") and agentjq's events (dir
// "event"); the other directions are skipped.
type lineReader struct {
	ctx     context.Context
	stdin   io.Reader
	files   []string
	dir     string
	rawMode bool // -R: no recording detection
	seq     bool // --seq: drop RS separators

	next    int // index of the next file
	br      *bufio.Reader
	closer  io.Closer
	name    string
	num     int // line number in the current input
	first   bool
	inRec   bool
	long    []byte
	started bool

	// failed holds an input that could not be opened or read, to be
	// returned as a line with openErr set; reading goes on.
	failed *line
}

const readBufSize = 256 << 10

// line is one payload line. bad is set when the line is not usable (a
// broken recording entry); text then holds the reason.
type line struct {
	text []byte
	name string
	num  int
	bad  string
	// openErr: the input itself could not be read (jq's exit 2).
	openErr bool
}

// open moves to the next input; false when there is none.
func (r *lineReader) open() bool {
	if r.closer != nil {
		r.closer.Close()
		r.closer = nil
	}
	if len(r.files) == 0 {
		if r.started {
			return false
		}
		r.started = true
		r.reset(r.stdin, "<stdin>")
		return true
	}
	if r.next >= len(r.files) {
		return false
	}
	name := r.files[r.next]
	r.next++
	r.started = true
	path := name
	if r.dir != "" && !filepath.IsAbs(path) {
		path = filepath.Join(r.dir, path)
	}
	f, err := os.Open(path)
	if err != nil {
		r.failed = &line{name: name, bad: unwrapPath(err).Error(), openErr: true}
		return true
	}
	r.closer = f
	r.reset(f, name)
	return true
}

func (r *lineReader) reset(rd io.Reader, name string) {
	if r.br == nil {
		r.br = bufio.NewReaderSize(rd, readBufSize)
	} else {
		r.br.Reset(rd)
	}
	r.name, r.num, r.first, r.inRec = name, 0, true, false
}

// read returns the next line. The text aliases internal buffers: it is
// valid until the next call.
func (r *lineReader) read() (line, bool) {
	for {
		if r.br == nil || r.name == "" {
			if !r.open() {
				return line{}, false
			}
			if f := r.failed; f != nil {
				r.failed = nil
				return *f, true
			}
		}
		if err := r.ctx.Err(); err != nil {
			return line{}, false
		}
		text, err := r.readLine()
		if text == nil && err != nil {
			name := r.name
			r.name = ""
			if !errors.Is(err, io.EOF) {
				return line{name: name, bad: err.Error(), openErr: true}, true
			}
			continue
		}
		r.num++
		l := line{text: text, name: r.name, num: r.num}
		if r.seq {
			l.text = bytes.TrimLeft(l.text, "\x1e")
		}
		if r.rawMode {
			return l, true
		}
		if r.first {
			r.first = false
			if recording.IsHeader(l.text) {
				r.inRec = true
				if _, err := recording.ParseHeader(l.text); err != nil {
					l.bad = err.Error()
					return l, true
				}
				continue
			}
		}
		if !r.inRec {
			return l, true
		}
		if len(bytes.TrimSpace(l.text)) == 0 {
			continue
		}
		e, err := recording.ParseEntry(l.text)
		if err != nil {
			l.bad = err.Error()
			return l, true
		}
		if (e.Dir == recording.Out || e.Dir == recording.Event) && e.Msg != nil {
			l.text = e.Msg
			return l, true
		}
	}
}

// readLine reads up to and excluding '\n'; a last line without one counts.
func (r *lineReader) readLine() ([]byte, error) {
	b, err := r.br.ReadSlice('\n')
	if err == nil {
		return b[:len(b)-1], nil
	}
	if !errors.Is(err, bufio.ErrBufferFull) {
		if len(b) == 0 {
			return nil, err
		}
		return b, nil // the last line, unterminated
	}
	r.long = append(r.long[:0], b...)
	for {
		b, err = r.br.ReadSlice('\n')
		r.long = append(r.long, b...)
		if err == nil {
			return r.long[:len(r.long)-1], nil
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return r.long, nil
		}
	}
}

// close releases the open file, if any.
func (r *lineReader) close() {
	if r.closer != nil {
		r.closer.Close()
		r.closer = nil
	}
}

// readAll concatenates every input's bytes (-R -s).
func (r *lineReader) readAll() ([]byte, error) {
	var all bytes.Buffer
	for r.open() {
		if f := r.failed; f != nil {
			r.failed = nil
			return nil, fmt.Errorf("%s: %s", f.name, f.bad)
		}
		if _, err := all.ReadFrom(r.br); err != nil {
			return nil, fmt.Errorf("%s: %w", r.name, err)
		}
	}
	return all.Bytes(), nil
}
