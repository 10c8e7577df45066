package acp

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/recording"
)

// writeSegment writes a recording of lines (dir, line) to file.
func writeSegment(t *testing.T, file, cwd string, lines ...[2]string) {
	t.Helper()
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := recording.NewWriter(f, recording.Header{Agent: "claude", Cwd: cwd}, recording.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		w.Tap(protocol.Direction(l[0]), []byte(l[1]), 0)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestReadRecorded: the turns, the title, the cwd and the mode claude was
// left in, over every segment: an init line's mode, a set_permission_mode
// only once the agent accepted it (a refused one changes nothing).
func TestReadRecorded(t *testing.T) {
	dir := t.TempDir()
	id := "0a1b2c3d-0000-4000-8000-000000000001"
	writeSegment(t, filepath.Join(dir, id+".ndjson"), "/p",
		[2]string{"in", `{"type":"control_request","request_id":"m1","request":{"subtype":"set_permission_mode","mode":"plan"}}`},
		[2]string{"out", `{"type":"control_response","response":{"subtype":"success","request_id":"m1"}}`})
	r, err := readRecorded(dir, id)
	if err != nil || r.Turns != 0 || r.Mode != "plan" || r.Cwd != "/p" || r.Title != "" {
		t.Fatalf("no turn yet: %+v %v", r, err)
	}
	writeSegment(t, filepath.Join(dir, id+".2.ndjson"), "/p",
		[2]string{"in", `{"type":"user","message":{"role":"user","content":[{"type":"text","text":"fix\n  the   bug"}]}}`},
		[2]string{"out", `{"type":"system","subtype":"init","permissionMode":"plan"}`},
		[2]string{"in", `{"type":"control_request","request_id":"m2","request":{"subtype":"set_permission_mode","mode":"acceptEdits"}}`},
		[2]string{"out", `{"type":"control_response","response":{"subtype":"success","request_id":"m2"}}`},
		[2]string{"in", `{"type":"control_request","request_id":"m3","request":{"subtype":"set_permission_mode","mode":"dontAsk"}}`},
		[2]string{"out", `{"type":"control_response","response":{"subtype":"error","request_id":"m3","error":"no"}}`},
		[2]string{"in", `{"type":"user","message":{"role":"user","content":"again"}}`})
	r, err = readRecorded(dir, id)
	if err != nil || r.Turns != 2 || r.Mode != "acceptEdits" || r.Title != "fix the bug" || r.Updated.IsZero() {
		t.Errorf("two segments: %+v %v", r, err)
	}
	if ids := recordedIDs(dir); len(ids) != 1 || ids[0] != id {
		t.Errorf("recordedIDs %v", ids)
	}
}
