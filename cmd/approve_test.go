package cmd

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agentjq/agentjq/approve"
	"github.com/agentjq/agentjq/fixtures"
	"github.com/agentjq/agentjq/internal/protocol"
)

func writeTestPolicy(t *testing.T, name, src string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// approve test reads captures and recordings alike.
func TestTestStreamAndExpect(t *testing.T) {
	t.Parallel()
	rules := writeTestPolicy(t, "r.json", `{"allow": ["Edit(banana.txt)"], "deny": ["Bash(rm:*)"]}`)
	c, err := approve.NewChain(approve.ChainOptions{Policies: []string{rules}})
	if err != nil {
		t.Fatal(err)
	}
	var all []approve.TestResult
	for _, name := range []string{"write-allow", "rmrf-deny", "chain"} {
		b, _ := fixtures.Capture(name, "out")
		res, err := testStream(context.Background(), name, bytes.NewReader(b), c, "", io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, res...)
	}
	// A recording: the same requests inside "out" entries.
	b, _ := fixtures.Capture("write-allow", "out")
	var rec bytes.Buffer
	rec.WriteString(`{"agentjq_recording":1,"agent":"claude","cwd":"/home/user/project"}` + "\n")
	for i, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		rec.WriteString(`{"seq":` + strconv.Itoa(i+1) + `,"ms":1.000,"dir":"out","msg":` + l + "}\n")
	}
	res, err := testStream(context.Background(), "rec", &rec, c, "", io.Discard)
	if err != nil || len(res) != 1 || res[0].Verdict.Behavior != protocol.Allow {
		t.Fatalf("recording: %+v %v", res, err)
	}
	exp, err := approve.ParseExpectations("e", []byte("# expectations\ntoolu_w1 allow\ntoolu_r1 deny\ntoolu_c2 allow\n"))
	if err != nil {
		t.Fatal(err)
	}
	diffs := approve.CheckExpectations(all, exp)
	if len(diffs) != 1 || !strings.HasPrefix(diffs[0], "toolu_c2:") {
		t.Errorf("diffs %q", diffs)
	}
}
