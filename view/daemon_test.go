package view

import (
	"os"
	"strings"
	"testing"
)

// A recording of agentjq serve (a session with an approval a client
// answered) renders as the session, not a "daemon entry" line per event:
// the agent's lines once, the approval that waited for a client. A
// recording of the events alone renders from their agent.line events.
func TestDaemonRecording(t *testing.T) {
	for _, name := range []string{"session", "events-only"} {
		t.Run(name, func(t *testing.T) {
			in, err := os.ReadFile("testdata/daemon/" + name + ".rec")
			if err != nil {
				t.Fatal(err)
			}
			got := render(t, in, Options{Width: 80})
			if strings.Contains(got, "daemon entry") || strings.Contains(got, "· daemon") {
				t.Errorf("a daemon event rendered as an entry:\n%s", got)
			}
			for _, want := range []string{"▶ Bash", "✓ Bash  daemon-ok", "finished", "■ success"} {
				if !strings.Contains(got, want) {
					t.Errorf("no %q in:\n%s", want, got)
				}
			}
			golden(t, "daemon-"+name, got)
		})
	}
}
