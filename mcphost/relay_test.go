package mcphost_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentjq/agentjq/internal/syncio"
	"github.com/agentjq/agentjq/internal/testkit/fakeagent"
	"github.com/agentjq/agentjq/internal/testkit/livetest"
	"github.com/agentjq/agentjq/internal/testkit/mcptest"
	"github.com/agentjq/agentjq/mcphost"
)

func TestMain(m *testing.M) {
	if sc := os.Getenv(fakeagent.Scenario); sc != "" {
		os.Exit(fakeagent.Main(sc))
	}
	if os.Getenv(mcptest.Env) == "1" {
		os.Exit(mcptest.Main())
	}
	os.Exit(m.Run())
}

// serverCommand runs this test binary as the test MCP server.
func serverCommand() string {
	return mcptest.Env + "=1 exec " + strconv.Quote(os.Args[0])
}

// alive reports whether pid is a live (not zombie) process.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && len(s) > i+2 {
		return s[i+2] != 'Z'
	}
	return true
}

// pidsIn reads the pids the test server wrote.
func pidsIn(t *testing.T, path string) []int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, _ := os.ReadFile(path)
		var pids []int
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				pids = append(pids, n)
			}
		}
		if len(pids) == 2 {
			return pids
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server wrote no pids to %s: %q", path, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitStderr waits until the relay's stderr holds s.
func waitStderr(t *testing.T, errb *syncio.Buffer, s string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(errb.String(), s) {
		if time.Now().After(deadline) {
			t.Errorf("stderr never showed %q: %q", s, errb.String())
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// assertGone fails unless every pid has left the process table.
func assertGone(t *testing.T, pids []int) {
	t.Helper()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc")
	}
	deadline := time.Now().Add(3 * time.Second)
	for _, pid := range pids {
		for alive(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("process %d outlived the relay", pid)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

func newRelay(t *testing.T) (*mcphost.Relay, *syncio.Buffer, string) {
	pidFile := filepath.Join(t.TempDir(), "pids")
	var errb syncio.Buffer
	r := &mcphost.Relay{
		Name: "probe", Command: serverCommand(),
		Env:    append(os.Environ(), mcptest.PIDFile+"="+pidFile, mcptest.Child+"=1"),
		Stderr: &errb, Grace: 300 * time.Millisecond,
	}
	t.Cleanup(func() { r.Close() })
	return r, &errb, pidFile
}

func TestRelay(t *testing.T) {
	livetest.SkipShort(t, "runs MCP server processes")
	r, errb, pidFile := newRelay(t)
	ctx := context.Background()
	cases := []struct{ in, want string }{
		{`{"method":"initialize","params":{"protocolVersion":"2025-11-25"},"jsonrpc":"2.0","id":0}`,
			`{"id":0,"jsonrpc":"2.0","result":{"capabilities":{"tools":{"listChanged":false}},"protocolVersion":"2025-11-25","serverInfo":{"name":"probe","version":"0.0.1"}}}`},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, `{"jsonrpc":"2.0","id":null,"result":{}}`},
		// The server's own notification and request on the way are not
		// mistaken for the answer.
		{`{"method":"tools/call","params":{"name":"ping","arguments":{"note":"hi"}},"jsonrpc":"2.0","id":2}`,
			`{"id":2,"jsonrpc":"2.0","result":{"content":[{"text":"pong-from-probe","type":"text"}],"isError":false}}`},
		{`{"method":"tools/call","params":{"name":"echo","arguments":{"a":[1,2]}},"jsonrpc":"2.0","id":"three"}`,
			`{"id":"three","jsonrpc":"2.0","result":{"content":[{"text":"{\"a\":[1,2]}","type":"text"}]}}`},
	}
	for _, c := range cases {
		if got := string(r.Handle(ctx, json.RawMessage(c.in))); got != c.want {
			t.Errorf("%s\n got  %s\n want %s", c.in, got, c.want)
		}
	}
	if !strings.Contains(errb.String(), "agentjq: mcp-server probe: mcptest: serving") {
		t.Errorf("server stderr not passed on: %q", errb)
	}
	pids := pidsIn(t, pidFile)
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	assertGone(t, pids)
	if got := string(r.Handle(ctx, json.RawMessage(`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`))); !strings.Contains(got, "the session is over") {
		t.Errorf("after Close: %s", got)
	}
}

func TestRelayConcurrentCallsAndCancel(t *testing.T) {
	livetest.SkipShort(t, "runs MCP server processes")
	r, errb, _ := newRelay(t)
	ctx := context.Background()
	// A slow call does not hold up a quick one.
	slow := make(chan string, 1)
	go func() {
		slow <- string(r.Handle(ctx, json.RawMessage(`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":800}}}`)))
	}()
	waitStderr(t, errb, "mcptest: call sleep 10")
	if got := string(r.Handle(ctx, json.RawMessage(`{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"ping"}}`))); !strings.Contains(got, "pong-from-probe") {
		t.Errorf("quick call: %s", got)
	}
	select {
	case got := <-slow:
		t.Errorf("the quick call waited for the slow one (%s)", got)
		slow <- got
	default:
	}
	if got := <-slow; !strings.Contains(got, `"id":10`) || !strings.Contains(got, "slept") {
		t.Errorf("slow call: %s", got)
	}
	// A withdrawn call returns cancelled once the server has it, not the
	// server's answer ("slept", after 5 s): the answer says which came
	// first, whatever the machine's speed.
	cctx, cancel := context.WithCancel(ctx)
	withdrawn := make(chan struct{})
	go func() {
		defer close(withdrawn)
		waitStderr(t, errb, "mcptest: call sleep 12")
		cancel()
	}()
	got := string(r.Handle(cctx, json.RawMessage(`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":5000}}}`)))
	cancel()
	<-withdrawn
	if !strings.Contains(got, "cancelled") || strings.Contains(got, "slept") {
		t.Errorf("cancelled call: %s", got)
	}
}

func TestRelayServerDies(t *testing.T) {
	livetest.SkipShort(t, "runs MCP server processes")
	var errb syncio.Buffer
	r := &mcphost.Relay{Name: "dies", Command: `read line; echo 'bad config' >&2; exit 3`, Stderr: &errb}
	defer r.Close()
	got := string(r.Handle(context.Background(), json.RawMessage(`{"jsonrpc":"2.0","id":0,"method":"initialize"}`)))
	if !strings.Contains(got, `"code":-32603`) || !strings.Contains(got, "bad config") || !strings.Contains(got, `"id":0`) {
		t.Errorf("got %s", got)
	}
}
