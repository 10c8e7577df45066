// Package iostreams owns the process's standard streams and answers the
// questions commands ask about them: is this stream a terminal, may it carry
// colour, may we prompt a person. Data travels on In/Out; the human is on Err
// and the controlling terminal, never on stdin when stdin carries the stream.
package iostreams

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"

	"github.com/mattn/go-isatty"
)

// IO is the one value that holds a command's streams and environment.
// Tests build it with Test and set the answers they need.
type IO struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer

	InTTY, OutTTY, ErrTTY bool

	// Environ is the environment as KEY=VALUE pairs (os.Environ in production).
	Environ []string
	// Dir is the working directory; "" means the process's own.
	Dir string

	// OpenTTY opens the controlling terminal for prompting. It fails when
	// there is none (CI, detached processes); callers then fall back to a
	// non-interactive answer.
	OpenTTY func() (io.ReadWriteCloser, error)
}

// ErrNoTTY is returned by OpenTTY when no terminal is available.
var ErrNoTTY = errors.New("no controlling terminal")

// System returns the process's real streams.
func System() *IO {
	return &IO{
		In:      os.Stdin,
		Out:     os.Stdout,
		Err:     os.Stderr,
		InTTY:   isTerminal(os.Stdin),
		OutTTY:  isTerminal(os.Stdout),
		ErrTTY:  isTerminal(os.Stderr),
		Environ: os.Environ(),
		OpenTTY: func() (io.ReadWriteCloser, error) {
			f, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
			if err != nil {
				return nil, ErrNoTTY
			}
			return f, nil
		},
	}
}

func isTerminal(f *os.File) bool {
	return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
}

// Test returns an IO backed by buffers: no terminal, an empty environment.
func Test() (ios *IO, in, out, errOut *bytes.Buffer) {
	in, out, errOut = new(bytes.Buffer), new(bytes.Buffer), new(bytes.Buffer)
	return &IO{
		In:      in,
		Out:     out,
		Err:     errOut,
		OpenTTY: func() (io.ReadWriteCloser, error) { return nil, ErrNoTTY },
	}, in, out, errOut
}

// Getenv looks a variable up in Environ.
func (s *IO) Getenv(key string) string {
	v, _ := s.LookupEnv(key)
	return v
}

// LookupEnv looks a variable up in Environ, saying whether it is set.
func (s *IO) LookupEnv(key string) (string, bool) {
	prefix := key + "="
	for i := len(s.Environ) - 1; i >= 0; i-- {
		if strings.HasPrefix(s.Environ[i], prefix) {
			return s.Environ[i][len(prefix):], true
		}
	}
	return "", false
}

// ColorMode is the user's --color choice.
type ColorMode string

// Color modes, as jq, ls and git spell them.
const (
	ColorAuto   ColorMode = "auto"
	ColorAlways ColorMode = "always"
	ColorNever  ColorMode = "never"
)

// ColorOut reports whether escape codes may be written to Out.
func (s *IO) ColorOut(mode ColorMode) bool { return s.color(mode, s.OutTTY) }

// ColorErr reports whether escape codes may be written to Err.
func (s *IO) ColorErr(mode ColorMode) bool { return s.color(mode, s.ErrTTY) }

// color decides for one stream: the flag first, then NO_COLOR and
// TERM=dumb, then whether that very stream is a terminal.
func (s *IO) color(mode ColorMode, tty bool) bool {
	switch mode {
	case ColorAlways:
		return true
	case ColorNever:
		return false
	}
	if _, ok := s.LookupEnv("NO_COLOR"); ok {
		return false
	}
	if s.Getenv("TERM") == "dumb" {
		return false
	}
	return tty
}
