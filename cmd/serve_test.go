package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentjq/agentjq/iostreams"
)

// serve, call and attach as a pipeline uses them: the daemon with the
// fake agent, a session created and prompted with call, its agent lines
// printed by attach (an ended session, from the start), a second serve
// on the same home refused, system.shutdown ending the daemon.
func TestServeCallAttach(t *testing.T) {
	t.Parallel()
	home := filepath.Join(t.TempDir(), "h")
	env := func() *iostreams.IO {
		ios, _, _ := fakeIO(t, "echo-turns", "")
		ios.Environ = append(ios.Environ, "AGENTJQ_HOME="+home, "AGENTJQ_AGENT_BIN="+os.Args[0])
		return ios
	}
	serveIO := env()
	served := make(chan int, 1)
	go func() { served <- Main([]string{"serve", "--listen", "127.0.0.1:0"}, serveIO) }()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(home, "daemon.json")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no daemon.json")
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, f := range []string{"daemon.json", "token", "daemon.sock"} {
		st, err := os.Stat(filepath.Join(home, f))
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v %v", f, st, err)
		}
	}
	call := func(args ...string) (string, string, int) {
		ios, _, out, errb := iostreams.Test()
		ios.Environ = env().Environ
		code := Main(append([]string{"call"}, args...), ios)
		return out.String(), errb.String(), code
	}
	second := env()
	if code := Main([]string{"serve"}, second); code == 0 || !strings.Contains(second.Err.(interface{ String() string }).String(), "already running") {
		t.Fatalf("a second serve: exit %d, %s", code, second.Err)
	}
	wd := t.TempDir()
	out, errs, code := call("session.create", `{"workdir":"`+wd+`"}`)
	if code != 0 {
		t.Fatalf("create: %d %s", code, errs)
	}
	var cr struct{ SessionID string }
	json.Unmarshal([]byte(out), &cr)
	if _, errs, code = call("session.prompt", `{"sessionId":"`+cr.SessionID+`","text":"hello"}`); code != 0 {
		t.Fatalf("prompt: %s", errs)
	}
	_, errs, code = call("session.prompt", `{"sessionId":"nope","text":"x"}`)
	if code != 1 || !strings.Contains(errs, `"code":"not_found"`) {
		t.Fatalf("bad session: %d %s", code, errs)
	}
	time.Sleep(300 * time.Millisecond)
	if _, errs, code = call("session.close", `{"sessionId":"`+cr.SessionID+`"}`); code != 0 {
		t.Fatalf("close: %s", errs)
	}
	// attach on the ended session prints its agent lines from the start.
	for i := 0; ; i++ {
		lo, _, _ := call("session.list")
		if strings.Contains(lo, `"ended":true`) {
			break
		}
		if i > 200 {
			t.Fatalf("the session did not end: %s", lo)
		}
		time.Sleep(50 * time.Millisecond)
	}
	ios, _, aout, aerr := iostreams.Test()
	ios.Environ = env().Environ
	if code := Main([]string{"attach", cr.SessionID}, ios); code != 0 {
		t.Fatalf("attach: %d %s", code, aerr)
	}
	if !strings.Contains(aout.String(), `"result":"got turn"`) {
		t.Fatalf("attach printed %q", aout)
	}
	for _, l := range strings.Split(strings.TrimSpace(aout.String()), "\n") {
		if !json.Valid([]byte(l)) {
			t.Fatalf("attach line not JSON: %s", l)
		}
	}
	// --live on an ended session has nothing to print and ends at once.
	ios, _, aout, aerr = iostreams.Test()
	ios.Environ = env().Environ
	liveDone := make(chan int, 1)
	go func() { liveDone <- Main([]string{"attach", "--live", cr.SessionID}, ios) }()
	select {
	case code := <-liveDone:
		if code != 0 || aout.Len() != 0 {
			t.Fatalf("attach --live: %d %q %s", code, aout, aerr)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("attach --live on an ended session did not end")
	}
	if _, errs, code = call("system.shutdown"); code != 0 {
		t.Fatalf("shutdown: %s", errs)
	}
	select {
	case code := <-served:
		if code != 0 {
			t.Fatalf("serve exit %d: %s", code, serveIO.Err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not end")
	}
	if _, err := os.Stat(filepath.Join(home, "daemon.json")); err == nil {
		t.Error("daemon.json left behind")
	}
}

// serve checks its flags and policy files once, at start: a policy that
// does not parse fails serve naming the file and line, before any client.
func TestServeRefusesBadPolicyAtStart(t *testing.T) {
	t.Parallel()
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte("{\n  \"allow\": [\"Bash(\"]\n}\n"), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--policy", bad}, bad + ":2"},
		{[]string{"--approval-timeout=-1s"}, "cannot be negative"},
	} {
		ios, _, _, errb := iostreams.Test()
		ios.Environ = append(ios.Environ, "AGENTJQ_HOME="+t.TempDir())
		code := Main(append([]string{"serve", "--stdio"}, tc.args...), ios)
		if code != 2 || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("serve %q: exit %d, stderr %q (want 2, %q)", tc.args, code, errb, tc.want)
		}
	}
}
