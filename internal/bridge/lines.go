package bridge

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// lineReader frames a byte stream on '\n' only, with no limit on a line's
// length. A line is returned without its newline (and without a trailing
// CR); the slice is valid until the next call.
type lineReader struct {
	r    *bufio.Reader
	long []byte
	n    int // lines read
}

const (
	readBufSize = 256 << 10
	// keepLong is the largest accumulation buffer kept between lines;
	// a larger one is let go so one huge line does not pin its memory.
	keepLong = 4 << 20
)

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, readBufSize)}
}

// next returns the next line. At EOF a final line without a newline is
// still returned; then io.EOF.
func (l *lineReader) next() ([]byte, error) {
	if cap(l.long) > keepLong {
		l.long = nil
	}
	l.long = l.long[:0]
	for {
		frag, err := l.r.ReadSlice('\n')
		if err == nil {
			l.n++
			if len(l.long) == 0 {
				return trimEOL(frag), nil
			}
			l.long = append(l.long, frag...)
			return trimEOL(l.long), nil
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			l.long = append(l.long, frag...)
			continue
		}
		l.long = append(l.long, frag...)
		if len(l.long) > 0 {
			l.n++
			return trimEOL(l.long), nil
		}
		return nil, err
	}
}

func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte{'\n'})
	return bytes.TrimSuffix(b, []byte{'\r'})
}
