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
	c.buf = appendDoubling(c.buf, p, c.Max)
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
// On a longer line it stops as soon as max is passed and returns
// ErrLineTooLong (wrapped, with the limit), leaving br inside that line:
// the caller drops the peer or calls SkipLine. Either way a peer that
// writes an endless line costs agentjq at most max bytes.
func ReadLine(br *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		frag, err := br.ReadSlice('\n')
		if len(line)+len(frag) > max {
			return nil, fmt.Errorf("%w (over %d bytes)", ErrLineTooLong, max)
		}
		if line == nil && !errors.Is(err, bufio.ErrBufferFull) {
			return append([]byte(nil), frag...), err
		}
		line = appendDoubling(line, frag, max)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, err
		}
	}
}

// SkipLine reads and drops the rest of the current line.
func SkipLine(br *bufio.Reader) error {
	for {
		_, err := br.ReadSlice('\n')
		if !errors.Is(err, bufio.ErrBufferFull) {
			return err
		}
	}
}

// appendDoubling appends p to b, doubling b's capacity (up to limit) when
// it must grow: append's gentler growth for large slices would allocate
// about five times limit on the way there.
func appendDoubling(b, p []byte, limit int) []byte {
	if need := len(b) + len(p); need > cap(b) {
		nb := make([]byte, len(b), min(max(2*cap(b), need, 4096), max(limit, need)))
		copy(nb, b)
		b = nb
	}
	return append(b, p...)
}
