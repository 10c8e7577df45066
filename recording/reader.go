package recording

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/agentjq/agentjq/internal/protocol"
)

// ErrTruncated reports an input cut off: a recording's last line cut off
// mid-write (the recorder was killed), which readers warn of and treat
// as the end, or a compressed input that ends early (or is damaged),
// which is a *LineError unless Lenient (Lines).
var ErrTruncated = errors.New("recording: last line is truncated (the recorder was probably killed); ignored")

// ErrNotObject reports a recorded msg that is not a JSON object (every
// line of the protocol is one).
var ErrNotObject = errors.New("msg is not a JSON object")

// LineError is a bad line of an input, named FILE:LINE.
type LineError struct {
	Name string
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("%s:%d: %v", e.Name, e.Line, e.Err) }

func (e *LineError) Unwrap() error { return e.Err }

// Lines reads the agent lines of one input, which is either a raw NDJSON
// stream (a capture of the agent's stdout, spawn's output: each line as it
// is) or an agentjq recording (its first line is a header: each entry's
// payload, with its direction). Either may be gzip-compressed. It is the
// one reader behind filter, filter --view, approve test and replay.
//
// A recording's bad entry is a *LineError and reading may go on; so is
// an entry whose msg is not a JSON object (ErrNotObject). A gzip stream
// that ends early or is damaged is a *LineError (ErrTruncated) that ends
// the input: the file is not what was written. A recording's last line
// cut off mid-write, as a killed recorder leaves a plain file, is
// reported to Warn (ErrTruncated) and ends the input. Lenient keeps the
// older reading: a msg of any JSON value is read as it is, and a cut-off
// gzip stream is read up to the cut, with the warning.
type Lines struct {
	// Name names the input in errors (a file name, "<stdin>").
	Name string
	// Raw reads every line as it is: no recording detection (filter -R).
	Raw bool
	// Lenient reads a damaged input as far as it goes (see above).
	Lenient bool
	// Warn, if set, receives the truncated-input warning (Lenient).
	Warn func(error)

	src     io.Reader
	br      *bufio.Reader
	num     int
	started bool
	gz      bool
	rec     bool
	header  Header
	long    []byte
	eof     bool
	// readErr is why reading stopped before the end of the input (a
	// gzip stream cut off or damaged); nil at a clean end.
	readErr error
	// pending is the first line, read to tell a raw stream from a
	// recording: Next returns it first.
	pending *Line
}

// Line is one line of an input.
type Line struct {
	// Text is the line: a raw line without its newline, or a recorded
	// entry's payload (its Msg, or its Text for a non-JSON line). It
	// aliases the reader's buffers, valid until the next call of Next.
	Text []byte
	// Dir is where a recorded line travelled; "" for a raw line.
	Dir protocol.Direction
	// Entry is the recorded entry (Dir set).
	Entry Entry
	Name  string
	Num   int // the line number in the input, from 1
}

const linesBufSize = 256 << 10

// NewLines reads r, named name.
func NewLines(r io.Reader, name string) *Lines {
	return &Lines{Name: name, src: r}
}

// start peeks at the input: gzip is undone, a header line makes it a
// recording. A header that does not parse is an error (and the input is
// read as a recording all the same).
func (l *Lines) start() error {
	l.started = true
	l.br = bufio.NewReaderSize(l.src, linesBufSize)
	if magic, _ := l.br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(l.br)
		if err != nil {
			return &LineError{l.Name, 1, fmt.Errorf("gzip: %w", err)}
		}
		l.br = bufio.NewReaderSize(zr, linesBufSize)
		l.gz = true
	}
	if l.Raw {
		return nil
	}
	text, err := l.readLine()
	if text == nil {
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("%s: %w", l.Name, err)
		}
		return nil
	}
	text = bytes.TrimRight(text, "\r")
	if !IsHeader(text) {
		l.pending = &Line{Text: text, Name: l.Name, Num: l.num}
		return nil
	}
	l.rec = true
	h, herr := ParseHeader(text)
	if herr != nil {
		return &LineError{l.Name, l.num, herr}
	}
	l.header = h
	return nil
}

// Recording reports whether the input is a recording, and its header
// (valid once Next has been called).
func (l *Lines) Recording() (Header, bool) { return l.header, l.rec }

// readLine reads up to and excluding '\n'; a last line without one
// counts (l.eof is then set, and l.readErr when the input did not end
// cleanly).
func (l *Lines) readLine() ([]byte, error) {
	b, err := l.br.ReadSlice('\n')
	if err == nil {
		l.num++
		return b[:len(b)-1], nil
	}
	if !errors.Is(err, bufio.ErrBufferFull) {
		l.noteEnd(err)
		if len(b) == 0 {
			return nil, err
		}
		l.num++
		l.eof = true
		return b, nil
	}
	l.long = append(l.long[:0], b...)
	for {
		b, err = l.br.ReadSlice('\n')
		l.long = append(l.long, b...)
		if err == nil {
			l.num++
			return l.long[:len(l.long)-1], nil
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			l.noteEnd(err)
			l.num++
			l.eof = true
			return l.long, nil
		}
	}
}

// noteEnd keeps why reading stopped when it was not the input's clean
// end: a gzip stream cut off (io.ErrUnexpectedEOF) or damaged.
func (l *Lines) noteEnd(err error) {
	if l.gz && !errors.Is(err, io.EOF) {
		l.readErr = err
	}
}

// truncated is the error (strict) or warning (Lenient) for a
// compressed input cut off (or damaged) at its line n: why names the cut.
func (l *Lines) truncated(n int, why error) error {
	if l.Lenient {
		return l.warnCut(n)
	}
	l.eof = true
	return &LineError{l.Name, n, cutError{why}}
}

// warnCut reports a last line cut off at line n to Warn and ends the
// input.
func (l *Lines) warnCut(n int) error {
	if l.Warn != nil {
		l.Warn(fmt.Errorf("%s:%d: %w", l.Name, n, ErrTruncated))
	}
	return io.EOF
}

// cutError is a strict reader's ErrTruncated.
type cutError struct{ why error }

func (e cutError) Error() string {
	return "the recording is cut off here (" + e.why.Error() + "); --lenient reads it up to the cut"
}

func (e cutError) Is(target error) bool { return target == ErrTruncated }

func (e cutError) Unwrap() error { return e.why }

// Next returns the next line: io.EOF at the end, a *LineError for a bad
// recording header or entry (call Next again to go on), or another error
// from reading.
func (l *Lines) Next() (Line, error) {
	if !l.started {
		if err := l.start(); err != nil {
			return Line{Name: l.Name, Num: l.num}, err
		}
	}
	if p := l.pending; p != nil {
		l.pending = nil
		return *p, nil
	}
	for {
		if l.eof {
			return Line{}, io.EOF
		}
		text, err := l.readLine()
		if text == nil && err != nil {
			if errors.Is(err, io.EOF) {
				return Line{}, io.EOF
			}
			if l.readErr != nil {
				// Cut off (or damaged) where a line would start.
				return Line{Name: l.Name, Num: l.num + 1}, l.truncated(l.num+1, l.readErr)
			}
			return Line{}, fmt.Errorf("%s: %w", l.Name, err)
		}
		text = bytes.TrimRight(text, "\r")
		ln := Line{Text: text, Name: l.Name, Num: l.num}
		if l.readErr != nil && !l.Lenient {
			// What a cut-off gzip stream gave of its last line is not
			// the line (and a raw line so cut is no better).
			return ln, l.truncated(l.num, l.readErr)
		}
		if !l.rec {
			return ln, nil
		}
		if len(bytes.TrimSpace(text)) == 0 {
			continue
		}
		e, perr := ParseEntry(text)
		if perr == nil && l.eof && e.Msg != nil && !json.Valid(e.Msg) {
			perr = errors.New("cut off")
		}
		if perr != nil {
			if l.eof {
				// No newline at the end and unparsable: cut off mid-write,
				// as a killed recorder leaves a plain file (a cut-off gzip
				// stream got here only when Lenient).
				return Line{}, l.warnCut(l.num)
			}
			return ln, &LineError{l.Name, l.num, perr}
		}
		if e.Msg != nil && !l.Lenient && !isObject(e.Msg) {
			return ln, &LineError{l.Name, l.num, fmt.Errorf("%w (%s); --lenient reads it as it is", ErrNotObject, clip(e.Msg, 40))}
		}
		ln.Dir, ln.Entry = e.Dir, e
		if e.Msg != nil {
			ln.Text = e.Msg
		} else {
			ln.Text = []byte(e.Text)
		}
		return ln, nil
	}
}

// isObject reports whether msg, valid JSON, is an object.
func isObject(msg []byte) bool {
	msg = bytes.TrimLeft(msg, " \t\r\n")
	return len(msg) > 0 && msg[0] == '{'
}

// clip shortens b for a message.
func clip(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}

// Reader reads a recording entry by entry: Lines that insists on a
// header. Lines of any length are fine.
type Reader struct {
	// Lines is the reader underneath: its Next gives each entry without
	// copying it (Line.Entry aliases the reader's buffers).
	Lines *Lines
}

// NewReader reads and checks the header; name names the input in errors.
func NewReader(r io.Reader, name string) (*Reader, Header, error) {
	l := NewLines(r, name)
	if err := l.start(); err != nil {
		return nil, Header{}, err
	}
	if !l.rec {
		if l.pending == nil {
			return nil, Header{}, fmt.Errorf("%s: empty file, not a recording", name)
		}
		return nil, Header{}, fmt.Errorf("%s: not an agentjq recording (no header line)", name)
	}
	return &Reader{Lines: l}, l.header, nil
}

// SetWarn sets the function that receives the truncated-last-line warning.
func (r *Reader) SetWarn(warn func(error)) { r.Lines.Warn = warn }

// Next returns the next entry, io.EOF at the end. A truncated last line is
// reported to the warning function and ends the recording. Entry.Msg is a
// fresh slice.
func (r *Reader) Next() (Entry, error) {
	ln, err := r.Lines.Next()
	if err != nil {
		return Entry{}, err
	}
	e := ln.Entry
	if e.Msg != nil {
		e.Msg = append([]byte(nil), e.Msg...)
	}
	return e, nil
}

// ReadOptions configure Read.
type ReadOptions struct {
	// Lenient is Lines.Lenient: a damaged recording read as far as it
	// goes, its cut reported to Warn.
	Lenient bool
	Warn    func(error)
}

// ReadAll reads a whole recording into memory, strictly (Lines); name
// names it in errors.
func ReadAll(r io.Reader, name string, warn func(error)) (Header, []Entry, error) {
	return Read(r, name, ReadOptions{Warn: warn})
}

// Read reads a whole recording into memory; name names it in errors.
func Read(r io.Reader, name string, opts ReadOptions) (Header, []Entry, error) {
	rr, h, err := NewReader(r, name)
	if err != nil {
		return Header{}, nil, err
	}
	rr.Lines.Lenient = opts.Lenient
	rr.SetWarn(opts.Warn)
	var entries []Entry
	for {
		e, err := rr.Next()
		if err == io.EOF {
			return h, entries, nil
		}
		if err != nil {
			return h, entries, err
		}
		entries = append(entries, e)
	}
}
