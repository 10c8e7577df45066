// Package fakeagent is a scripted stand-in for an agent CLI, for tests. A
// test binary calls Main from TestMain when AGENTJQ_FAKE_AGENT is set, and
// points spawn at itself: os.Args[0] with that variable in the environment.
//
// Scenarios:
//
//	capture:NAME       play fixtures capture NAME.out, waiting for the answer to each control request
//	unknown-subtype    send a control request of an unknown subtype
//	echo-turns         one success result per user turn
//	interruptible      wait for an interrupt control request, then an aborted result
//	ignore-everything  read one turn, then hang
//	grandchild         leave a grandchild holding stdout, then exit
//	crash              exit 3 with a message on stderr
//	bigline:N          write an N-byte assistant line and a result
//	ticker:N:EVERY     write N time-stamped lines EVERY apart, then a result
//	secret-corpus      write the secrets corpus (corpus.go) everywhere a session carries text
//	secret-file:PATH   the same with the secrets of a corpus file (LoadCorpus) and a 5 MiB line
//	init-account       answer initialize with an account email and organization, then echo-turns
//	mcp-server         be a stdio MCP server (internal/testkit/mcptest), not an agent
//
// Fault agents, for the fault suite:
//
//	no-read            read one turn, then never read stdin again, ignore SIGTERM, never exit
//	                   (with AGENTJQ_FAKE_STDERR_NOISE set, first write 1 MiB on stderr)
//	no-init            answer user turns, never a control request (initialize included)
//	stderr-flood:N     write N bytes on stderr, then a result per turn
//	setsid-child       start a child in a session of its own holding stdout, then a result per turn
//	garbage            write lines that are not JSON objects (binary, arrays, cut-off
//	                   objects, a long line of junk), then a result per turn
//	numeric-id         ask can_use_tool under the number 7 as request_id, then a result
//	ask-while-talking:N  answer initialize, read a turn, write N assistant lines and ask can_use_tool "talk1" (a
//	                   Write) at once, write an assistant line every 10ms until the answer
//	                   comes, then a result; the texts say "view line before|during|after"
//	deep-request       ask can_use_tool "deep1" with an input nested 10001 deep (valid JSON
//	                   deeper than the scanner reads), then a PreToolUse hook_callback "deep2"
//	                   as deep, then end the turn with a result as deep
//
// AGENTJQ_FAKE_LOG names a file that receives every stdin line ("IN ..."),
// the agent's pid ("PID n") and any child's ("CHILD n").
package fakeagent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/agentjq/agentjq/fixtures"
	"github.com/agentjq/agentjq/internal/testkit/mcptest"
)

// Scenario is the environment variable that selects the scenario.
const Scenario = "AGENTJQ_FAKE_AGENT"

// Log is the environment variable naming the log file.
const Log = "AGENTJQ_FAKE_LOG"

// Main plays scenario on the process's stdio and returns the exit code.
func Main(scenario string) int {
	logPath := os.Getenv(Log)
	var logf io.Writer = io.Discard
	if logPath != "" {
		f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err == nil {
			defer f.Close()
			logf = f
		}
	}
	fmt.Fprintf(logf, "PID %d\n", os.Getpid())
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := os.Stdout
	readLine := func() ([]byte, bool) {
		line, err := in.ReadBytes('\n')
		if len(line) > 0 {
			fmt.Fprintf(logf, "IN %s", line)
			if line[len(line)-1] != '\n' {
				fmt.Fprintln(logf)
			}
			return bytes.TrimSuffix(line, []byte("\n")), true
		}
		_ = err
		fmt.Fprintln(logf, "EOF")
		return nil, false
	}
	// waitResponse reads stdin until the control_response for id.
	waitResponse := func(id string) bool {
		for {
			line, ok := readLine()
			if !ok {
				fmt.Fprintf(logf, "STDIN CLOSED WHILE %s PENDING\n", id)
				return false
			}
			if m, ok := parseMessage(line); ok && m.Type == "control_response" && m.Response.RequestID == id {
				return true
			}
		}
	}
	// resultPerTurn writes a success result for every user turn until
	// stdin ends.
	resultPerTurn := func() int {
		for {
			line, ok := readLine()
			if !ok {
				return 0
			}
			if bytes.Contains(line, []byte(`"type":"user"`)) {
				fmt.Fprintln(out, `{"type":"result","subtype":"success","is_error":false,"result":"got turn","num_turns":1}`)
			}
		}
	}
	switch {
	case scenario == "no-read":
		signal.Ignore(syscall.SIGTERM)
		readLine()
		fmt.Fprintln(out, `{"type":"system","subtype":"init","session_id":"s1"}`)
		if os.Getenv("AGENTJQ_FAKE_STDERR_NOISE") != "" {
			// More than a pipe holds: a stderr nobody reads blocks here.
			os.Stderr.Write(bytes.Repeat([]byte("noise on stderr\n"), 1<<16))
		}
		time.Sleep(time.Hour)
		return 0
	case scenario == "no-init":
		return resultPerTurn()
	case strings.HasPrefix(scenario, "stderr-flood:"):
		var n int
		fmt.Sscan(strings.TrimPrefix(scenario, "stderr-flood:"), &n)
		line := strings.Repeat("e", 99) + "\n"
		w := bufio.NewWriterSize(os.Stderr, 64<<10)
		for written := 0; written < n; written += len(line) {
			w.WriteString(line)
		}
		w.Flush()
		return resultPerTurn()
	case scenario == "setsid-child":
		cmd := exec.Command("sleep", "60")
		cmd.Stdout = os.Stdout
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			return 2
		}
		fmt.Fprintf(logf, "CHILD %d\n", cmd.Process.Pid)
		return resultPerTurn()
	case scenario == "garbage":
		readLine()
		out.Write([]byte("not json at all\n\x00\xff\xfe binary\n[1,2,3]\n\"a string\"\n" +
			`{"type":"assistant","message":` + "\n" + "{}\n" + strings.Repeat("junk", 256<<10) + "\n" +
			`{"type":"result","subtype":"success","is_error":false,"num_turns":1}` + "\n"))
		return resultPerTurn()
	case scenario == "numeric-id":
		readLine()
		fmt.Fprintln(out, `{"type":"control_request","request_id":7,"request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"ls"},"tool_use_id":"toolu_n1"}}`)
		for {
			line, ok := readLine()
			if !ok {
				return 1
			}
			if bytes.Contains(line, []byte(`"control_response"`)) {
				break
			}
		}
		fmt.Fprintln(out, `{"type":"result","subtype":"success","is_error":false,"num_turns":1}`)
		return resultPerTurn()
	case strings.HasPrefix(scenario, "ask-while-talking:"):
		var n int
		fmt.Sscan(strings.TrimPrefix(scenario, "ask-while-talking:"), &n)
		if first, ok := readLine(); ok && bytes.Contains(first, []byte(`"subtype":"initialize"`)) {
			m, _ := parseMessage(first)
			fmt.Fprintf(out, `{"type":"control_response","response":{"subtype":"success","request_id":%q,"response":{}}}`+"\n", m.RequestID)
			readLine() // the turn
		}
		text := func(w io.Writer, s string) {
			fmt.Fprintf(w, `{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":%q}]},"session_id":"talk"}`+"\n", s)
		}
		bw := bufio.NewWriterSize(out, 1<<20)
		fmt.Fprintln(bw, `{"type":"system","subtype":"init","session_id":"talk","claude_code_version":"2.1.328","cwd":"/tmp","model":"fake","tools":["Write"],"permissionMode":"default"}`)
		for i := range n {
			text(bw, fmt.Sprintf("view line before %d", i))
		}
		fmt.Fprintln(bw, `{"type":"control_request","request_id":"talk1","request":{"subtype":"can_use_tool","tool_name":"Write","input":{"file_path":"banana.txt","content":"banana\n"},"tool_use_id":"toolu_talk1"}}`)
		bw.Flush()
		stop, stopped := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(stopped)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				case <-time.After(10 * time.Millisecond):
					text(out, fmt.Sprintf("view line during %d", i))
				}
			}
		}()
		answered := waitResponse("talk1")
		close(stop)
		<-stopped
		if !answered {
			return 1
		}
		text(out, "view line after")
		fmt.Fprintln(out, `{"type":"result","subtype":"success","is_error":false,"result":"done","num_turns":1,"session_id":"talk"}`)
		return resultPerTurn()
	case scenario == "deep-request":
		readLine()
		deep := strings.Repeat("[", 10001) + strings.Repeat("]", 10001)
		fmt.Fprintln(out, `{"type":"control_request","request_id":"deep1","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"ls","x":`+deep+`},"tool_use_id":"toolu_deep1"}}`)
		if !waitResponse("deep1") {
			return 1
		}
		fmt.Fprintln(out, `{"type":"control_request","request_id":"deep2","request":{"subtype":"hook_callback","callback_id":"agentjq_guard","input":{"hook_event_name":"PreToolUse","tool_name":"mcp__x__y","tool_input":{"x":`+deep+`},"tool_use_id":"toolu_deep2"},"tool_use_id":"toolu_deep2"}}`)
		if !waitResponse("deep2") {
			return 1
		}
		fmt.Fprintln(out, `{"type":"result","subtype":"success","is_error":false,"num_turns":1,"structured_output":`+deep+`}`)
		return resultPerTurn()
	case scenario == "mcp-server":
		return mcptest.Main()
	case scenario == "flood":
		// Events as fast as stdout takes them, until it does not.
		bw := bufio.NewWriterSize(out, 256<<10)
		pad := strings.Repeat(`lorem ipsum \"dolor\" sit amet\n `, 60) // JSON-escaped
		for i := 0; ; i++ {
			if _, err := fmt.Fprintf(bw, `{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"%d %s"}},"session_id":"flood"}`+"\n", i, pad); err != nil {
				return 0
			}
		}
	case scenario == "secret-corpus":
		return secretCorpus(out, readLine, waitResponse)
	case strings.HasPrefix(scenario, "secret-file:"):
		secrets, err := LoadCorpus(strings.TrimPrefix(scenario, "secret-file:"))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return secretCorpusOf(secrets, 5<<20, out, readLine, waitResponse)
	case scenario == "secrets":
		// SecretsStream in one write: the bridge validates it in one
		// chunk, on its workers, ahead of the line that names the account.
		out.Write([]byte(SecretsStream()))
		return 0
	case scenario == "init-account":
		for {
			line, ok := readLine()
			if !ok {
				return 0
			}
			m, _ := parseMessage(line)
			switch {
			case m.Type == "control_request" && m.Request.Subtype == "initialize":
				fmt.Fprintf(out, `{"type":"control_response","response":{"subtype":"success","request_id":%q,"response":{"commands":[],"models":[{"value":"default"}],"account":{"email":"alice@example.com","organization":"Acme Widgets Ltd","tokenSource":"none"},"pid":42}}}`+"\n", m.RequestID)
			case m.Type == "user":
				fmt.Fprintln(out, `{"type":"result","subtype":"success","is_error":false,"result":"got turn","num_turns":1}`)
			}
		}
	case strings.HasPrefix(scenario, "capture:"):
		name := strings.TrimPrefix(scenario, "capture:")
		data, err := fixtures.Capture(name, "out")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		first, ok := readLine()
		if !ok {
			return 0
		}
		// A client's own initialize is answered under its request id
		// (the capture's client used "init-1").
		initReq, _ := parseMessage(first)
		lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
		for _, line := range lines {
			if initReq.Request.Subtype == "initialize" && initReq.RequestID != "init-1" {
				line = bytes.Replace(line, []byte(`"request_id":"init-1"`), []byte(`"request_id":"`+initReq.RequestID+`"`), 1)
			}
			out.Write(append(line, '\n'))
			m, _ := parseMessage(line)
			if m.Type == "control_request" && bytes.Contains(line, []byte(`"request":{"subtype":"`)) {
				if !waitResponse(m.RequestID) {
					return 1
				}
			}
		}
		// Like the CLI: finish when stdin closes.
		for {
			if _, ok := readLine(); !ok {
				return 0
			}
		}
	case scenario == "unknown-subtype":
		readLine()
		fmt.Fprintln(out, `{"type":"control_request","request_id":"x-1","request":{"subtype":"brand_new_thing","payload":1}}`)
		if !waitResponse("x-1") {
			return 1
		}
		fmt.Fprintln(out, `{"type":"result","subtype":"success","is_error":false,"result":"ok","num_turns":1}`)
		for {
			if _, ok := readLine(); !ok {
				return 0
			}
		}
	case scenario == "echo-turns":
		// One result per turn, echoing what arrived.
		for {
			line, ok := readLine()
			if !ok {
				return 0
			}
			var m map[string]any
			if json.Unmarshal(line, &m) != nil {
				fmt.Fprintln(os.Stderr, "fake: bad JSON on stdin")
				return 1
			}
			if m["type"] == "user" {
				b, _ := json.Marshal(map[string]any{"type": "result", "subtype": "success", "is_error": false, "result": "got turn", "num_turns": 1})
				fmt.Fprintf(out, "%s\n", b)
			}
		}
	case scenario == "interruptible":
		readLine()
		fmt.Fprintln(out, `{"type":"system","subtype":"init","session_id":"s1","claude_code_version":"2.1.328"}`)
		for {
			line, ok := readLine()
			if !ok {
				return 0
			}
			if bytes.Contains(line, []byte(`"interrupt"`)) {
				m, _ := parseMessage(line)
				fmt.Fprintf(out, `{"type":"control_response","response":{"subtype":"success","request_id":%q,"response":{"still_queued":[]}}}`+"\n", m.RequestID)
				fmt.Fprintln(out, `{"type":"result","subtype":"error_during_execution","is_error":true,"num_turns":1,"terminal_reason":"aborted_tools"}`)
			}
		}
	case scenario == "ignore-everything":
		// Reads its turn and then never answers nor exits on EOF.
		readLine()
		fmt.Fprintln(out, `{"type":"system","subtype":"init","session_id":"s1"}`)
		time.Sleep(time.Hour)
		return 0
	case scenario == "grandchild":
		// A grandchild inherits stdout and outlives the agent.
		readLine()
		cmd := exec.Command("sleep", "60")
		cmd.Stdout = os.Stdout
		if err := cmd.Start(); err != nil {
			return 2
		}
		fmt.Fprintf(logf, "GRANDCHILD %d\n", cmd.Process.Pid)
		fmt.Fprintln(out, `{"type":"result","subtype":"success","is_error":false,"num_turns":1}`)
		return 0
	case scenario == "crash":
		readLine()
		fmt.Fprintln(out, `{"type":"system","subtype":"init","session_id":"s1","claude_code_version":"9.9.9"}`)
		fmt.Fprintln(os.Stderr, "fatal: the fake agent fell over")
		return 3
	case strings.HasPrefix(scenario, "ticker:"):
		// ticker:N:INTERVAL writes N lines, each stamped with the time it
		// was written, INTERVAL apart, then a result.
		var n int
		var every time.Duration
		parts := strings.Split(strings.TrimPrefix(scenario, "ticker:"), ":")
		fmt.Sscan(parts[0], &n)
		if len(parts) > 1 {
			every, _ = time.ParseDuration(parts[1])
		}
		readLine()
		for i := 0; i < n; i++ {
			fmt.Fprintf(out, `{"type":"assistant","t":%d,"message":{"content":[{"type":"text","text":"tick %d"}]}}`+"\n", time.Now().UnixNano(), i)
			time.Sleep(every)
		}
		fmt.Fprintln(out, `{"type":"result","subtype":"success","is_error":false,"num_turns":1}`)
		for {
			if _, ok := readLine(); !ok {
				return 0
			}
		}
	case strings.HasPrefix(scenario, "burst-exit:"):
		// burst-exit:N writes N lines of about 1 KiB and a result in one
		// burst, more than a pipe holds, and exits without waiting for
		// its stdin to end.
		var n int
		fmt.Sscan(strings.TrimPrefix(scenario, "burst-exit:"), &n)
		readLine()
		w := bufio.NewWriterSize(out, 1<<20)
		pad := strings.Repeat("x", 1000)
		for i := 0; i < n; i++ {
			fmt.Fprintf(w, `{"type":"assistant","n":%d,"message":{"content":[{"type":"text","text":"%s"}]}}`+"\n", i, pad)
		}
		w.WriteString(`{"type":"result","subtype":"success","is_error":false,"num_turns":1}` + "\n")
		w.Flush()
		return 0
	case strings.HasPrefix(scenario, "bigline:"):
		var n int
		fmt.Sscan(strings.TrimPrefix(scenario, "bigline:"), &n)
		readLine()
		w := bufio.NewWriterSize(out, 1<<20)
		w.WriteString(`{"type":"assistant","message":{"content":[{"type":"text","text":"`)
		chunk := strings.Repeat("abcdefghij", 1024)
		for written := 0; written < n; written += len(chunk) {
			w.WriteString(chunk)
		}
		w.WriteString(`"}]}}` + "\n")
		w.WriteString(`{"type":"result","subtype":"success","is_error":false,"num_turns":1}` + "\n")
		w.Flush()
		for {
			if _, ok := readLine(); !ok {
				return 0
			}
		}
	}
	fmt.Fprintln(os.Stderr, "fake agent: unknown scenario", scenario)
	return 2
}

// The secrets of the "secrets" scenario: a recording must hold none of
// them.
var Secrets = []string{
	"alice@example.com", "Acme Widgets Ltd",
	"sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_-abcdEFGH",
	"AKIAIOSFODNN7EXAMPLE", "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
	"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl",
}

// SecretsStream is what the "secrets" scenario writes: an initialize
// response naming the account, 40 KB of plain events, and then the
// secrets in tool inputs, tool results (one hidden by a \u escape) and
// text, the account's email and organization among them.
func SecretsStream() string {
	s := Secrets
	var b strings.Builder
	b.WriteString(`{"type":"control_response","response":{"subtype":"success","request_id":"init-x","response":{"account":{"email":"` + s[0] + `","organization":"` + s[1] + `"}}}}` + "\n")
	for i := range 400 {
		fmt.Fprintf(&b, `{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"filler %03d of a long and harmless stream"}}}`+"\n", i)
	}
	b.WriteString(`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"curl -H 'x-api-key: ` + s[2] + `' https://api && export AWS=` + s[3] + `"}}]}}` + "\n")
	b.WriteString(`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"GITHUB=` + s[4] + `\nmail ` + s[0] + ` of ` + s[1] + `\n\u0041KIAIOSFODNN7EXAMPLE"}]}}` + "\n")
	b.WriteString(`{"type":"assistant","message":{"content":[{"type":"text","text":"Authorization: Bearer ` + s[5] + `"}]}}` + "\n")
	b.WriteString(`{"type":"result","subtype":"success","is_error":false,"result":"done","num_turns":1}` + "\n")
	return b.String()
}

// message is the part of a client's line the fake agent acts on.
type message struct {
	Type      string `json:"type"`
	RequestID string `json:"request_id"`
	Request   struct {
		Subtype string `json:"subtype"`
	} `json:"request"`
	Response struct {
		RequestID string `json:"request_id"`
	} `json:"response"`
}

// parseMessage reads line as a message; ok is false when it is not JSON.
func parseMessage(line []byte) (m message, ok bool) {
	err := json.Unmarshal(line, &m)
	return m, err == nil
}
