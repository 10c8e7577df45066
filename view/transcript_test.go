package view

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentjq/agentjq/fixtures"
	"github.com/agentjq/agentjq/internal/transcript"
)

// transcriptDir is the folder of claude version v's transcript fixtures.
func transcriptDir(v string) string {
	return filepath.Join(fixtures.Dir(), "transcripts", "claude-code-"+v, "projects", "-home-user-project")
}

func renderFiles(t *testing.T, paths []string, opts Options) string {
	t.Helper()
	var out bytes.Buffer
	names := make([]string, len(paths))
	for i, p := range paths {
		names[i] = filepath.Base(p)
	}
	if err := RenderFiles(context.Background(), paths, names, &out, opts); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

var bookkeepingRE = regexp.MustCompile(`(?m)· (queue-operation|attachment|api-request|summary|file-history-snapshot|last-prompt|cost-state|atis-latch|tools-used|mode)`)

// TestGoldenTranscripts: the view of each CLI version's transcripts, a
// folder of sessions, against goldens: a header per session, no
// bookkeeping, an end line that says what a transcript can tell.
func TestGoldenTranscripts(t *testing.T) {
	for _, v := range []string{"2.1.328", "2.1.332"} {
		t.Run(v, func(t *testing.T) {
			paths, err := transcript.Sessions(transcriptDir(v))
			if err != nil {
				t.Fatal(err)
			}
			if len(paths) != 6 {
				t.Fatalf("%d sessions, want the 6 of the manifest", len(paths))
			}
			got := renderFiles(t, paths, Options{})
			golden(t, "transcripts-"+v, got)
			if m := bookkeepingRE.FindString(got); m != "" {
				t.Errorf("a bookkeeping line without --all: %q", m)
			}
			if n := strings.Count(got, "● session "); n != len(paths) {
				t.Errorf("%d session headers for %d files", n, len(paths))
			}
			if n := strings.Count(got, "■ transcript  last activity "); n != len(paths) {
				t.Errorf("%d end lines for %d files", n, len(paths))
			}
			if strings.Contains(got, "without a result") {
				t.Error("a transcript ends without a result")
			}
			for _, want := range []string{"claude-opus-5-5", "claude " + v, "│ ◆ subagent general-purpose  Say hello", "│ > HELLO from the parent", "◆ compacted (manual", "> /compact"} {
				if !strings.Contains(got, want) {
					t.Errorf("the view lacks %q", want)
				}
			}
			all := renderFiles(t, paths[:1], Options{All: true})
			golden(t, "transcripts-all-"+v, all)
			for _, want := range []string{"· queue-operation enqueue", "· attachment skill_listing", "· api-request", "· cost-state"} {
				if !strings.Contains(all, want) {
					t.Errorf("--all lacks %q", want)
				}
			}
		})
	}
}

// TestTranscriptFolderInTimeOrder: a folder of three transcripts, named
// so that name order is not time order, views as three sessions, oldest
// first.
func TestTranscriptFolderInTimeOrder(t *testing.T) {
	src, err := transcript.Sessions(transcriptDir("2.1.332"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var ids []string
	for i, p := range src[:3] {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		// z-, y-, x-: the oldest has the last name.
		name := string(rune('z'-i)) + "-" + filepath.Base(p)
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, strings.TrimSuffix(filepath.Base(p), ".jsonl"))
	}
	paths, err := transcript.Sessions(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := renderFiles(t, paths, Options{})
	heads := regexp.MustCompile(`(?m)^● session (\S+)`).FindAllStringSubmatch(got, -1)
	if len(heads) != 3 {
		t.Fatalf("%d sessions:\n%s", len(heads), got)
	}
	for i, h := range heads {
		if h[1] != ids[i] {
			t.Errorf("session %d is %s, want %s (time order)", i+1, h[1], ids[i])
		}
	}
}

// TestTranscriptOnStdin: one transcript piped in views the same, but for
// the models (the header cannot read ahead) and the subagent's own file.
func TestTranscriptOnStdin(t *testing.T) {
	paths, _ := transcript.Sessions(transcriptDir("2.1.332"))
	b, err := os.ReadFile(paths[1])
	if err != nil {
		t.Fatal(err)
	}
	got := render(t, b, Options{})
	if !strings.HasPrefix(got, "● session ") || !strings.Contains(got, "■ transcript  last activity ") || bookkeepingRE.MatchString(got) {
		t.Errorf("stdin view:\n%s", got)
	}
}
