package filter

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/agentjq/agentjq/internal/testkit/apistub"
	"github.com/agentjq/agentjq/internal/testkit/livetest"
	"github.com/agentjq/agentjq/internal/transcript"
)

// TestLiveUsageAgrees: over a live run of the real CLI (the scripted
// API's usage numbers), the usage helpers agree with the run's result
// line: the tokens of messages_usage with the result's modelUsage, and
// usage_cost with total_cost_usd (claude's own computation) within 1%,
// both over the stream (with --include-partial-messages: without it the
// stream's assistant lines carry the message_start count of output
// tokens, 1, not the final one) and over the transcript the run wrote.
func TestLiveUsageAgrees(t *testing.T) {
	t.Parallel()
	bin := livetest.Claude(t)
	for _, sc := range []struct {
		name string
		args []string
		// stream: the stream holds every message's final usage. A
		// subagent's messages come in the stream with no message_delta,
		// so with the message_start count of output tokens (1 here, not
		// 7): only its transcript has the final count.
		stream bool
	}{
		{"chain", []string{"-p", "do the CHAIN", "--allowedTools", "Bash,Write,Read"}, true},
		{"cached", []string{"-p", "say CACHED"}, true},
		{"subagent", []string{"-p", "start an AGENT"}, false},
	} {
		t.Run(sc.name, func(t *testing.T) {
			api := apistub.Start(t)
			env := livetest.Env(t, api.URL())
			work := livetest.Workdir(t)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, append(sc.args, "--output-format", "stream-json", "--verbose", "--include-partial-messages")...)
			cmd.Env, cmd.Dir = env, work
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			stream, err := cmd.Output()
			if err != nil {
				t.Fatalf("claude: %v\n%s", err, stderr.Bytes())
			}
			// The last result: cumulative cost and per-model usage.
			var res struct {
				Cost       float64 `json:"total_cost_usd"`
				ModelUsage map[string]struct {
					In  int `json:"inputTokens"`
					Out int `json:"outputTokens"`
					CR  int `json:"cacheReadInputTokens"`
					CW  int `json:"cacheCreationInputTokens"`
				} `json:"modelUsage"`
			}
			last, _, _ := runFilter(t, string(stream), "-n", "-c", "[inputs | results] | last")
			if err := json.Unmarshal([]byte(last), &res); err != nil || res.Cost == 0 {
				t.Fatalf("no result: %v %q", err, last)
			}
			const sums = `[messages_usage] | group_by(.model) | map({key: .[0].model, value: {In: (map(.input_tokens) | add), Out: (map(.output_tokens) | add),
				CR: (map(.cache_read_input_tokens) | add), CW: (map(.cache_creation_input_tokens) | add), cost: (map(usage_cost) | add)}}) | from_entries`
			check := func(what, out string) {
				t.Helper()
				var got map[string]struct {
					In, Out, CR, CW int
					Cost            float64 `json:"cost"`
				}
				if err := json.Unmarshal([]byte(out), &got); err != nil {
					t.Fatalf("%s: %v %q", what, err, out)
				}
				total := 0.0
				for m, w := range res.ModelUsage {
					g := got[m]
					if g.In != w.In || g.Out != w.Out || g.CR != w.CR || g.CW != w.CW {
						t.Errorf("%s: %s tokens %+v, the result's modelUsage %+v", what, m, g, w)
					}
					total += g.Cost
				}
				if len(got) != len(res.ModelUsage) {
					t.Errorf("%s: models %v, the result's %v", what, got, res.ModelUsage)
				}
				if math.Abs(total-res.Cost)/res.Cost > 0.01 {
					t.Errorf("%s: cost $%g, the result's total_cost_usd $%g", what, total, res.Cost)
				}
			}
			if sc.stream {
				out, stderrF, code := runFilter(t, string(stream), "-n", "-c", sums)
				if code != 0 {
					t.Fatalf("exit %d: %s", code, stderrF)
				}
				check("stream", out)
			}
			home := ""
			for _, kv := range env {
				if v, ok := strings.CutPrefix(kv, "HOME="); ok {
					home = v
				}
			}
			dir := transcript.ProjectDir(func(k string) string {
				if k == "HOME" {
					return home
				}
				return ""
			}, work)
			sessions, err := transcript.Sessions(dir)
			if err != nil || len(sessions) != 1 {
				t.Fatalf("transcripts in %s: %v %v", dir, sessions, err)
			}
			files := []string{sessions[0]}
			for _, s := range transcript.Subagents(sessions[0]) {
				files = append(files, s.Path)
			}
			out, stderrF, code := runFilter(t, "", append([]string{"-n", "-c", sums}, files...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderrF)
			}
			check("transcript", out)
		})
	}
}
