package recording

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// ErrTruncated reports a last line cut off mid-write (the recorder was
// killed). Readers warn and treat it as the end.
var ErrTruncated = errors.New("recording: last line is truncated (the recorder was probably killed); ignored")

// Reader reads a recording entry by entry. Lines of any length are fine.
type Reader struct {
	br     *bufio.Reader
	header Header
	line   int
	// Warn, if set, receives the truncated-last-line warning.
	Warn func(error)
}

// NewReader reads and checks the header.
func NewReader(r io.Reader) (*Reader, error) {
	rr := &Reader{br: bufio.NewReaderSize(r, 256<<10)}
	line, err := rr.readLine()
	if err != nil && (err != io.EOF || len(line) == 0) {
		if err == io.EOF {
			return nil, errors.New("recording: empty file")
		}
		return nil, err
	}
	if !IsHeader(line) {
		return nil, errors.New("recording: not an agentjq recording (no header line)")
	}
	h, err := ParseHeader(line)
	if err != nil {
		return nil, err
	}
	rr.header = h
	return rr, nil
}

// Header returns the recording's header.
func (r *Reader) Header() Header { return r.header }

// Line returns the line number of the last entry read (the header is 1).
func (r *Reader) Line() int { return r.line }

func (r *Reader) readLine() ([]byte, error) {
	line, err := r.br.ReadBytes('\n')
	if len(line) > 0 {
		r.line++
	}
	if err == nil {
		line = line[:len(line)-1]
	}
	return bytes.TrimRight(line, "\r"), err
}

// Next returns the next entry, io.EOF at the end. A truncated last line is
// reported to Warn and ends the recording. Entry.Msg is a fresh slice.
func (r *Reader) Next() (Entry, error) {
	for {
		line, err := r.readLine()
		if err != nil && err != io.EOF {
			return Entry{}, err
		}
		if len(bytes.TrimSpace(line)) == 0 {
			if err == io.EOF {
				return Entry{}, io.EOF
			}
			continue
		}
		e, perr := ParseEntry(line)
		if perr == nil && err == io.EOF && e.Msg != nil && !json.Valid(e.Msg) {
			perr = errors.New("cut off")
		}
		if perr != nil {
			if err == io.EOF {
				// No newline at the end and unparsable: cut off mid-write.
				if r.Warn != nil {
					r.Warn(ErrTruncated)
				}
				return Entry{}, io.EOF
			}
			return Entry{}, fmt.Errorf("recording line %d: %w", r.line, perr)
		}
		return e, nil
	}
}

// ReadAll reads a whole recording into memory.
func ReadAll(r io.Reader, warn func(error)) (Header, []Entry, error) {
	rr, err := NewReader(r)
	if err != nil {
		return Header{}, nil, err
	}
	rr.Warn = warn
	var entries []Entry
	for {
		e, err := rr.Next()
		if err == io.EOF {
			return rr.header, entries, nil
		}
		if err != nil {
			return rr.header, entries, err
		}
		entries = append(entries, e)
	}
}
