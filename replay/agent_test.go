package replay

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/recording"
	"github.com/agentjq/agentjq/redact"
)

// scriptClient is a Go client of the agent, scripted by a capture's in
// lines: it sends its own control requests first (with ids of its own) and
// waits for their answers, then the first turn; it answers every control
// request from the script, sends a pending interrupt once a tool_use shows
// up, the next turn after each result, and closes stdin after the last.
type scriptClient struct {
	requests   [][]byte          // leading client control requests
	later      [][]byte          // client requests sent mid-turn (interrupt)
	turns      [][]byte          // user turns
	answers    map[string][]byte // agent request_id -> our control_response
	rename     func(id string) string
	tamper     func(line []byte) []byte // changes what we send, for mismatch tests
	closeEarly bool                     // close stdin right after the first turn
	mute       bool                     // never answer the agent's requests
}

func newScriptClient(t *testing.T, in []byte) *scriptClient {
	c := &scriptClient{answers: map[string][]byte{}, rename: func(id string) string { return "client-" + id }}
	sawTurn := false
	for _, l := range splitLines(in) {
		env, err := protocol.DecodeEnvelope(l)
		if err != nil {
			t.Fatal(err)
		}
		switch env.Type {
		case protocol.TypeControlRequest:
			if sawTurn {
				c.later = append(c.later, l)
			} else {
				c.requests = append(c.requests, l)
			}
		case protocol.TypeControlResp:
			c.answers[env.ResponseID()] = l
		case protocol.TypeUser:
			sawTurn = true
			c.turns = append(c.turns, l)
		}
	}
	return c
}

// run drives the agent over the two pipes and returns every line received.
func (c *scriptClient) run(t *testing.T, stdin io.WriteCloser, stdout io.Reader) ([][]byte, error) {
	br := bufio.NewReader(stdout)
	var got [][]byte
	send := func(l []byte) error {
		if c.tamper != nil {
			l = c.tamper(l)
		}
		_, err := stdin.Write(append(append([]byte(nil), l...), '\n'))
		return err
	}
	read := func() ([]byte, error) {
		l, err := br.ReadBytes('\n')
		if err != nil {
			return nil, err
		}
		l = bytes.TrimRight(l, "\n")
		got = append(got, l)
		return l, nil
	}
	handle := func(l []byte) (env protocol.Envelope, err error) {
		env, _ = protocol.DecodeEnvelope(l)
		if env.Type == protocol.TypeControlRequest && !c.mute {
			a, ok := c.answers[env.RequestID]
			if !ok {
				return env, fmt.Errorf("no scripted answer for %s", env.RequestID)
			}
			return env, send(a)
		}
		return env, nil
	}
	for _, r := range c.requests {
		env, _ := protocol.DecodeEnvelope(r)
		mine := c.rename(env.RequestID)
		if err := send(bytes.Replace(r, []byte(`"`+env.RequestID+`"`), []byte(`"`+mine+`"`), 1)); err != nil {
			return got, err
		}
		for {
			l, err := read()
			if err != nil {
				return got, fmt.Errorf("waiting for the answer to %s: %w", mine, err)
			}
			e, err := handle(l)
			if err != nil {
				return got, err
			}
			if e.Type == protocol.TypeControlResp && e.ResponseID() == mine {
				break
			}
		}
	}
	turn := 0
	if len(c.turns) > 0 {
		if err := send(c.turns[0]); err != nil {
			return got, err
		}
		turn = 1
	}
	if c.closeEarly || turn >= len(c.turns) && len(c.later) == 0 && len(c.answers) == 0 {
		stdin.Close()
	}
	later := c.later
	for {
		l, err := read()
		if err == io.EOF {
			return got, nil
		}
		if err != nil {
			return got, err
		}
		env, err := handle(l)
		if err != nil {
			return got, err
		}
		if len(later) > 0 && env.Type == protocol.TypeAssistant && bytes.Contains(l, []byte(`"tool_use"`)) {
			if err := send(later[0]); err != nil {
				return got, err
			}
			later = later[1:]
		}
		if env.Type == protocol.TypeResult {
			if turn < len(c.turns) {
				if err := send(c.turns[turn]); err != nil {
					return got, err
				}
				turn++
			} else {
				stdin.Close()
			}
		}
	}
}

type agentRun struct {
	got       [][]byte
	clientErr error
	agentErr  error
}

func runAsAgent(t *testing.T, rec []byte, client *scriptClient, opts AgentOptions) agentRun {
	t.Helper()
	h, entries, err := recording.ReadAll(bytes.NewReader(rec), "test.rec", nil)
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	if opts.Wait == 0 {
		opts.Wait = 2 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	agentDone := make(chan error, 1)
	go func() {
		err := AsAgent(ctx, h, entries, inR, outW, opts)
		outW.Close()
		inR.Close()
		agentDone <- err
	}()
	var r agentRun
	r.got, r.clientErr = client.run(t, inW, outR)
	inW.Close()
	io.Copy(io.Discard, outR)
	select {
	case r.agentErr = <-agentDone:
	case <-time.After(15 * time.Second):
		t.Fatal("AsAgent did not return")
	}
	return r
}

func TestAsAgentReproducesCaptures(t *testing.T) {
	for _, name := range []string{"hello", "write-allow", "write-deny", "ask-answer", "interrupt", "multi-turn", "mcp-ping", "hook-callback", "initialize", "set-mode", "chain", "rmrf-deny", "big-line"} {
		t.Run(name, func(t *testing.T) {
			c, rec := captureBytes(t, name)
			client := newScriptClient(t, c.in)
			r := runAsAgent(t, rec, client, AgentOptions{})
			if r.clientErr != nil {
				t.Fatalf("client: %v", r.clientErr)
			}
			if r.agentErr != nil {
				t.Fatalf("agent: %v", r.agentErr)
			}
			want := splitLines(c.out)
			if len(r.got) != len(want) {
				t.Fatalf("client got %d lines, the capture has %d", len(r.got), len(want))
			}
			for i := range want {
				w := want[i]
				env, _ := protocol.DecodeEnvelope(w)
				if env.Type == protocol.TypeControlResp && bytes.HasPrefix([]byte(env.ResponseID()), []byte("")) {
					for _, req := range client.requests {
						renv, _ := protocol.DecodeEnvelope(req)
						if renv.RequestID == env.ResponseID() {
							w = bytes.Replace(w, []byte(`"`+renv.RequestID+`"`), []byte(`"client-`+renv.RequestID+`"`), 1)
						}
					}
				}
				if !bytes.Equal(r.got[i], w) {
					t.Errorf("line %d differs:\n got %.200s\nwant %.200s", i+1, r.got[i], w)
				}
			}
		})
	}
}

func mismatch(t *testing.T, err error) *MismatchError {
	t.Helper()
	var m *MismatchError
	if !errors.As(err, &m) {
		t.Fatalf("want a MismatchError, got %v", err)
	}
	if m.ExitCode() == 0 {
		t.Error("a mismatch exits 0")
	}
	return m
}

func TestAsAgentWrongDecision(t *testing.T) {
	c, rec := captureBytes(t, "write-allow")
	client := newScriptClient(t, c.in)
	client.tamper = func(l []byte) []byte {
		return bytes.Replace(l, []byte(`"behavior": "allow", "updatedInput": {"file_path": "/home/user/project/banana.txt", "content": "banana\n"}`), []byte(`"behavior": "deny", "message": "no"`), 1)
	}
	r := runAsAgent(t, rec, client, AgentOptions{})
	m := mismatch(t, r.agentErr)
	msg := m.Error()
	for _, want := range []string{"seq ", "behavior=deny", "behavior=allow", "- .response.response.behavior: \"allow\"", "+ .response.response.behavior: \"deny\""} {
		if !strings.Contains(msg, want) {
			t.Errorf("report lacks %q:\n%s", want, msg)
		}
	}
	if m.Seq == 0 {
		t.Error("no seq")
	}
}

func TestAsAgentWrongTurnText(t *testing.T) {
	c, rec := captureBytes(t, "multi-turn")
	client := newScriptClient(t, c.in)
	client.tamper = func(l []byte) []byte { return bytes.Replace(l, []byte("HELLO two"), []byte("HELLO 2"), 1) }
	r := runAsAgent(t, rec, client, AgentOptions{})
	m := mismatch(t, r.agentErr)
	if !strings.Contains(m.Error(), `"HELLO 2"`) || !strings.Contains(m.Error(), `"HELLO two"`) {
		t.Errorf("report:\n%s", m.Error())
	}
}

func TestAsAgentMissingInput(t *testing.T) {
	c, rec := captureBytes(t, "multi-turn")
	client := newScriptClient(t, c.in)
	client.closeEarly = true
	r := runAsAgent(t, rec, client, AgentOptions{})
	m := mismatch(t, r.agentErr)
	if !strings.Contains(m.Error(), "never came") || !strings.Contains(m.Error(), "closed stdin") {
		t.Errorf("report:\n%s", m.Error())
	}
}

func TestAsAgentMissingInputTimesOut(t *testing.T) {
	c, rec := captureBytes(t, "write-allow")
	client := newScriptClient(t, c.in)
	client.mute = true // never answers, keeps stdin open
	start := time.Now()
	r := runAsAgent(t, rec, client, AgentOptions{Wait: 300 * time.Millisecond})
	m := mismatch(t, r.agentErr)
	if !strings.Contains(m.Error(), "never came within") || time.Since(start) > 5*time.Second {
		t.Errorf("report after %s:\n%s", time.Since(start), m.Error())
	}
}

func TestAsAgentUnexpectedLine(t *testing.T) {
	c, rec := captureBytes(t, "hello")
	client := newScriptClient(t, c.in)
	client.turns = append(client.turns, []byte(`{"type":"user","message":{"role":"user","content":"one more"}}`))
	r := runAsAgent(t, rec, client, AgentOptions{})
	m := mismatch(t, r.agentErr)
	if !strings.Contains(m.Error(), "unexpected user turn") {
		t.Errorf("report:\n%s", m.Error())
	}
}

func TestAsAgentWrongRequestID(t *testing.T) {
	c, rec := captureBytes(t, "write-allow")
	client := newScriptClient(t, c.in)
	client.tamper = func(l []byte) []byte {
		return bytes.Replace(l, []byte(`ee25409c-b461-406a-9d17-8717dbd9e419`), []byte(`made-up-id`), 1)
	}
	r := runAsAgent(t, rec, client, AgentOptions{})
	m := mismatch(t, r.agentErr)
	if !strings.Contains(m.Error(), `"made-up-id"`) {
		t.Errorf("report:\n%s", m.Error())
	}
}

func TestAsAgentRedactedRecordingMatches(t *testing.T) {
	secret := "sk-ant-api03-ZZZZZZZZZZZZZZZZZZZZZZZZ"
	envTok := "env-secret-value-1234"
	c, _ := captureBytes(t, "write-allow")
	in := bytes.Replace(c.in, []byte("please WRITE banana"), []byte("please WRITE banana with "+secret+" and "+envTok), 1)
	red, err := redact.NewRedactor(redact.RedactSpec{Builtin: true, Env: []string{"TOK"}}, func(k string) (string, bool) { return envTok, k == "TOK" })
	if err != nil {
		t.Fatal(err)
	}
	// Record the session through a redacting writer.
	plain := recording.FromCapture(in, c.out, recording.Header{})
	_, entries, _ := recording.ReadAll(bytes.NewReader(plain), "test.rec", nil)
	var buf bytes.Buffer
	w, _ := recording.NewWriter(&buf, recording.Header{}, recording.WriterOptions{Redactor: red})
	for _, e := range entries {
		if e.Dir != protocol.DirMeta {
			w.Tap(e.Dir, e.Msg, 0)
		}
	}
	if bytes.Contains(buf.Bytes(), []byte(secret)) || bytes.Contains(buf.Bytes(), []byte(envTok)) {
		t.Fatal("the secret was recorded")
	}
	// A client sending the real secret still matches; another text does not.
	r := runAsAgent(t, buf.Bytes(), newScriptClient(t, in), AgentOptions{LookupEnv: func(k string) (string, bool) { return envTok, k == "TOK" }})
	if r.agentErr != nil || r.clientErr != nil {
		t.Fatalf("agent: %v; client: %v", r.agentErr, r.clientErr)
	}
	other := bytes.Replace(in, []byte("please WRITE"), []byte("please READ"), 1)
	r = runAsAgent(t, buf.Bytes(), newScriptClient(t, other), AgentOptions{})
	mismatch(t, r.agentErr)
}

func TestAsAgentExitCodeAndStderr(t *testing.T) {
	var buf bytes.Buffer
	w, _ := recording.NewWriter(&buf, recording.Header{}, recording.WriterOptions{})
	w.Tap(protocol.DirIn, []byte(`{"type":"user","message":{"role":"user","content":"hi"}}`), 0)
	w.Tap(protocol.DirErr, []byte(`warning: something`), 0)
	w.Tap(protocol.DirOut, []byte(`{"type":"result","subtype":"error_max_turns","is_error":true}`), 0)
	w.Tap(protocol.DirEvent, []byte(`{"type":"agentjq","subtype":"exit","code":1,"outcome":"error","agent_exit":1}`), 0)
	var stderr bytes.Buffer
	client := &scriptClient{turns: [][]byte{[]byte(`{"type":"user","message":{"role":"user","content":"hi"}}`)}, answers: map[string][]byte{}}
	r := runAsAgent(t, buf.Bytes(), client, AgentOptions{Stderr: &stderr})
	var ee *ExitError
	if !errors.As(r.agentErr, &ee) || ee.ExitCode() != 1 {
		t.Errorf("err = %v", r.agentErr)
	}
	if stderr.String() != "warning: something\n" {
		t.Errorf("stderr %q", stderr.String())
	}
}

func TestAsAgentInjectedExit(t *testing.T) {
	c, rec := captureBytes(t, "hello")
	f, _ := ParseFault("exit@result:3")
	r := runAsAgent(t, rec, newScriptClient(t, c.in), AgentOptions{Faults: []Fault{f}})
	var ee *ExitError
	if !errors.As(r.agentErr, &ee) || ee.Code != 3 {
		t.Errorf("err = %v", r.agentErr)
	}
	for _, l := range r.got {
		if bytes.Contains(l, []byte(`"type":"result"`)) {
			t.Error("the result was written before the injected exit")
		}
	}
}
