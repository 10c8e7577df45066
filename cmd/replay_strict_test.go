package cmd

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentjq/agentjq/internal/protocol"
)

// Every reader of recordings (replay, replay --as-agent, replay --check,
// filter, filter --view) reads strictly: a msg that is not a JSON object,
// or a gzip file cut off, is an error naming FILE:LINE, exit 5; --lenient
// reads them as agentjq once did.
func TestReplayStrictInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notObject := filepath.Join(dir, "seven.rec")
	os.WriteFile(notObject, []byte(`{"agentjq_recording":1,"agent":"claude"}`+"\n"+
		`{"seq":1,"ms":0.1,"dir":"out","msg":7}`+"\n"+
		`{"seq":2,"ms":0.2,"dir":"out","msg":{"type":"result","subtype":"success","is_error":false,"num_turns":1}}`+"\n"), 0o644)

	rec, _, capOut := captureRecording(t, "write-allow")
	full, _ := os.ReadFile(rec)
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(full)
	zw.Close()
	cut := filepath.Join(dir, "cut.rec.gz")
	os.WriteFile(cut, z.Bytes()[:z.Len()*2/3], 0o644)
	whole := filepath.Join(dir, "whole.rec.gz")
	os.WriteFile(whole, z.Bytes(), 0o644)

	cases := []struct {
		name     string
		args     []string
		code     int
		inStderr string
		stdout   string // a prefix of stdout, when set
	}{
		{"replay, msg 7", []string{"replay", notObject}, ExitBadRecording, notObject + ":2: msg is not a JSON object (7)", ""},
		{"replay --lenient, msg 7", []string{"replay", "--lenient", notObject}, 0, "", "7\n"},
		{"replay, gzip cut off", []string{"replay", cut}, ExitBadRecording, cut + ":", ""},
		{"replay --lenient, gzip cut off", []string{"replay", "--lenient", cut}, 0, "truncated", string(capOut[:100])},
		{"replay, whole gzip", []string{"replay", whole}, 0, "", string(capOut)},
		{"replay --as-agent, msg 7", []string{"replay", "--as-agent", notObject}, ExitBadRecording, notObject + ":2: msg is not a JSON object", ""},
		{"replay --as-agent, gzip cut off", []string{"replay", "--as-agent", cut}, ExitBadRecording, cut + ":", ""},
		{"replay --check --against, gzip cut off", []string{"replay", "--check", rec, "--against", cut}, ExitBadRecording, cut + ":", ""},
		{"replay --check --against, msg 7", []string{"replay", "--check", notObject, "--against", rec}, ExitBadRecording, notObject + ":2:", ""},
		{"filter, msg 7", []string{"filter", "-c", ".", notObject}, 5, notObject + ":2: msg is not a JSON object", ""},
		{"filter --lenient, msg 7", []string{"filter", "--lenient", "-c", ".", notObject}, 0, "", "7\n"},
		{"filter, gzip cut off", []string{"filter", "-c", "empty", cut}, 5, cut + ":", ""},
		{"filter --lenient, gzip cut off", []string{"filter", "--lenient", "-c", "empty", cut}, 0, "truncated", ""},
		{"filter --view, msg 7", []string{"filter", "--view", "--color", "never", notObject}, 5, "could not be read", ""},
		{"filter --view, gzip cut off", []string{"filter", "--view", "--color", "never", cut}, 5, "cut off", ""},
		{"filter --view --lenient, gzip cut off", []string{"filter", "--view", "--lenient", "--color", "never", cut}, 0, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ios, out, errb := fakeIO(t, "echo-turns", "")
			got := Main(c.args, ios)
			if got != c.code {
				t.Fatalf("exit %d, want %d\nstdout: %.300s\nstderr: %s", got, c.code, out, errb)
			}
			if c.inStderr != "" && !strings.Contains(errb.String(), c.inStderr) {
				t.Errorf("stderr lacks %q:\n%s", c.inStderr, errb)
			}
			if c.code == 0 && strings.Contains(errb.String(), "agentjq: ") && c.inStderr == "" {
				t.Errorf("stderr on success: %s", errb)
			}
			if !strings.HasPrefix(out.String(), c.stdout) {
				t.Errorf("stdout %.300q, want it to begin %.300q", out, c.stdout)
			}
		})
	}
	if ExitBadRecording == protocol.ExitError {
		t.Error("a bad recording must not share the exit status of any other error")
	}
}
