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

	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/recording"
)

// lineReader yields the payload lines of the inputs, in order: each file
// (or the reader given to Run), split on '\n' only, any length, read by
// recording.Lines. An input that is a recording yields what spawn's
// stdout showed: the recorded agent lines (dir "out") and agentjq's
// events (dir "event"); the other directions are skipped. A recording's
// cut-off last line is a warning (warn), not an error.
type lineReader struct {
	ctx     context.Context
	stdin   io.Reader
	files   []string
	dir     string
	rawMode bool // -R: no recording detection
	seq     bool // --seq: drop RS separators
	lenient bool // --lenient: recording.Lines.Lenient

	next    int           // index of the next file
	br      *bufio.Reader // the current input, for readAll (-R -s)
	lines   *recording.Lines
	closer  io.Closer
	name    string
	started bool

	// failed holds an input that could not be opened or read, to be
	// returned as a line with openErr set; reading goes on.
	failed *line
	// warning is the input's warning (a cut-off last line), to be
	// returned as a line with warning set.
	warning string
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
	// warning: bad is only a warning (a recording's cut-off last line).
	warning bool
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
	r.name = name
	r.lines = recording.NewLines(r.br, name)
	r.lines.Raw = r.rawMode
	r.lines.Lenient = r.lenient
	r.lines.Warn = func(err error) { r.warning = err.Error() }
}

// read returns the next line. The text aliases internal buffers: it is
// valid until the next call.
func (r *lineReader) read() (line, bool) {
	for {
		if r.lines == nil || r.name == "" {
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
		ln, err := r.lines.Next()
		if r.warning != "" {
			w := line{name: r.name, bad: r.warning, warning: true}
			r.warning = ""
			if err != nil && errors.Is(err, io.EOF) {
				r.name = ""
			}
			return w, true
		}
		var bad *recording.LineError
		switch {
		case errors.As(err, &bad):
			return line{text: ln.Text, name: bad.Name, num: bad.Line, bad: bad.Err.Error()}, true
		case err != nil:
			name := r.name
			r.name = ""
			if !errors.Is(err, io.EOF) {
				return line{name: name, bad: err.Error(), openErr: true}, true
			}
			continue
		}
		if ln.Dir != "" && ln.Dir != protocol.DirOut && ln.Dir != protocol.DirEvent || ln.Dir != "" && ln.Entry.Msg == nil {
			continue // a recording shows what spawn's stdout showed
		}
		l := line{text: ln.Text, name: ln.Name, num: ln.Num}
		if r.seq {
			l.text = bytes.TrimLeft(l.text, "\x1e")
		}
		return l, true
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
