package daemon

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// session.steer makes a message reach the model now: while a Bash call
// of the turn sleeps for a minute, claude's send-now (stopped or
// delivering) brings the steer's text to the model, whose answer to it
// comes long before the sleep would end; the first turn never runs to
// its end. The session goes on.
func TestLiveSteerRunningTurn(t *testing.T) {
	t.Parallel()
	a, sid, wd := liveFollowed(t)
	mark := filepath.Join(wd, "running")
	a.must("session.prompt", PromptParams{SessionID: sid, Text: fmt.Sprintf(`TOOL Bash {"command":"touch %s && sleep 60","description":"wait"}`, mark) + "\nSAY unsteered"}, nil)
	a.waitFor("the call running", 60*time.Second, func() bool { _, err := os.Stat(mark); return err == nil })
	var sr SteerResult
	a.must("session.steer", SteerParams{SessionID: sid, Text: "SAY steered"}, &sr)
	t.Logf("send_now: %q", sr.SendNow)
	if sr.SendNow != "stopped" && sr.SendNow != "delivering" {
		t.Fatalf("claude found no message to send now: %+v", sr)
	}
	a.waitFor("the steered answer", 50*time.Second, func() bool {
		for _, e := range a.events[sid] {
			if e.Kind == "turn.done" && strings.Contains(string(e.Payload), "steered") {
				return true
			}
		}
		return false
	})
	for _, e := range eventsOf(a, sid) {
		if e.Kind == "turn.done" || e.Kind == "turn.steered" || e.Kind == "turn.started" {
			var p map[string]any
			json.Unmarshal(e.Payload, &p)
			t.Logf("%d %s %v", e.Seq, e.Kind, p)
		}
		if e.Kind == "turn.done" && strings.Contains(string(e.Payload), "unsteered") {
			t.Fatalf("the first turn ran to its end: %s", e.Payload)
		}
	}
	a.must("session.prompt", PromptParams{SessionID: sid, Text: "SAY after"}, nil)
	a.waitFor("the next turn", 60*time.Second, func() bool {
		for _, e := range a.events[sid] {
			if e.Kind == "turn.done" && strings.Contains(string(e.Payload), "after") {
				return true
			}
		}
		return false
	})
	checkSeqs(t, "a", eventsOf(a, sid), 1)
}
