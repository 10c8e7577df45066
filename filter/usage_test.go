package filter

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/agentjq/agentjq/fixtures"
	"github.com/agentjq/agentjq/internal/testkit/livetest"
	"github.com/agentjq/agentjq/internal/transcript"
)

// transcriptFiles are a version's transcript fixtures, each session's
// file followed by its subagents' files, oldest session first.
func transcriptFiles(t *testing.T, v string) []string {
	t.Helper()
	dir := filepath.Join(fixtures.Dir(), "transcripts", "claude-code-"+v, "projects", "-home-user-project")
	sessions, err := transcript.Sessions(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, s := range sessions {
		files = append(files, s)
		for _, sub := range transcript.Subagents(s) {
			files = append(files, sub.Path)
		}
	}
	return files
}

// manifestSessions maps each transcript scenario to its session id.
func manifestSessions(t *testing.T, v string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtures.Dir(), "transcripts", "claude-code-"+v, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Scenarios []struct{ Name, Session string }
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, sc := range m.Scenarios {
		out[sc.Name] = sc.Session
	}
	return out
}

var versions = []string{"2.1.328", "2.1.332"}

// TestMessagesUsageMatchesJQ: the tokens messages_usage gives per message
// id are what jq itself (the jq binary, a program written here) counts:
// each assistant message once, whatever the number of its lines.
func TestMessagesUsageMatchesJQ(t *testing.T) {
	livetest.SkipShort(t, "runs jq")
	jq, err := exec.LookPath("jq")
	if err != nil {
		t.Skip("jq is not installed")
	}
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			files := transcriptFiles(t, v)
			got, stderr, code := runFilter(t, "", append([]string{"-n", "-c",
				`messages_usage | [.message_id, .input_tokens, .output_tokens, .cache_read_input_tokens, .cache_creation_input_tokens]`}, files...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			cmd := exec.Command(jq, append([]string{"-n", "-c", `
				[inputs | select(.type == "assistant" and .message.usage != null) | .message]
				| group_by(.id) | map(.[0] | [.id, .usage.input_tokens, .usage.output_tokens,
				    (.usage.cache_read_input_tokens // 0), (.usage.cache_creation_input_tokens // 0)]) | .[]`}, files...)...)
			want, err := cmd.Output()
			if err != nil {
				t.Fatalf("jq: %v", err)
			}
			sorted := func(s string) []string {
				l := strings.Split(strings.TrimSpace(s), "\n")
				sort.Strings(l)
				return l
			}
			g, w := sorted(got), sorted(string(want))
			if strings.Join(g, "\n") != strings.Join(w, "\n") {
				t.Errorf("per message id:\n got %q\nwant %q", g, w)
			}
			lines, _, _ := runFilter(t, "", append([]string{"-c", `select(.type == "assistant" and .message.usage != null) | .message.id`}, files...)...)
			if n := strings.Count(lines, "\n"); n <= len(g) {
				t.Errorf("%d assistant lines for %d messages: the fixtures should hold a message split over lines", n, len(g))
			}
		})
	}
}

type report struct {
	Daily    []reportRow `json:"daily"`
	Sessions []reportRow `json:"sessions"`
	Totals   reportRow   `json:"totals"`
}

type reportRow struct {
	Date        string   `json:"date"`
	SessionID   string   `json:"sessionId"`
	ProjectPath string   `json:"projectPath"`
	Input       int      `json:"inputTokens"`
	Output      int      `json:"outputTokens"`
	CacheCreate int      `json:"cacheCreationTokens"`
	CacheRead   int      `json:"cacheReadTokens"`
	Total       int      `json:"totalTokens"`
	Cost        float64  `json:"totalCost"`
	Models      []string `json:"modelsUsed"`
	Last        string   `json:"lastActivity"`
}

func runReport(t *testing.T, program string, files []string) report {
	t.Helper()
	out, stderr, code := runFilter(t, "", append([]string{"-n", "-c", program}, files...)...)
	if code != 0 {
		t.Fatalf("%s: exit %d: %s", program, code, stderr)
	}
	var r report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%s: %v\n%s", program, err, out)
	}
	return r
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9 }

// TestUsageReportsOnFixtures: the daily and session reports of the
// transcript fixtures, against numbers worked out by hand. Every message
// of the scripted API is 12 tokens in and 7 out, $0.000188 at Opus 5.5's
// $4 / $20 per million; the CACHED one adds 150 written (100 at $5, 50 at
// $8) and 200 read ($0.20): $0.001128. Sessions: hello 1 message, chain 4,
// subagent 4 (2 in the session's file, 1 in the subagent's, 1 after the
// task's notification), resumed 3 (its WRITE answer split over two lines
// counts once), cached 1, compacted 2 (the compaction's own requests are
// not in the transcript).
func TestUsageReportsOnFixtures(t *testing.T) {
	type want struct {
		in, out, cw, cr int
		cost            float64
	}
	per := map[string]want{
		"hello": {12, 7, 0, 0, 0.000188}, "chain": {48, 28, 0, 0, 0.000752}, "subagent": {48, 28, 0, 0, 0.000752},
		"resumed": {36, 21, 0, 0, 0.000564}, "cached": {12, 7, 150, 200, 0.001128}, "compacted": {24, 14, 0, 0, 0.000376},
	}
	order := []string{"hello", "chain", "subagent", "resumed", "cached", "compacted"}
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			files := transcriptFiles(t, v)
			ids := manifestSessions(t, v)
			d := runReport(t, "daily_report", files)
			if len(d.Daily) != 1 {
				t.Fatalf("%d days: %+v", len(d.Daily), d.Daily)
			}
			day := d.Daily[0]
			if day.Date != "2026-12-02" || day.Input != 180 || day.Output != 105 || day.CacheCreate != 150 || day.CacheRead != 200 ||
				day.Total != 635 || !near(day.Cost, 0.00376) || strings.Join(day.Models, ",") != "claude-opus-5-5" {
				t.Errorf("daily: %+v", day)
			}
			if d.Totals.Total != 635 || !near(d.Totals.Cost, 0.00376) {
				t.Errorf("daily totals: %+v", d.Totals)
			}
			s := runReport(t, "session_report", files)
			if len(s.Sessions) != len(order) {
				t.Fatalf("%d sessions", len(s.Sessions))
			}
			for i, name := range order {
				row, w := s.Sessions[i], per[name]
				if row.SessionID != ids[name] {
					t.Errorf("session %d is %s, want %s's %s (time order)", i+1, row.SessionID, name, ids[name])
					continue
				}
				if row.Input != w.in || row.Output != w.out || row.CacheCreate != w.cw || row.CacheRead != w.cr ||
					row.Total != w.in+w.out+w.cw+w.cr || !near(row.Cost, w.cost) || row.ProjectPath != "/home/user/project" || row.Last != "2026-12-02" {
					t.Errorf("%s: %+v, want %+v", name, row, w)
				}
			}
			if s.Totals.Total != 635 || !near(s.Totals.Cost, 0.00376) {
				t.Errorf("session totals: %+v", s.Totals)
			}
		})
	}
}

// TestTranscriptCostAgreesWithResult: for each recorded run, the
// transcript's cost (session_report) against the total_cost_usd claude
// printed in the run's result: the same within 1%, but for the compacted
// session, whose compaction requests claude bills but does not write as
// assistant messages (ccusage does not see them either).
func TestTranscriptCostAgreesWithResult(t *testing.T) {
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			ids := manifestSessions(t, v)
			s := runReport(t, "session_report", transcriptFiles(t, v))
			cost := map[string]float64{}
			for _, row := range s.Sessions {
				cost[row.SessionID] = row.Cost
			}
			streams := filepath.Join(fixtures.Dir(), "transcripts", "claude-code-"+v, "streams")
			for name, id := range ids {
				runs, _ := filepath.Glob(filepath.Join(streams, name+".*.ndjson"))
				sort.Strings(runs)
				out, _, _ := runFilter(t, "", "-n", "-c", "[inputs | cost] | last", runs[len(runs)-1])
				var result float64
				if err := json.Unmarshal([]byte(out), &result); err != nil {
					t.Fatalf("%s: %v (%q)", name, err, out)
				}
				diff := math.Abs(cost[id]-result) / result
				if name == "compacted" {
					if cost[id] >= result {
						t.Errorf("compacted: transcript $%g, result $%g: the compaction's requests should be missing", cost[id], result)
					}
					continue
				}
				if diff > 0.01 {
					t.Errorf("%s: transcript $%g, result $%g", name, cost[id], result)
				}
			}
		})
	}
}

// TestPricesFile: --prices replaces a model's prices; a bad file is a
// usage error naming it.
func TestPricesFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "p.json")
	os.WriteFile(p, []byte(`{"models":{"claude-opus-5-5":{"input":1,"output":1,"cache_read":0,"cache_write_5m":0,"cache_write_1h":0}}}`), 0o644)
	out, stderr, code := runFilter(t, "", "-n", "--prices", p, `{model: "claude-opus-5-5-20261001", input_tokens: 1000000, output_tokens: 1000000} | usage_cost`)
	if code != 0 || strings.TrimSpace(out) != "2" {
		t.Errorf("exit %d, %q %s", code, out, stderr)
	}
	os.WriteFile(p, []byte(`{"models":{"x":{"inptu":1}}}`), 0o644)
	_, stderr, code = runFilter(t, "", "-n", "--prices", p, `1`)
	if code != ExitUsage || !strings.Contains(stderr, "p.json") || !strings.Contains(stderr, "inptu") {
		t.Errorf("exit %d: %s", code, stderr)
	}
	out, _, _ = runFilter(t, "", "-n", "-r", `prices | .as_of, .source`)
	if !strings.HasPrefix(out, "2026-12-02\nAnthropic's published pricing: https://platform.claude.com/docs/en/about-claude/pricing") {
		t.Errorf("the table's date and source: %q", out)
	}
}
