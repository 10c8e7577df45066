package hooks

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentjq/agentjq/internal/proc"
)

func FuzzParseHook(f *testing.F) {
	for _, s := range []string{"PreToolUse:Bash=./g.sh", "Stop=x", "=", "PreToolUse", "Nope:x=y", "PostToolUse:a:b=c=d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, err := ParseHook(s)
		if err != nil {
			return
		}
		// What parses round-trips through the command-line form.
		if back, err := ParseHook(h.String() + "=" + h.Command); err != nil || back != h {
			t.Errorf("%q -> %+v -> %+v %v", s, h, back, err)
		}
		if strings.TrimSpace(h.Command) == "" {
			t.Errorf("%q: empty command accepted", s)
		}
	})
}

// FuzzOutput: whatever a hook prints or however it exits, the answer is
// one JSON object.
func FuzzOutput(f *testing.F) {
	f.Add("PreToolUse", []byte(`{"decision":"block"}`), []byte("why"), 0)
	f.Add("Stop", []byte("{}{}"), []byte(""), 2)
	f.Add("PermissionRequest", []byte("\xff"), []byte("\xff\"\\"), 2)
	f.Fuzz(func(t *testing.T, event string, stdout, stderr []byte, code int) {
		out, _ := Output(event, proc.Result{Stdout: stdout, Stderr: stderr, ExitCode: code})
		var m map[string]any
		if err := json.Unmarshal(out, &m); err != nil {
			t.Errorf("not a JSON object: %s", out)
		}
	})
}
