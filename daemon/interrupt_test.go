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

// session.interrupt ends the turn, never the session, while a
// backgrounded command runs (issue 25: once, the session ended with exit
// 130). Twenty rounds on one session: a turn starts a background sleep
// and is interrupted while the model is still thinking; every other round
// a second interrupt comes after the turn ended, with nothing to
// interrupt but the sleep. The session takes the next prompt each time.
// The background sleeps outlast the test: a finished background task makes
// claude start a turn of its own (its task notification), which would
// stand among the rounds' turns.
func TestLiveInterruptWithBackgroundTask(t *testing.T) {
	t.Parallel()
	a, sid, wd := liveFollowed(t)
	const rounds = 20
	for i := 1; i <= rounds; i++ {
		bg := fmt.Sprintf(`TOOL Bash {"command":"sleep 300 && echo bg-%d","run_in_background":true,"description":"wait"}`, i)
		mark := filepath.Join(wd, fmt.Sprintf("fg-%d", i))
		fg := fmt.Sprintf(`TOOL Bash {"command":"touch %s && sleep 30","description":"wait long"}`, mark)
		a.must("session.prompt", PromptParams{SessionID: sid, Text: bg + "\n" + fg + "\nSAY round " + fmt.Sprint(i)}, nil)
		// The background call has its result, the foreground one runs
		// (an interrupt while its approval is pending is another case).
		a.waitFor("the foreground call running", 60*time.Second, func() bool {
			_, err := os.Stat(mark)
			return hasKind(a.events[sid], "tool.result", 2*i-1) && err == nil
		})
		a.must("session.interrupt", SessionRef{SessionID: sid}, nil)
		a.waitFor("turn.done", 60*time.Second, func() bool {
			return hasKind(a.events[sid], "turn.done", i) || hasKind(a.events[sid], "session.ended", 1)
		})
		evs := eventsOf(a, sid)
		var last TurnDonePayload
		for _, e := range evs {
			if e.Kind == "turn.done" {
				json.Unmarshal(e.Payload, &last)
			}
		}
		if strings.Contains(last.Result, "round") {
			for _, e := range evs {
				t.Logf("%d %s %.300s", e.Seq, e.Kind, e.Payload)
			}
			t.Fatalf("round %d: the turn was not interrupted: %+v", i, last)
		}
		if i%2 == 0 {
			a.must("session.interrupt", SessionRef{SessionID: sid}, nil)
		}
		if hasKind(eventsOf(a, sid), "session.ended", 1) {
			t.Fatalf("round %d: the interrupt ended the session: %v", i, a.kinds(sid))
		}
	}
	// The session still answers.
	a.must("session.prompt", PromptParams{SessionID: sid, Text: "SAY still here"}, nil)
	a.waitFor("last turn.done", 60*time.Second, func() bool {
		return hasKind(a.events[sid], "turn.done", rounds+1) || hasKind(a.events[sid], "session.ended", 1)
	})
	if hasKind(eventsOf(a, sid), "session.ended", 1) {
		t.Fatalf("the session ended: %v", a.kinds(sid))
	}
	checkSeqs(t, "a", eventsOf(a, sid), 1)
}
