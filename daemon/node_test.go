package daemon

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// nodeModules finds the ws package the Node client needs, or skips
// (fails with AGENTJQ_REQUIRE_LIVE=1).
func nodeModules(t *testing.T) string {
	dir := os.Getenv("AGENTJQ_NODE_MODULES")
	if dir == "" {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".cache", "agentjq", "node-clients", "node_modules")
	}
	_, err := os.Stat(filepath.Join(dir, "ws"))
	_, nerr := exec.LookPath("node")
	if err != nil || nerr != nil {
		if os.Getenv("AGENTJQ_REQUIRE_LIVE") == "1" {
			t.Fatalf("node and %s/ws are required", dir)
		}
		t.Skip("no node or ws")
	}
	return dir
}

// A Node WebSocket client (npm ws) drives a session with the real claude:
// the refusals, an approval answered as a response to approval.request,
// and the events in seq order.
func TestLiveNodeWebSocketClient(t *testing.T) {
	t.Parallel()
	mods := nodeModules(t)
	srv, wd := liveServer(t, Options{})
	hs := httptest.NewServer(srv.HTTPHandler(context.Background(), SchemaJSON(), false))
	defer hs.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	url := "ws" + strings.TrimPrefix(hs.URL, "http") + "/ws"
	cmd := exec.CommandContext(ctx, "node", "testdata/wsclient.cjs", url, srv.Token(), wd, ProtocolVersion, bashTurn)
	cmd.Env = append(os.Environ(), "NODE_PATH="+mods)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node client: %v\n%s", err, out)
	}
	var r struct {
		Refusals       map[string]string `json:"refusals"`
		ServerProtocol string            `json:"serverProtocol"`
		ApprovalTool   string            `json:"approvalTool"`
		FirstSeq       int64             `json:"firstSeq"`
		Seqs           []int64           `json:"seqs"`
		Kinds          []string          `json:"kinds"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	want := map[string]string{"origin": "HTTP 403", "noHello": CodeUnauthorized, "token": CodeUnauthorized, "major": CodeProtocolIncompatible}
	for k, v := range want {
		if r.Refusals[k] != v {
			t.Errorf("refusal %s = %q, want %q", k, r.Refusals[k], v)
		}
	}
	if r.ApprovalTool != "Bash" || r.ServerProtocol != ProtocolVersion {
		t.Errorf("summary %s", out)
	}
	for i, s := range r.Seqs {
		if s != int64(i+1) {
			t.Fatalf("node saw seqs %v", r.Seqs)
		}
	}
	for _, k := range []string{"approval.resolved", "tool.result", "turn.done"} {
		if !slices.Contains(r.Kinds, k) {
			t.Errorf("node saw no %s: %v", k, r.Kinds)
		}
	}
}
