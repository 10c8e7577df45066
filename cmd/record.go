package cmd

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/alecthomas/kong"

	"github.com/agentjq/agentjq/internal/buildinfo"
	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/iostreams"
	"github.com/agentjq/agentjq/recording"
	"github.com/agentjq/agentjq/redact"
)

// RedactFlags choose what a recording leaves out; record and spawn
// --record share them.
type RedactFlags struct {
	NoRedact   bool     `help:"Record secrets verbatim (redaction of API keys, tokens, the account email and organization is on by default)."`
	RedactEnv  []string `sep:"none" placeholder:"NAME" help:"Also remove the value of environment variable NAME wherever it appears; repeatable."`
	Redact     []string `sep:"none" placeholder:"REGEX" help:"Also remove every match of REGEX (RE2 syntax); repeatable."`
	RedactPath []string `sep:"none" placeholder:"JQPATH" help:"Also replace the value at JQPATH (.a.b, .a[0], .a[]) in every JSON line; repeatable."`
}

// RecordCmd is the record subcommand.
type RecordCmd struct {
	SpawnFlags
	Output string `short:"o" required:"" placeholder:"FILE" help:"Write the recording to FILE (created mode 0600, truncated)."`
	Tee    bool   `help:"Record the NDJSON arriving on stdin while passing it to stdout unchanged, instead of running a session."`
	RedactFlags
	AgentArgs []string `arg:"" optional:"" passthrough:"" help:"Arguments after -- go to the agent verbatim."`
}

// Run runs record.
func (c *RecordCmd) Run(ctx context.Context, ios *iostreams.IO, kctx *kong.Context) error {
	argv := append([]string{"agentjq"}, kctx.Args...)
	agentArgs, err := splitAgentArgs(c.AgentArgs)
	if err != nil {
		return err
	}
	if c.Tee && len(agentArgs) > 0 {
		return usageError("record --tee runs no agent: no agent arguments allowed")
	}
	rec, err := openRecording(ios, c.Output, c.RedactFlags, sessionOf(c.SpawnFlags, agentArgs), argv, c.Cwd)
	if err != nil {
		return err
	}
	var runErr error
	if c.Tee {
		runErr = teeRecord(ios.In, ios.Out, rec.w.Tap)
	} else {
		runErr = runSpawn(ctx, ios, c.SpawnFlags, agentArgs, rec)
	}
	return closeRecording(ios, rec, runErr)
}

// openedRecording is a recording being written to a file.
type openedRecording struct {
	f    recordingFile
	w    *recording.Writer
	red  *redact.Redactor // nil with --no-redact
	path string

	mu       sync.Mutex
	reported error // the failure Flush returned: the session has said it
}

// recordingFile is where a recording goes: an *os.File.
type recordingFile interface {
	io.Writer
	Close() error
}

// createRecordingFile creates (truncates) a recording's file; a test
// puts a disk that fills up in its place.
var createRecordingFile = func(path string) (recordingFile, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// Flush waits until every line tapped so far is written and reports a
// write error (the bridge's TapErr, asked before the exit event).
func (r *openedRecording) Flush() error {
	err := r.w.Flush()
	if err == nil {
		return nil
	}
	r.mu.Lock()
	r.reported = err
	r.mu.Unlock()
	return r.failed(err)
}

// failed names the file in err once (an *os.File's errors name it too).
func (r *openedRecording) failed(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == r.path {
		err = fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return fmt.Errorf("recording %s: %w", r.path, err)
}

// Echo is what the bridge's echo of a non-JSON agent line goes through:
// the recording's own redaction, user expressions included.
func (r *openedRecording) Echo() func([]byte) []byte {
	if r.red == nil {
		return nil
	}
	return r.red.Text
}

// Tap records one line; pass it to the bridge.
func (r *openedRecording) Tap(dir protocol.Direction, line []byte, known protocol.Known) {
	r.w.Tap(dir, line, known)
}

// Close writes out what is queued and closes the file. It reports a
// failure the session has not reported already: one known only now (the
// close itself, or lines tapped after the exit event).
func (r *openedRecording) Close() error {
	werr := r.w.Close()
	cerr := r.f.Close()
	r.mu.Lock()
	reported := r.reported
	r.mu.Unlock()
	if werr != nil && werr != reported {
		return r.failed(werr)
	}
	if cerr != nil {
		return r.failed(cerr)
	}
	return nil
}

// closeRecording closes rec after a session that ended with runErr. A
// recording that failed fails the command (exit 1), whatever the session
// did, and says so naming the file even when the session's own status
// was already reported.
func closeRecording(ios *iostreams.IO, rec *openedRecording, runErr error) error {
	err := rec.Close()
	if err == nil && runErr == nil {
		// A failure the session was told of (TapErr) but that did not
		// fail it: the proxy passes the agent's own status on.
		rec.mu.Lock()
		if rec.reported != nil {
			err = rec.failed(rec.reported)
		}
		rec.mu.Unlock()
	}
	if err == nil {
		return runErr
	}
	if runErr == nil {
		return err
	}
	fmt.Fprintf(ios.Err, "agentjq: %v\n", err)
	return silentExit(protocol.ExitError)
}

// openRecording creates path and writes the header. spawn --record uses
// it too.
func openRecording(ios *iostreams.IO, path string, rf RedactFlags, session recording.Session, argv []string, cwd string) (*openedRecording, error) {
	return openRecordingOf(ios, path, rf, session, argv, cwd, "")
}

// openRecordingOf is openRecording with the agent's version, when known,
// in the header.
func openRecordingOf(ios *iostreams.IO, path string, rf RedactFlags, session recording.Session, argv []string, cwd, agentVersion string) (*openedRecording, error) {
	if path == "" || path == "-" {
		return nil, usageError("a recording needs a file: -o FILE")
	}
	var red *redact.Redactor
	if !rf.NoRedact {
		var err error
		red, err = redact.NewRedactor(redact.RedactSpec{Builtin: true, Env: rf.RedactEnv, Regex: rf.Redact, Paths: rf.RedactPath}, ios.LookupEnv)
		if err != nil {
			return nil, usageError("%v", err)
		}
		learnAgentAccount(ios, red)
	} else if len(rf.RedactEnv)+len(rf.Redact)+len(rf.RedactPath) > 0 {
		return nil, usageError("--no-redact contradicts --redact, --redact-env and --redact-path")
	}
	if cwd == "" {
		cwd = ios.Dir
	}
	if cwd == "" {
		cwd, _ = os.Getwd()
	}
	f, err := createRecordingFile(path)
	if err != nil {
		if dir := filepath.Dir(path); errors.Is(err, fs.ErrNotExist) {
			if _, serr := os.Stat(dir); serr != nil {
				return nil, usageError("recording %s: directory %s does not exist", path, dir)
			}
		}
		return nil, err
	}
	// An *os.File is unbuffered: every batch of whole entries reaches the
	// OS as soon as the recorder's goroutine has encoded it, so a killed
	// agentjq leaves only complete lines behind. Async keeps redaction and
	// encoding off the session's path.
	w, err := recording.NewWriter(f, recording.Header{
		Agent:          session.Agent,
		AgentVersion:   agentVersion,
		AgentjqVersion: buildinfo.Version(),
		Argv:           argv,
		Cwd:            cwd,
		Session:        &session,
	}, recording.WriterOptions{Redactor: red, Async: true})
	if err != nil {
		f.Close()
		rec := &openedRecording{path: path}
		return nil, rec.failed(err)
	}
	return &openedRecording{f: f, w: w, red: red, path: path}, nil
}

// teeRecord copies in to out line by line, unchanged, tapping each line:
// agentjq's own events as events, everything else as agent output.
func teeRecord(in io.Reader, out io.Writer, tap func(protocol.Direction, []byte, protocol.Known)) error {
	br := bufio.NewReaderSize(in, 256<<10)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			if _, werr := out.Write(line); werr != nil {
				return werr
			}
			body := bytes.TrimRight(line, "\r\n")
			if len(bytes.TrimSpace(body)) > 0 {
				dir := protocol.DirOut
				if bytes.Contains(body, []byte(`"agentjq"`)) && isAgentjqEvent(body) {
					dir = protocol.DirEvent
				}
				tap(dir, body, 0) // anything: the recorder looks for itself
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func isAgentjqEvent(line []byte) bool {
	var v struct {
		Type string `json:"type"`
	}
	return json.Unmarshal(line, &v) == nil && v.Type == "agentjq"
}

// learnAgentAccount teaches red the account that the agent's own
// configuration names, before the header is written: the initialize
// response that also names it comes later, if at all.
func learnAgentAccount(ios *iostreams.IO, red *redact.Redactor) {
	var paths []string
	if d, ok := ios.LookupEnv("CLAUDE_CONFIG_DIR"); ok && d != "" {
		paths = append(paths, filepath.Join(d, ".claude.json"))
	}
	if h, ok := ios.LookupEnv("HOME"); ok && h != "" {
		paths = append(paths, filepath.Join(h, ".claude.json"))
	}
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			red.LearnAccount(redact.AccountFromConfig(b))
		}
	}
}

// echoRedactor is what the bridge's echo of a non-JSON agent line goes
// through: the built-in redaction and the agent's account.
func echoRedactor(ios *iostreams.IO) func([]byte) []byte {
	red, err := redact.NewRedactor(redact.RedactSpec{Builtin: true}, ios.LookupEnv)
	if err != nil {
		return nil
	}
	learnAgentAccount(ios, red)
	return red.Text
}
