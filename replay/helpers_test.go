package replay

import (
	"bytes"
	"testing"

	"github.com/agentjq/agentjq/fixtures"
	"github.com/agentjq/agentjq/recording"
)

type capture struct{ in, out []byte }

// captureBytes is a capture of the fixtures and the recording made of it.
func captureBytes(t testing.TB, name string) (capture, []byte) {
	t.Helper()
	in, err := fixtures.Capture(name, "in")
	if err != nil {
		t.Fatal(err)
	}
	out, err := fixtures.Capture(name, "out")
	if err != nil {
		t.Fatal(err)
	}
	return capture{in, out}, recording.FromCapture(in, out, recording.Header{Argv: []string{"capture", name}})
}

func splitLines(b []byte) [][]byte {
	var lines [][]byte
	for _, l := range bytes.Split(b, []byte("\n")) {
		if l = bytes.TrimRight(l, "\r"); len(bytes.TrimSpace(l)) > 0 {
			lines = append(lines, l)
		}
	}
	return lines
}
