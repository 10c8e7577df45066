package recording

import (
	"bytes"
	"testing"

	"github.com/agentjq/agentjq/fixtures"
	"github.com/agentjq/agentjq/internal/protocol"
)

type capture struct{ in, out []byte }

func captureBytes(t testing.TB, name string) (capture, []byte) {
	t.Helper()
	in, err := fixtures.Capture(name, "in")
	if err != nil {
		t.Fatal(err)
	}
	out, err := fixtures.Capture(name, "out")
	if err != nil {
		t.Fatal(err)
	}
	return capture{in, out}, FromCapture(in, out, Header{Argv: []string{"capture", name}})
}

func TestFromCaptureAllScenarios(t *testing.T) {
	for _, name := range fixtures.Scenarios() {
		if name == "print-mode" {
			continue // no stdin capture
		}
		t.Run(name, func(t *testing.T) {
			c, rec := captureBytes(t, name)
			h, entries, err := ReadAll(bytes.NewReader(rec), "test.rec", func(err error) { t.Error(err) })
			if err != nil {
				t.Fatal(err)
			}
			if h.AgentVersion != fixtures.CLIVersion {
				t.Errorf("agent_version %q", h.AgentVersion)
			}
			if got, want := Transcript(entries, protocol.DirOut), splitLines(c.out); !equalLines(got, want) {
				t.Errorf("out lines differ from the capture (%d vs %d)", len(got), len(want))
			}
			if got, want := Transcript(entries, protocol.DirIn), splitLines(c.in); !equalLines(got, want) {
				t.Errorf("in lines differ from the capture (%d vs %d)", len(got), len(want))
			}
			// Causality: every control_response sent comes after the request.
			sent := map[string]bool{}
			for _, e := range entries {
				env, err := protocol.DecodeEnvelope(e.Msg)
				if err != nil {
					continue
				}
				if e.Dir == protocol.DirOut && env.Type == protocol.TypeControlRequest {
					sent[env.RequestID] = true
				}
				if e.Dir == protocol.DirIn && env.Type == protocol.TypeControlResp && !sent[env.ResponseID()] {
					t.Errorf("seq %d answers %s before it was asked", e.Seq, env.ResponseID())
				}
			}
		})
	}
}

func TestFromCaptureMultiTurnOrder(t *testing.T) {
	_, rec := captureBytes(t, "multi-turn")
	_, entries, err := ReadAll(bytes.NewReader(rec), "test.rec", nil)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, e := range entries {
		if e.Dir == protocol.DirMeta {
			continue
		}
		env, _ := protocol.DecodeEnvelope(e.Msg)
		k := env.Type
		if env.Subtype != "" {
			k += "/" + env.Subtype
		}
		if k == "user" || k == "system/init" || k == "result/success" {
			kinds = append(kinds, string(e.Dir)+":"+k)
		}
	}
	want := "in:user out:system/init out:result/success in:user out:system/init out:result/success"
	if got := join(kinds); got != want {
		t.Errorf("order\n got %s\nwant %s", got, want)
	}
}

func join(s []string) string {
	var b bytes.Buffer
	for i, x := range s {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(x)
	}
	return b.String()
}

func equalLines(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}
