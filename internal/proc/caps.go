package proc

import (
	"bufio"
	"errors"
	"fmt"
)

// Capped is a writer that keeps the first Max bytes written to it and
// drops the rest: what a peer writes never grows agentjq's memory past
// Max.
type Capped struct {
	Max     int
	buf     []byte
	dropped bool
}

func (c *Capped) Write(p []byte) (int, error) {
	n := len(p)
	if room := c.Max - len(c.buf); room < n {
		c.dropped = true
		p = p[:max(room, 0)]
	}
	c.buf = append(c.buf, p...)
	return n, nil
}

// Bytes is what was kept.
func (c *Capped) Bytes() []byte { return c.buf }

// String is what was kept.
func (c *Capped) String() string { return string(c.buf) }

// Dropped reports whether anything went over Max.
func (c *Capped) Dropped() bool { return c.dropped }

// ErrLineTooLong is ReadLine's error for a line over its limit.
var ErrLineTooLong = errors.New("line too long")

// ReadLine reads one line (with its '\n', if any) of at most max bytes.
// A longer line is read to its end and dropped, and ReadLine returns
// ErrLineTooLong (wrapped, with the limit) and no bytes: a peer writing
// an endless line costs agentjq at most max bytes.
func ReadLine(br *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		frag, err := br.ReadSlice('\n')
		if len(line)+len(frag) > max {
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
			return nil, fmt.Errorf("%w (over %d bytes)", ErrLineTooLong, max)
		}
		line = append(line, frag...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, err
		}
	}
}
