package cmd

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/internal/testkit/livetest"
	"github.com/agentjq/agentjq/iostreams"
	"github.com/agentjq/agentjq/recording"
)

// fillingDisk is a recording's file on a disk that fills up: from the
// first write holding full (and for every write after it) a write stores
// half of what it was given and fails with ENOSPC after delay, as a slow
// disk does; with closeErr the close fails too (an NFS server reporting a
// write-back failure). Errors name the file as an *os.File's do.
type fillingDisk struct {
	f        *os.File
	full     string
	delay    time.Duration
	closeErr error

	mu     sync.Mutex
	filled bool
}

func (d *fillingDisk) Write(p []byte) (int, error) {
	d.mu.Lock()
	if !d.filled && d.full != "" && bytes.Contains(p, []byte(d.full)) {
		d.filled = true
	}
	filled := d.filled
	d.mu.Unlock()
	if !filled {
		return d.f.Write(p)
	}
	time.Sleep(d.delay)
	n, _ := d.f.Write(p[:len(p)/2])
	return n, &fs.PathError{Op: "write", Path: d.f.Name(), Err: syscall.ENOSPC}
}

func (d *fillingDisk) Close() error {
	err := d.f.Close()
	if d.closeErr != nil {
		return &fs.PathError{Op: "close", Path: d.f.Name(), Err: d.closeErr}
	}
	return err
}

// recordOnFillingDisk puts the recording of the test's session on a disk
// like d.
func recordOnFillingDisk(t *testing.T, d *fillingDisk) {
	create := createRecordingFile
	t.Cleanup(func() { createRecordingFile = create })
	createRecordingFile = func(p string) (recordingFile, error) {
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err != nil {
			return nil, err
		}
		return &fillingDisk{f: f, full: d.full, delay: d.delay, closeErr: d.closeErr}, nil
	}
}

// TestRecordingFailsAtTheEnd: a recording whose last writes fail (the disk
// fills while the final entries are written, or only the close reports
// it) never ends in an exit event that says success, and spawn's exit
// status says the recording failed, naming the file.
func TestRecordingFailsAtTheEnd(t *testing.T) {
	// Not parallel: it replaces createRecordingFile.
	livetest.SkipShort(t, "runs this test binary as the agent")
	for _, c := range []struct {
		name, scenario, turn string
		full                 string // see fillingDisk
		delay                time.Duration
		closeErr             error
		// eventOK: the failure comes after the exit event was sent, which
		// then truthfully says what the session did.
		eventOK bool
	}{
		{name: "the last agent lines", scenario: "capture:hello", turn: "hi\n",
			full: `"type":"result"`, delay: 150 * time.Millisecond},
		{name: "only the exit event", scenario: "capture:hello", turn: "hi\n",
			full: `"subtype":"exit"`, delay: 150 * time.Millisecond},
		{name: "only the close", scenario: "capture:hello", turn: "hi\n",
			closeErr: syscall.EIO, eventOK: true},
		{name: "only the close, after a denial", scenario: "capture:write-deny", turn: "please WRITE banana\n",
			closeErr: syscall.EIO, eventOK: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.rec")
			recordOnFillingDisk(t, &fillingDisk{full: c.full, delay: c.delay, closeErr: c.closeErr})
			ios, out, errb := fakeIO(t, c.scenario, c.turn)
			code := Main([]string{"spawn", "--bin", os.Args[0], "--record", path}, ios)
			if code != protocol.ExitError {
				t.Errorf("exit %d, want %d (the recording failed)", code, protocol.ExitError)
			}
			if !strings.Contains(errb.String(), "agentjq: ") || !strings.Contains(errb.String(), "recording "+path+": ") {
				t.Errorf("no message naming the recording: %q", errb)
			}
			if strings.Count(errb.String(), "recording "+path) != 1 {
				t.Errorf("the failure is not said exactly once: %q", errb)
			}
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			var ev protocol.Exit
			if err := json.Unmarshal([]byte(lines[len(lines)-1]), &ev); err != nil || ev.Subtype != protocol.EventExit {
				t.Fatalf("the last line is not the exit event: %s", lines[len(lines)-1])
			}
			if c.eventOK {
				if ev.Code != ev.Outcome.ExitCode() || ev.Error != "" {
					t.Errorf("exit event %+v", ev)
				}
				return
			}
			if ev.Outcome != protocol.OutcomeError || ev.Code != protocol.ExitError ||
				!strings.Contains(ev.Error, "recording "+path+": write: no space left on device") {
				t.Errorf("exit event %+v, want the recording's failure", ev)
			}
			// What reached the file is a readable, incomplete recording.
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			_, entries, _ := recording.ReadAll(f, path, nil)
			for _, e := range entries {
				if e.Dir == protocol.DirEvent && bytes.Contains(e.Msg, []byte(`"subtype":"exit"`)) {
					t.Errorf("the incomplete recording holds an exit event: %s", e.Msg)
				}
			}
		})
	}
}

// TestProxyRecordingFailsAtTheEnd: under the proxy, too, a recording whose
// last writes fail makes the proxy exit 1 with a message naming the file,
// though what the client was sent is the agent's own.
func TestProxyRecordingFailsAtTheEnd(t *testing.T) {
	// Not parallel: it replaces createRecordingFile.
	livetest.SkipShort(t, "runs this test binary as the agent")
	for _, c := range []struct {
		name     string
		full     string
		closeErr error
	}{
		{name: "the last agent lines", full: `"type":"result"`},
		{name: "only the close", closeErr: syscall.EIO},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.rec")
			recordOnFillingDisk(t, &fillingDisk{full: c.full, delay: 150 * time.Millisecond, closeErr: c.closeErr})
			// The proxy refuses agentjq as its agent: a script plays it.
			agent := filepath.Join(t.TempDir(), "agent")
			writeFile(agent, []byte("#!/bin/sh\nread turn\n"+
				`echo '{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"hi"}]}}'`+"\n"+
				`echo '{"type":"result","subtype":"success","is_error":false,"result":"hi"}'`+"\n"), 0o755)
			ios, in, out, errb := iostreams.Test()
			ios.Environ = []string{"PATH=" + os.Getenv("PATH"), "AGENTJQ_GRACE=500ms"}
			in.WriteString(`{"type":"user","message":{"role":"user","content":"hi"}}` + "\n")
			code := Main([]string{"proxy", "--bin", agent, "--record", path, "--",
				"--input-format", "stream-json", "--output-format", "stream-json", "--verbose"}, ios)
			if code != protocol.ExitError {
				t.Errorf("exit %d, want %d (the recording failed); stderr %q", code, protocol.ExitError, errb)
			}
			if strings.Count(errb.String(), "recording "+path+": ") != 1 {
				t.Errorf("the failure is not said exactly once, naming the file: %q", errb)
			}
			if !strings.Contains(out.String(), `"type":"result"`) {
				t.Errorf("the client did not get the agent's result: %q", out)
			}
		})
	}
}
