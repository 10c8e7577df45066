package cmd

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/agentjq/agentjq/fixtures"
	"github.com/agentjq/agentjq/internal/testkit/livetest"
	"github.com/agentjq/agentjq/recording"
)

// TestCheckFlags: the settings of a recording's session (in its header,
// or parsed from the argv of an old one) become the check's flags: the
// binary and the rest stay as given to replay --check; no policy, prompt
// or terminal; a flag given to replay --check counts only when it is not
// the default.
func TestCheckFlags(t *testing.T) {
	t.Parallel()
	argv := []string{"agentjq", "spawn", "--policy", "p.json", "--partial", "--max-turns", "3", "--hook", "PreToolUse=true", "-p", "hi", "--", "--replay-user-messages"}
	rec, err := legacySession(argv)
	if err != nil {
		t.Fatal(err)
	}
	if !rec.Partial || rec.MaxTurns != 3 || len(rec.Hook) != 1 || len(rec.AgentArgs) != 1 || !rec.OneShot || len(rec.Policy) != 1 {
		t.Fatalf("parsed %+v", rec)
	}
	// What spawn writes in the header is what the old argv said.
	f, args, err := recordedSession(argv)
	if err != nil {
		t.Fatal(err)
	}
	if got := sessionOf(f, args); !reflect.DeepEqual(got, rec) {
		t.Errorf("header %+v, legacy %+v", got, rec)
	}
	cli := SpawnFlags{Agent: "claude", Bin: "/bin/agent"}
	cli.HookTimeout, cli.MCPToolTimeout = defaultHookTimeout, defaultMCPToolTimeout
	if g := givenSession(cli, nil); !reflect.DeepEqual(g, recording.Session{}) {
		t.Errorf("defaults counted as given: %+v", g)
	}
	f = cli
	if err := applySession(&f, rec); err != nil {
		t.Fatal(err)
	}
	if !f.Partial || f.MaxTurns != 3 || len(f.Hook) != 1 || f.Bin != "/bin/agent" || f.HookTimeout != defaultHookTimeout {
		t.Errorf("re-used: %+v", f)
	}
	if f.Policy != nil || f.Prompt != "" || !f.NoPrompt {
		t.Errorf("policy, prompt or terminal re-used: %+v", f)
	}
	cli.MaxTurns = 1
	if g := givenSession(cli, []string{"--verbose"}); g.MaxTurns != 1 || len(g.AgentArgs) != 1 || g.AgentArgs[0] != "--verbose" {
		t.Errorf("overrides: %+v", g)
	}
	if _, err := legacySession([]string{"agentjq", "frobnicate", "--x"}); err == nil {
		t.Error("an unparsable argv was accepted")
	}
	if err := applySession(&f, recording.Session{HookTimeout: "soon"}); err == nil {
		t.Error("a bad duration was accepted")
	}
}

// TestCheckAgainstAsAgent runs the live check with replay --as-agent of
// the fixture standing in for the agent: no CLI needed, and the whole
// path (flags re-used, inputs fed at their gates, permissions answered as
// recorded) must reproduce the recording without drift.
func TestCheckAgainstAsAgent(t *testing.T) {
	t.Parallel()
	livetest.SkipShort(t, "runs this test binary as the agent")
	for _, sc := range readManifest(t) {
		t.Run(sc.Name, func(t *testing.T) {
			if testing.Short() && sc.Name == "big-line" {
				t.Skip("big-line in -short")
			}
			rec := fixtureRec(t, sc.Name)
			ios, out, errb := fixtureIO("")
			code := Main([]string{"replay", "--check", "--bin", asAgentShim(t, rec), "--timeout", "60s", rec}, ios)
			if code != 0 {
				t.Errorf("exit %d\n%s\nstderr: %s", code, out, errb)
			}
		})
	}
}

func TestCheckAgainstAsAgentReportsDrift(t *testing.T) {
	t.Parallel()
	livetest.SkipShort(t, "runs this test binary as the agent")
	rec := fixtureRec(t, "chain")
	b, _ := os.ReadFile(rec)
	// The agent now sends a key the recording lacks (compatible drift,
	// exit 3): the agent plays the changed copy, the check compares with
	// the original.
	changed := filepath.Join(t.TempDir(), "changed.rec")
	os.WriteFile(changed, []byte(strings.Replace(string(b), `"type":"result",`, `"type":"result","brand_new":1,`, 1)), 0o644)
	if !strings.Contains(string(b), `"type":"result",`) {
		t.Fatal("no result line to change")
	}
	ios, out, errb := fixtureIO("")
	code := Main([]string{"replay", "--check", "--bin", asAgentShim(t, changed), "--timeout", "60s", rec}, ios)
	if code != 3 || !strings.Contains(out.String(), "compatible  ~ line 10→10 result/success: +.brand_new (new key)") {
		t.Errorf("exit %d\n%s\nstderr: %s", code, out, errb)
	}
}

// TestCheckUsesHeaderSession: the check runs the session with the
// settings of the header's session, not with what argv says: a
// recording whose argv names no flags but whose session asks for
// partial messages runs the agent with --include-partial-messages; one
// without a session (an old recording) falls back to its argv.
func TestCheckUsesHeaderSession(t *testing.T) {
	t.Parallel()
	orig := fixtureRec(t, "partial")
	b, err := os.ReadFile(orig)
	if err != nil {
		t.Fatal(err)
	}
	first := bytes.IndexByte(b, '\n')
	h, err := recording.ParseHeader(b[:first])
	if err != nil {
		t.Fatal(err)
	}
	withHeader := func(h recording.Header) string {
		line, err := recording.MarshalHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "s.rec")
		os.WriteFile(path, append(append(line, '\n'), b[first+1:]...), 0o644)
		return path
	}
	agentArgs := func(rec string) string {
		shim := asAgentShim(t, orig)
		logged := filepath.Join(t.TempDir(), "args")
		wrapper := filepath.Join(t.TempDir(), "claude")
		writeFile(wrapper, []byte("#!/bin/sh\necho \"$@\" >> "+shQuote(logged)+"\nexec "+shQuote(shim)+" \"$@\"\n"), 0o755)
		ios, out, errb := fixtureIO("")
		if code := Main([]string{"replay", "--check", "--bin", wrapper, "--timeout", "60s", rec}, ios); code != 0 {
			t.Fatalf("exit %d\n%s\nstderr: %s", code, out, errb)
		}
		got, _ := os.ReadFile(logged)
		return string(got)
	}
	h.Argv = []string{"agentjq", "spawn"}
	h.Session = &recording.Session{Agent: "claude", Partial: true}
	if got := agentArgs(withHeader(h)); !strings.Contains(got, "--include-partial-messages") {
		t.Errorf("the header's session was not used: agent args %q", got)
	}
	h.Session = &recording.Session{Agent: "claude"}
	h.Argv = []string{"agentjq", "spawn", "--partial"}
	if got := agentArgs(withHeader(h)); strings.Contains(got, "--include-partial-messages") {
		t.Errorf("argv was used over the header's session: agent args %q", got)
	}
	h.Session = nil
	if got := agentArgs(withHeader(h)); !strings.Contains(got, "--include-partial-messages") {
		t.Errorf("an old recording's argv was not used: agent args %q", got)
	}
}

// doctored writes a copy of the fixture recording name with each pair of
// edits (old, new) applied once, for an as-agent shim to play.
func doctored(t *testing.T, name string, edits ...string) string {
	t.Helper()
	b, err := os.ReadFile(fixtureRec(t, name))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for i := 0; i+1 < len(edits); i += 2 {
		if !strings.Contains(s, edits[i]) {
			t.Fatalf("%s has no %q to change", name, edits[i])
		}
		s = strings.Replace(s, edits[i], edits[i+1], 1)
	}
	path := filepath.Join(t.TempDir(), name+".rec")
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// shimSequence is an agent binary that plays the n-th recording of recs
// on its n-th start: a check of several recordings starts one agent for
// each, in order.
func shimSequence(t *testing.T, recs ...string) string {
	t.Helper()
	dir := t.TempDir()
	var list strings.Builder
	for _, r := range recs {
		list.WriteString(asAgentShim(t, r) + "\n")
	}
	os.WriteFile(filepath.Join(dir, "list"), []byte(list.String()), 0o644)
	counter := shQuote(filepath.Join(dir, "n"))
	script := "#!/bin/sh\nn=$(cat " + counter + " 2>/dev/null || echo 0); n=$((n+1)); echo $n > " + counter + "\n" +
		"exec \"$(sed -n \"${n}p\" " + shQuote(filepath.Join(dir, "list")) + ")\" \"$@\"\n"
	shim := filepath.Join(dir, "claude")
	writeFile(shim, []byte(script), 0o755)
	return shim
}

// The edits that make each grade, on the hello fixture (one turn: init,
// assistant text, result).
var gradeEdits = []struct {
	name  string
	edits []string
	exit  int
	want  string
}{
	{"added key", []string{`"type":"result",`, `"type":"result","brand_new":1,`}, 3, "+.brand_new (new key)"},
	{"removed key", []string{`"stop_reason":"end_turn",`, ``}, 1, "-.stop_reason (key no longer sent)"},
	{"changed line kind", []string{`"subtype":"success"`, `"subtype":"error_during_execution"`}, 1, "result/success: now result/error_during_execution"},
	{"changed list value", []string{`"withdrawn_files_note_v2",`, ``}, 1, `.capabilities[] -"withdrawn_files_note_v2" (member no longer listed)`},
	{"added list member", []string{`"withdrawn_files_note_v2",`, `"withdrawn_files_note_v2","brand_new_v1",`}, 3, `.capabilities[] +"brand_new_v1" (new member)`},
	{"reordering", nil, 0, "moved within turn 1"},
}

// TestCheckGradesThroughAsAgent: replay --check of the hello fixture
// against an as-agent shim of a doctored copy grades each change, with its
// documented exit status and both versions named.
func TestCheckGradesThroughAsAgent(t *testing.T) {
	t.Parallel()
	livetest.SkipShort(t, "runs this test binary as the agent")
	rec := fixtureRec(t, "hello")
	for _, c := range gradeEdits {
		t.Run(c.name, func(t *testing.T) {
			played := doctored(t, "hello", c.edits...)
			if c.edits == nil {
				played = swappedFirstLines(t, rec)
			}
			ios, out, errb := fixtureIO("")
			code := Main([]string{"replay", "--check", "--bin", asAgentShim(t, played), "--timeout", "60s", rec}, ios)
			if code != c.exit || !strings.Contains(out.String(), c.want) {
				t.Errorf("exit %d, want %d; report lacks %q?\n%s\nstderr: %s", code, c.exit, c.want, out, errb)
			}
			if !strings.Contains(out.String(), "(claude "+fixtures.CLIVersion+") and the live agent (claude "+fixtures.CLIVersion+")") {
				t.Errorf("the versions are not named:\n%s", out)
			}
		})
	}
}

// swappedFirstLines is rec with its first two agent lines (system/init and
// the assistant's text) in the other order: the same turn, other timing.
func swappedFirstLines(t *testing.T, rec string) string {
	t.Helper()
	b, _ := os.ReadFile(rec)
	lines := strings.Split(string(b), "\n")
	var outs []int
	for i, l := range lines {
		if strings.Contains(l, `"dir":"out"`) {
			outs = append(outs, i)
		}
	}
	if len(outs) < 2 {
		t.Fatal("fewer than two agent lines")
	}
	msg := func(l string) string { return l[strings.Index(l, `"msg":`):] }
	a, c := lines[outs[0]], lines[outs[1]]
	lines[outs[0]] = a[:strings.Index(a, `"msg":`)] + msg(c)
	lines[outs[1]] = c[:strings.Index(c, `"msg":`)] + msg(a)
	path := filepath.Join(t.TempDir(), "swapped.rec")
	os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644)
	return path
}

// TestCheckFolderSummary: replay --check of a folder checks each
// recording in name order and prints one summary table (a row per
// recording: versions, grade, counts); the exit status is the worst
// grade's: 1 with a breaking one, else 3 with a compatible one, else 0.
func TestCheckFolderSummary(t *testing.T) {
	t.Parallel()
	livetest.SkipShort(t, "runs this test binary as the agent")
	hello := fixtureRec(t, "hello")
	orig, _ := os.ReadFile(hello)
	dir := t.TempDir()
	// One recording per grade edit, and one whose agent is unchanged.
	type row struct {
		name, grade      string
		played           string
		breaking, compat int
		timing           int
	}
	rows := []row{{name: "0-same.rec", grade: "none", played: hello}}
	for i, c := range gradeEdits {
		r := row{name: fmt.Sprintf("%d-%s.rec", i+1, strings.ReplaceAll(c.name, " ", "-"))}
		switch c.exit {
		case 1:
			r.grade, r.breaking = "breaking", 1
		case 3:
			r.grade, r.compat = "compatible", 1
		default:
			r.grade, r.timing = "timing", 1
		}
		if r.played = swappedFirstLines(t, hello); c.edits != nil {
			r.played = doctored(t, "hello", c.edits...)
		}
		rows = append(rows, r)
	}
	var played []string
	for _, r := range rows {
		os.WriteFile(filepath.Join(dir, r.name), orig, 0o644)
		played = append(played, r.played)
	}
	run := func(args ...string) (int, string, string) {
		ios, out, errb := fixtureIO("")
		code := Main(append([]string{"replay", "--check", "--timeout", "60s"}, args...), ios)
		return code, out.String(), errb.String()
	}
	code, out, errs := run("--bin", shimSequence(t, played...), dir)
	if code != 1 {
		t.Errorf("exit %d, want 1 (the worst: breaking)\n%s\nstderr: %s", code, out, errs)
	}
	v := regexp.QuoteMeta(fixtures.CLIVersion)
	for _, r := range rows {
		re := regexp.MustCompile(regexp.QuoteMeta(filepath.Join(dir, r.name)) + `\s+` + v + `\s+` + v + `\s+` +
			fmt.Sprintf(`%s\s+%d\s+%d\s+%d\n`, r.grade, r.breaking, r.compat, r.timing))
		if !re.MatchString(out) {
			t.Errorf("no summary row %+v:\n%s", r, out)
		}
	}
	if !strings.Contains(out, fmt.Sprintf("summary of %d recordings", len(rows))) || !strings.Contains(out, "worst: exit 1") {
		t.Errorf("no summary:\n%s", out)
	}
	// Several files: timing and compatible drift, nothing breaking: 3.
	path := func(i int) string { return filepath.Join(dir, rows[i].name) }
	timing, added := len(rows)-1, 1
	code, out, errs = run("--bin", shimSequence(t, played[timing], played[added]), path(timing), path(added))
	if code != 3 || !strings.Contains(out, "worst: exit 3") {
		t.Errorf("exit %d, want 3\n%s\nstderr: %s", code, out, errs)
	}
	// Timing only, or no drift at all: 0.
	code, out, errs = run("--bin", shimSequence(t, played[0], played[timing]), path(0), path(timing))
	if code != 0 || !strings.Contains(out, "worst: exit 0") {
		t.Errorf("exit %d, want 0\n%s\nstderr: %s", code, out, errs)
	}
	if code, _, errs := run(path(0), path(1), "--bin", "x"); code != 2 || !strings.Contains(errs, "flags go before the recordings") {
		t.Errorf("a flag after the recordings: exit %d %s", code, errs)
	}
	if code, _, errs := run(t.TempDir()); code != 2 || !strings.Contains(errs, "no recordings") {
		t.Errorf("an empty folder: exit %d %s", code, errs)
	}
}

// TestCheckReportsVersionCanary: a live agent outside the checked versions
// is warned about on stderr (spawn's canary, not hidden by the check) and
// named in the report.
func TestCheckReportsVersionCanary(t *testing.T) {
	t.Parallel()
	livetest.SkipShort(t, "runs this test binary as the agent")
	rec := fixtureRec(t, "hello")
	played := doctored(t, "hello", `"claude_code_version":"`+fixtures.CLIVersion+`"`, `"claude_code_version":"9.9.9"`)
	ios, out, errb := fixtureIO("")
	code := Main([]string{"replay", "--check", "--bin", asAgentShim(t, played), "--timeout", "60s", rec}, ios)
	if code != 0 {
		t.Errorf("exit %d (a version is not drift)\n%s\nstderr: %s", code, out, errb)
	}
	if !strings.Contains(errb.String(), "agentjq: warning: agent version 9.9.9 was not checked") {
		t.Errorf("the canary is hidden: stderr %s", errb)
	}
	if !strings.Contains(out.String(), "the live agent (claude 9.9.9)") || !strings.Contains(out.String(), "! warning: agent version 9.9.9") {
		t.Errorf("the report does not name the version:\n%s", out)
	}
	// Over several recordings: warned once, marked in the summary.
	ios, out, errb = fixtureIO("")
	code = Main([]string{"replay", "--check", "--bin", shimSequence(t, played, played), "--timeout", "60s", rec, rec}, ios)
	if code != 0 || strings.Count(errb.String(), "was not checked") != 1 {
		t.Errorf("exit %d; the canary not once on stderr: %s", code, errb)
	}
	if !strings.Contains(out.String(), " 9.9.9* ") || !strings.Contains(out.String(), "* not a checked version (checked: ") {
		t.Errorf("the summary does not mark the unchecked version:\n%s", out)
	}
}

// TestCheckUpdateFolder: --update over a folder replaces each recording
// that drifted (a .rec.gz stays gzip), leaves the others alone, and exits
// 0; --against takes one recording.
func TestCheckUpdateFolder(t *testing.T) {
	t.Parallel()
	livetest.SkipShort(t, "runs this test binary as the agent")
	orig, _ := os.ReadFile(fixtureRec(t, "hello"))
	dir := t.TempDir()
	same, gz := filepath.Join(dir, "a.rec"), filepath.Join(dir, "b.rec.gz")
	os.WriteFile(same, orig, 0o644)
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(orig)
	zw.Close()
	os.WriteFile(gz, z.Bytes(), 0o644)
	played := []string{fixtureRec(t, "hello"), doctored(t, "hello", gradeEdits[0].edits...)}
	ios, out, errb := fixtureIO("")
	code := Main([]string{"replay", "--check", "--update", "--timeout", "60s", "--bin", shimSequence(t, played...), dir}, ios)
	if code != 0 || !strings.Contains(out.String(), "compatible (updated)") {
		t.Fatalf("exit %d\n%s\nstderr: %s", code, out, errb)
	}
	if b, _ := os.ReadFile(same); !bytes.Equal(b, orig) {
		t.Error("a recording without drift was rewritten")
	}
	f, err := os.Open(gz)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, entries, err := recording.ReadAll(f, gz, nil)
	if err != nil {
		t.Fatalf("the updated .rec.gz does not read: %v", err)
	}
	var found bool
	for _, e := range entries {
		found = found || bytes.Contains(e.Msg, []byte(`"brand_new":1`))
	}
	if !found || h.AgentVersion != fixtures.CLIVersion {
		t.Errorf("the .rec.gz was not updated from the new run (version %q)", h.AgentVersion)
	}
	ios, _, errb = fixtureIO("")
	if code := Main([]string{"replay", "--check", "--against", same, same, gz}, ios); code != 2 || !strings.Contains(errb.String(), "one FILE") {
		t.Errorf("--against with two recordings: exit %d %s", code, errb)
	}
}
