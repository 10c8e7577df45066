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
//	term-at-eof        echo-turns, then at stdin's end die of SIGTERM (what a client that
//	                   signals the agent's whole process tree does to an idle agent)
//	bigline:N          write an N-byte assistant line and a result
//	ticker:N:EVERY     write N time-stamped lines EVERY apart, then a result
//	secret-corpus      write the secrets corpus (corpus.go) everywhere a session carries text
//	secret-file:PATH   the same with the secrets of a corpus file (LoadCorpus) and a 5 MiB line
//	init-account       answer initialize with an account email and organization, then echo-turns
//	mcp-server         be a stdio MCP server (internal/testkit/mcptest), not an agent
//	ignore-interrupt   a result per user turn, except for a turn holding HANG, which gets
//	                   none: an interrupt is answered but ends nothing, SIGTERM is ignored
//	guard-orders       read a turn; for call toolu_a send the guard's hook_callback "ha" then
//	                   can_use_tool "pa", for toolu_b "pb" then "hb", for toolu_c only "pc" (each
//	                   a Bash git push, each answer awaited); then a result per turn
//	ask-deny           read a turn, ask can_use_tool "req-1" (Bash rm -rf /tmp/x), wait for
//	                   the answer (none at EOF: "STDIN CLOSED WHILE req-1 PENDING", exit 1),
//	                   then a result per turn until EOF
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
//	ask-quietly        answer initialize, read a turn, ask can_use_tool "quiet1" (a Bash ls) and
//	                   write nothing until the answer comes, then a result per turn
//	withdraw           answer initialize, read a turn, ask can_use_tool "wd1", wait until the file
//	                   $AGENTJQ_FAKE_WAIT_FILE exists (the approver is deciding), withdraw "wd1" with
//	                   control_cancel_request, ask can_use_tool "wd2", and after its answer write a
//	                   result; then a result per turn
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
	f := &fake{in: bufio.NewReaderSize(os.Stdin, 1<<20), out: os.Stdout, logf: logf}
	run := scenarios[scenario]
	for _, p := range prefixScenarios {
		if strings.HasPrefix(scenario, p.prefix) {
			run = p.run
		}
	}
	if run == nil {
		fmt.Fprintln(os.Stderr, "fake agent: unknown scenario", scenario)
		return 2
	}
	return run(f, scenario)
}

// fake is one run of a scenario: the client's stdin, the agent's stdout
// and the log of what came in.
type fake struct {
	in   *bufio.Reader
	out  *os.File
	logf io.Writer
}

func (f *fake) readLine() ([]byte, bool) {
	line, err := f.in.ReadBytes('\n')
	if len(line) > 0 {
		fmt.Fprintf(f.logf, "IN %s", line)
		if line[len(line)-1] != '\n' {
			fmt.Fprintln(f.logf)
		}
		return bytes.TrimSuffix(line, []byte("\n")), true
	}
	_ = err
	fmt.Fprintln(f.logf, "EOF")
	return nil, false
}

// waitResponse reads stdin until the control_response for id.
func (f *fake) waitResponse(id string) bool {
	for {
		line, ok := f.readLine()
		if !ok {
			fmt.Fprintf(f.logf, "STDIN CLOSED WHILE %s PENDING\n", id)
			return false
		}
		if m, ok := parseMessage(line); ok && m.Type == "control_response" && m.Response.RequestID == id {
			return true
		}
	}
}

// resultPerTurn writes a success result for every user turn until stdin
// ends.
func (f *fake) resultPerTurn() int {
	for {
		line, ok := f.readLine()
		if !ok {
			return 0
		}
		if bytes.Contains(line, []byte(`"type":"user"`)) {
			fmt.Fprintln(f.out, `{"type":"result","subtype":"success","is_error":false,"result":"got turn","num_turns":1}`)
		}
	}
}

// scenarios run by their whole name; prefixScenarios by a prefix that
// carries their argument (stderr-flood:N).
var scenarios map[string]func(*fake, string) int

var prefixScenarios []struct {
	prefix string
	run    func(*fake, string) int
}

func init() {
	scenarios = map[string]func(*fake, string) int{
		"no-read":           runNoRead,
		"no-init":           runNoInit,
		"setsid-child":      runSetsidChild,
		"garbage":           runGarbage,
		"numeric-id":        runNumericId,
		"ask-quietly":       runAskQuietly,
		"withdraw":          runAskQuietly,
		"deep-request":      runDeepRequest,
		"ignore-interrupt":  runIgnoreInterrupt,
		"ask-deny":          runAskDeny,
		"guard-orders":      runGuardOrders,
		"mcp-server":        runMcpServer,
		"flood":             runFlood,
		"secret-corpus":     runSecretCorpus,
		"secrets":           runSecrets,
		"init-account":      runInitAccount,
		"unknown-subtype":   runUnknownSubtype,
		"echo-turns":        runEchoTurns,
		"interruptible":     runInterruptible,
		"ignore-everything": runIgnoreEverything,
		"grandchild":        runGrandchild,
		"crash":             runCrash,
		"term-at-eof":       runTermAtEOF,
	}
	prefixScenarios = []struct {
		prefix string
		run    func(*fake, string) int
	}{
		{"secret-file:", runSecretFile},
		{"stderr-flood:", runStderrFlood},
		{"ask-while-talking:", runAskWhileTalking},
		{"capture:", runCapture},
		{"ticker:", runTicker},
		{"burst-exit:", runBurstExit},
		{"bigline:", runBigline},
	}
}

func runNoRead(f *fake, _ string) int {
	readLine, out := f.readLine, f.out
	signal.Ignore(syscall.SIGTERM)
	readLine()
	fmt.Fprintln(out, `{"type":"system","subtype":"init","session_id":"s1"}`)
	if os.Getenv("AGENTJQ_FAKE_STDERR_NOISE") != "" {
		// More than a pipe holds: a stderr nobody reads blocks here.
		os.Stderr.Write(bytes.Repeat([]byte("noise on stderr\n"), 1<<16))
	}
	time.Sleep(time.Hour)
	return 0
}

func runNoInit(f *fake, _ string) int {
	resultPerTurn := f.resultPerTurn
	return resultPerTurn()
}

func runStderrFlood(f *fake, scenario string) int {
	resultPerTurn := f.resultPerTurn
	var n int
	fmt.Sscan(strings.TrimPrefix(scenario, "stderr-flood:"), &n)
	line := strings.Repeat("e", 99) + "\n"
	w := bufio.NewWriterSize(os.Stderr, 64<<10)
	for written := 0; written < n; written += len(line) {
		w.WriteString(line)
	}
	w.Flush()
	return resultPerTurn()
}

func runSetsidChild(f *fake, _ string) int {
	resultPerTurn, logf := f.resultPerTurn, f.logf
	cmd := exec.Command("sleep", "60")
	cmd.Stdout = os.Stdout
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return 2
	}
	fmt.Fprintf(logf, "CHILD %d\n", cmd.Process.Pid)
	return resultPerTurn()
}

func runGarbage(f *fake, _ string) int {
	readLine, resultPerTurn, out := f.readLine, f.resultPerTurn, f.out
	readLine()
	out.Write([]byte("not json at all\n\x00\xff\xfe binary\n[1,2,3]\n\"a string\"\n" +
		`{"type":"assistant","message":` + "\n" + "{}\n" + strings.Repeat("junk", 256<<10) + "\n" +
		`{"type":"result","subtype":"success","is_error":false,"num_turns":1}` + "\n"))
	return resultPerTurn()
}

func runNumericId(f *fake, _ string) int {
	readLine, resultPerTurn, out := f.readLine, f.resultPerTurn, f.out
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
}

func runAskWhileTalking(f *fake, scenario string) int {
	readLine, waitResponse, resultPerTurn, out := f.readLine, f.waitResponse, f.resultPerTurn, f.out
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
}

func runAskQuietly(f *fake, scenario string) int {
	readLine, waitResponse, resultPerTurn, out := f.readLine, f.waitResponse, f.resultPerTurn, f.out
	first, ok := readLine()
	if m, _ := parseMessage(first); ok && m.Request.Subtype == "initialize" {
		fmt.Fprintf(out, `{"type":"control_response","response":{"subtype":"success","request_id":%q,"response":{}}}`+"\n", m.RequestID)
		readLine() // the turn
	}
	fmt.Fprintln(out, `{"type":"system","subtype":"init","session_id":"q1","claude_code_version":"2.1.332","tools":["Bash"],"permissionMode":"default"}`)
	ask := func(id string) {
		fmt.Fprintf(out, `{"type":"control_request","request_id":%q,"request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"ls"},"tool_use_id":"toolu_%s"}}`+"\n", id, id)
	}
	if scenario == "ask-quietly" {
		ask("quiet1")
		if !waitResponse("quiet1") {
			return 1
		}
	} else {
		ask("wd1")
		wait, until := os.Getenv("AGENTJQ_FAKE_WAIT_FILE"), time.Now().Add(time.Minute)
		for wait != "" && time.Now().Before(until) {
			if _, err := os.Stat(wait); err == nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		fmt.Fprintln(out, `{"type":"control_cancel_request","request_id":"wd1"}`)
		ask("wd2")
		if !waitResponse("wd2") {
			return 1
		}
	}
	fmt.Fprintln(out, `{"type":"result","subtype":"success","is_error":false,"result":"done","num_turns":1,"session_id":"q1"}`)
	return resultPerTurn()
}

func runDeepRequest(f *fake, _ string) int {
	readLine, waitResponse, resultPerTurn, out := f.readLine, f.waitResponse, f.resultPerTurn, f.out
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
}

func runIgnoreInterrupt(f *fake, _ string) int {
	readLine, out := f.readLine, f.out
	signal.Ignore(syscall.SIGTERM)
	fmt.Fprintln(out, `{"type":"system","subtype":"init","session_id":"s1","claude_code_version":"2.1.328","permissionMode":"default"}`)
	for {
		line, ok := readLine()
		if !ok {
			return 0
		}
		m, _ := parseMessage(line)
		switch {
		case m.Type == "control_request":
			fmt.Fprintf(out, `{"type":"control_response","response":{"subtype":"success","request_id":%q,"response":{}}}`+"\n", m.RequestID)
		case m.Type == "user" && !bytes.Contains(line, []byte("HANG")):
			fmt.Fprintln(out, `{"type":"result","subtype":"success","is_error":false,"stop_reason":"end_turn","result":"got turn","num_turns":1,"session_id":"s1"}`)
		}
	}
}

func runAskDeny(f *fake, _ string) int {
	readLine, waitResponse, resultPerTurn, out := f.readLine, f.waitResponse, f.resultPerTurn, f.out
	readLine()
	fmt.Fprintln(out, `{"type":"control_request","request_id":"req-1","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"rm -rf /tmp/x"},"tool_use_id":"toolu_req1"}}`)
	if !waitResponse("req-1") {
		return 1
	}
	fmt.Fprintln(out, `{"type":"result","subtype":"success","is_error":false,"num_turns":1}`)
	return resultPerTurn()
}

func runGuardOrders(f *fake, _ string) int {
	hook := func(id, call string) string {
		return `{"type":"control_request","request_id":"` + id + `","request":{"subtype":"hook_callback","callback_id":"agentjq_guard","input":{"session_id":"s1","cwd":"/tmp","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"git push"},"tool_use_id":"` + call + `"},"tool_use_id":"` + call + `"}}`
	}
	perm := func(id, call string) string {
		return `{"type":"control_request","request_id":"` + id + `","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"git push"},"tool_use_id":"` + call + `"}}`
	}
	f.readLine()
	for _, step := range [][2]string{
		{"ha", hook("ha", "toolu_a")}, {"pa", perm("pa", "toolu_a")},
		{"pb", perm("pb", "toolu_b")}, {"hb", hook("hb", "toolu_b")},
		{"pc", perm("pc", "toolu_c")},
	} {
		fmt.Fprintln(f.out, step[1])
		if !f.waitResponse(step[0]) {
			return 1
		}
	}
	fmt.Fprintln(f.out, `{"type":"result","subtype":"success","is_error":false,"num_turns":1}`)
	return f.resultPerTurn()
}

func runMcpServer(f *fake, _ string) int {
	return mcptest.Main()
}

func runFlood(f *fake, _ string) int {
	out := f.out
	// Events as fast as stdout takes them, until it does not.
	bw := bufio.NewWriterSize(out, 256<<10)
	pad := strings.Repeat(`lorem ipsum \"dolor\" sit amet\n `, 60) // JSON-escaped
	for i := 0; ; i++ {
		if _, err := fmt.Fprintf(bw, `{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"%d %s"}},"session_id":"flood"}`+"\n", i, pad); err != nil {
			return 0
		}
	}
}

func runSecretCorpus(f *fake, _ string) int {
	readLine, waitResponse, out := f.readLine, f.waitResponse, f.out
	return secretCorpus(out, readLine, waitResponse)
}

func runSecrets(f *fake, _ string) int {
	out := f.out
	// SecretsStream in one write: the bridge validates it in one
	// chunk, on its workers, ahead of the line that names the account.
	out.Write([]byte(SecretsStream()))
	return 0
}

func runInitAccount(f *fake, _ string) int {
	readLine, out := f.readLine, f.out
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
}

func runCapture(f *fake, scenario string) int {
	readLine, waitResponse, out := f.readLine, f.waitResponse, f.out
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
}

func runUnknownSubtype(f *fake, _ string) int {
	readLine, waitResponse, out := f.readLine, f.waitResponse, f.out
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
}

func runEchoTurns(f *fake, _ string) int {
	readLine, out := f.readLine, f.out
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
}

func runInterruptible(f *fake, _ string) int {
	readLine, out := f.readLine, f.out
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
}

func runIgnoreEverything(f *fake, _ string) int {
	readLine, out := f.readLine, f.out
	// Reads its turn and then never answers nor exits on EOF.
	readLine()
	fmt.Fprintln(out, `{"type":"system","subtype":"init","session_id":"s1"}`)
	time.Sleep(time.Hour)
	return 0
}

func runGrandchild(f *fake, _ string) int {
	readLine, out, logf := f.readLine, f.out, f.logf
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
}

func runTermAtEOF(f *fake, sc string) int {
	runEchoTurns(f, sc)
	signal.Reset(syscall.SIGTERM)
	syscall.Kill(os.Getpid(), syscall.SIGTERM)
	time.Sleep(10 * time.Second)
	return 1
}

func runCrash(f *fake, _ string) int {
	readLine, out := f.readLine, f.out
	readLine()
	fmt.Fprintln(out, `{"type":"system","subtype":"init","session_id":"s1","claude_code_version":"9.9.9"}`)
	fmt.Fprintln(os.Stderr, "fatal: the fake agent fell over")
	return 3
}

func runTicker(f *fake, scenario string) int {
	readLine, out := f.readLine, f.out
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
}

func runBurstExit(f *fake, scenario string) int {
	readLine, out := f.readLine, f.out
	// burst-exit:N[:SIZE] writes N lines of about SIZE bytes (1000)
	// and a result in one burst, more than a pipe holds, and exits
	// without waiting for its stdin to end.
	var n int
	size := 1000
	parts := strings.Split(strings.TrimPrefix(scenario, "burst-exit:"), ":")
	fmt.Sscan(parts[0], &n)
	if len(parts) > 1 {
		fmt.Sscan(parts[1], &size)
	}
	readLine()
	w := bufio.NewWriterSize(out, 1<<20)
	pad := strings.Repeat("x", size)
	for i := 0; i < n; i++ {
		fmt.Fprintf(w, `{"type":"assistant","n":%d,"message":{"content":[{"type":"text","text":"%s"}]}}`+"\n", i, pad)
	}
	w.WriteString(`{"type":"result","subtype":"success","is_error":false,"num_turns":1}` + "\n")
	w.Flush()
	return 0
}

func runBigline(f *fake, scenario string) int {
	readLine, out := f.readLine, f.out
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

func runSecretFile(f *fake, scenario string) int {
	secrets, err := LoadCorpus(strings.TrimPrefix(scenario, "secret-file:"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return secretCorpusOf(secrets, 5<<20, f.out, f.readLine, f.waitResponse)
}
