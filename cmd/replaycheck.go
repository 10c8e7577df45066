package cmd

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/alecthomas/kong"

	"github.com/agentjq/agentjq/approve"
	"github.com/agentjq/agentjq/internal/buildinfo"
	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/internal/syncio"
	"github.com/agentjq/agentjq/iostreams"
	"github.com/agentjq/agentjq/recording"
	"github.com/agentjq/agentjq/replay"
)

// The live drift check is replay.LiveCheck; this file maps spawn's flags
// to and from the session settings that a recording's header stores.

// Defaults of the flags whose value "not given" replay --check must tell
// from a value given (see SpawnFlags and HostFlags).
const (
	defaultAgent          = "claude"
	defaultHookTimeout    = 60 * time.Second
	defaultMCPToolTimeout = 2 * time.Minute
)

// sessionOf is the settings of a spawn or record session, for its
// recording's header.
func sessionOf(f SpawnFlags, agentArgs []string) recording.Session {
	s := recording.Session{
		Agent: f.Agent, AgentArgs: agentArgs, Model: f.Model, PermissionMode: f.PermissionMode,
		AllowedTools: f.AllowedTools, DisallowedTools: f.DisallowedTools, SystemPrompt: f.SystemPrompt,
		AppendSystemPrompt: f.AppendSystem, MaxTurns: f.MaxTurns, Partial: f.Partial, Init: f.Init,
		MCPTool: f.MCPTool, MCPToolDesc: f.MCPToolDesc, MCPToolSchema: f.MCPToolSchema, MCPServer: f.MCPServer,
		Hook: f.Hook, Policy: f.Policy, Approver: f.Approver, NoPrompt: f.NoPrompt, OneShot: f.Prompt != "",
	}
	if f.HookTimeout != defaultHookTimeout && f.HookTimeout != 0 {
		s.HookTimeout = f.HookTimeout.String()
	}
	if f.MCPToolTimeout != defaultMCPToolTimeout && f.MCPToolTimeout != 0 {
		s.MCPToolTimeout = f.MCPToolTimeout.String()
	}
	return s
}

// givenSession is the settings given to replay --check itself: only what
// differs from the flags' defaults counts as given.
func givenSession(f SpawnFlags, agentArgs []string) recording.Session {
	s := sessionOf(f, agentArgs)
	if s.Agent == defaultAgent {
		s.Agent = ""
	}
	s.Policy, s.Approver, s.NoPrompt, s.OneShot = nil, "", false, false
	return s
}

// applySession sets the flags of a check's session from s; the rest
// (binary, directory, timeouts) stays as given to replay --check. Nothing
// asks a person: permission answers come from the recording.
func applySession(f *SpawnFlags, s recording.Session) error {
	f.Agent, f.Model, f.PermissionMode = s.Agent, s.Model, s.PermissionMode
	f.AllowedTools, f.DisallowedTools = s.AllowedTools, s.DisallowedTools
	f.SystemPrompt, f.AppendSystem, f.MaxTurns = s.SystemPrompt, s.AppendSystemPrompt, s.MaxTurns
	f.Partial, f.Init = s.Partial, s.Init
	f.MCPTool, f.MCPToolDesc, f.MCPToolSchema, f.MCPServer, f.Hook = s.MCPTool, s.MCPToolDesc, s.MCPToolSchema, s.MCPServer, s.Hook
	for _, d := range []struct {
		v   string
		dst *time.Duration
	}{{s.HookTimeout, &f.HookTimeout}, {s.MCPToolTimeout, &f.MCPToolTimeout}} {
		if d.v == "" {
			continue
		}
		t, err := time.ParseDuration(d.v)
		if err != nil {
			return fmt.Errorf("the recording's session settings: %w", err)
		}
		*d.dst = t
	}
	f.Policy, f.Approver, f.NoPrompt = nil, "", true
	f.Prompt, f.Resume, f.SessionID = "", "", ""
	return nil
}

// liveCheck re-runs the recording against the live agent into a temporary
// recording and returns its path (the caller removes its directory).
func (c *ReplayCmd) liveCheck(ctx context.Context, ios *iostreams.IO, h recording.Header, entries []recording.Entry, liveArgs []string) (path string, stuck string, err error) {
	run := func(ctx context.Context, s recording.Session, workdir string, stdin io.Reader, tap func(protocol.Direction, []byte, protocol.Known), decide approve.Decider) error {
		f := c.SpawnFlags
		if err := applySession(&f, s); err != nil {
			return err
		}
		f.Cwd = workdir
		if f.Timeout == 0 {
			f.Timeout = 10 * time.Minute
		}
		sub := *ios
		sub.In, sub.Out = stdin, io.Discard
		var errBuf strings.Builder
		sub.Err = &syncio.Writer{W: &errBuf}
		sub.InTTY, sub.OutTTY = false, false
		err := runSpawnWith(ctx, &sub, f, s.AgentArgs, tapFunc(tap), decide)
		if err != nil && !isSessionExit(err) {
			io.WriteString(ios.Err, errBuf.String())
			return err
		}
		return nil
	}
	return replay.LiveCheck(ctx, h, entries, replay.CheckOptions{
		Given:          givenSession(c.SpawnFlags, liveArgs),
		Workdir:        c.Cwd,
		Run:            run,
		Legacy:         legacySession,
		LookupEnv:      ios.LookupEnv,
		AgentjqVersion: buildinfo.Version(),
	})
}

// isSessionExit tells the agent's own exit status (a failed turn is a
// transcript like any other) from a failure to run the session at all.
func isSessionExit(err error) bool {
	var q *exitError
	return errors.As(err, &q) && q.quiet
}

// legacySession reads the settings of a recording made before headers
// stored them from its argv (agentjq spawn or record flags).
func legacySession(argv []string) (recording.Session, error) {
	f, args, err := recordedSession(argv)
	if err != nil {
		return recording.Session{}, err
	}
	return sessionOf(f, args), nil
}

// recordedSession parses spawn (or record) flags: an old recording's
// argv, a fixture scenario's flags.
func recordedSession(argv []string) (SpawnFlags, []string, error) {
	var g struct {
		Spawn  SpawnCmd  `cmd:""`
		Record RecordCmd `cmd:""`
	}
	if len(argv) < 2 {
		return SpawnFlags{Agent: defaultAgent}, nil, nil
	}
	p, err := kong.New(&g, kong.Exit(func(int) { panic(exitRequest{}) }), kong.Writers(io.Discard, io.Discard))
	if err != nil {
		return SpawnFlags{}, nil, err
	}
	args := argv[1:]
	if args[0] == "record" && !hasArg(args, "-o") && !hasArg(args, "--output") {
		args = append(append([]string{}, args...), "-o", "x")
	}
	kctx, err := func() (k *kong.Context, err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("unparsable argv %q", argv)
			}
		}()
		return p.Parse(args)
	}()
	if err != nil {
		return SpawnFlags{}, nil, fmt.Errorf("the recording's argv: %w", err)
	}
	f, args := g.Spawn.SpawnFlags, g.Spawn.AgentArgs
	if strings.HasPrefix(kctx.Command(), "record") {
		f, args = g.Record.SpawnFlags, g.Record.AgentArgs
	}
	args, err = splitAgentArgs(args)
	if err != nil {
		return SpawnFlags{}, nil, fmt.Errorf("the recording's argv: %w", err)
	}
	return f, args, nil
}

func hasArg(args []string, name string) bool {
	for _, a := range args {
		if a == name || strings.HasPrefix(a, name+"=") {
			return true
		}
	}
	return false
}

// checkFiles splits replay --check's arguments: the recordings (FILE,
// then any more before --; a folder stands for its *.rec and *.rec.gz
// files) and the agent's arguments (after --).
func (c *ReplayCmd) checkFiles() (files, agentArgs []string, err error) {
	args := append([]string{c.File}, c.AgentArgs...)
	named := args
	for i, a := range args {
		if a == "--" {
			named, agentArgs = args[:i], args[i+1:]
			break
		}
	}
	for _, name := range named {
		if strings.HasPrefix(name, "-") && name != "-" {
			return nil, nil, usageError("%s: flags go before the recordings (arguments for the agent after --)", name)
		}
		if name == "-" {
			return nil, nil, usageError("replay --check needs the recording as a file")
		}
		st, err := os.Stat(name)
		if err != nil {
			return nil, nil, err
		}
		if !st.IsDir() {
			files = append(files, name)
			continue
		}
		var in []string
		for _, pat := range []string{"*.rec", "*.rec.gz"} {
			m, _ := filepath.Glob(filepath.Join(name, pat))
			in = append(in, m...)
		}
		if len(in) == 0 {
			return nil, nil, usageError("%s: no recordings (*.rec, *.rec.gz) in this folder", name)
		}
		sort.Strings(in)
		files = append(files, in...)
	}
	return files, agentArgs, nil
}

// checkResult is the check of one recording.
type checkResult struct {
	file    string
	rep     replay.Report
	err     error
	updated bool
}

// exitCode is the result's exit status: a recording that cannot be read
// is 5, another error 1, like breaking drift; a recording --update
// replaced is 0.
func (r checkResult) exitCode() int {
	var bad *recording.LineError
	switch {
	case errors.As(r.err, &bad):
		return ExitBadRecording
	case r.err != nil:
		return protocol.ExitError
	case r.updated:
		return protocol.ExitSuccess
	}
	return r.rep.Grade.ExitCode()
}

// check grades each recording's drift from a new transcript (another
// recording, --against, or a live re-run of its inputs), prints a report
// for each that drifted and, for several, one summary table. The exit
// status is the worst: 1 (breaking drift, or an error), 3 (compatible
// drift only), 0 (no drift, or timing only).
func (c *ReplayCmd) check(ctx context.Context, ios *iostreams.IO) error {
	files, agentArgs, err := c.checkFiles()
	if err != nil {
		return err
	}
	if c.Against != "" && len(agentArgs) > 0 {
		return usageError("agent arguments go with a live --check, not with --against")
	}
	if c.Against != "" && len(files) > 1 {
		return usageError("--against compares one recording with another: give one FILE")
	}
	warned := map[string]bool{}
	var results []checkResult
	for _, file := range files {
		r := c.checkOne(ctx, ios, file, agentArgs)
		if r.err != nil && len(files) > 1 {
			fmt.Fprintf(ios.Err, "agentjq: %s: %v\n", file, r.err)
		}
		// The live agent's version canary, once a run: the check's own
		// sessions must not hide it.
		for _, w := range r.rep.Warnings {
			if !warned[w] {
				warned[w] = true
				fmt.Fprintf(ios.Err, "agentjq: warning: %s\n", w)
			}
		}
		results = append(results, r)
		if ctx.Err() != nil {
			break
		}
	}
	worst := protocol.ExitSuccess
	for _, r := range results {
		worst = worseExit(worst, r.exitCode())
	}
	if len(files) > 1 {
		printSummary(ios.Out, results, worst)
	}
	for _, r := range results {
		if r.err != nil && len(results) == 1 {
			return replayExit(r.err)
		}
	}
	return silentExit(worst)
}

// worseExit orders check exit statuses: 1 over 3 over 0.
func worseExit(a, b int) int {
	rank := func(c int) int {
		switch c {
		case protocol.ExitSuccess:
			return 0
		case replay.ExitCompatible:
			return 1
		}
		return 2
	}
	if rank(b) > rank(a) {
		return b
	}
	return a
}

// checkOne checks one recording and prints its report.
func (c *ReplayCmd) checkOne(ctx context.Context, ios *iostreams.IO, file string, agentArgs []string) checkResult {
	res := checkResult{file: file}
	oldH, old, err := readRecordingFile(ios, file, c.Lenient)
	if err != nil {
		res.err = err
		return res
	}
	against, label := c.Against, c.Against
	var notes []string
	if against == "" {
		path, stuck, err := c.liveCheck(ctx, ios, oldH, old, agentArgs)
		if path != "" {
			defer os.RemoveAll(filepath.Dir(path))
		}
		if err != nil {
			res.err = err
			return res
		}
		against, label = path, "the live agent"
		if stuck != "" {
			notes = append(notes, stuck)
		}
	}
	curH, cur, err := readRecordingFile(ios, against, c.Lenient)
	if err != nil {
		res.err = err
		return res
	}
	res.rep = replay.GradeRecordings(old, cur, notes...)
	if res.rep.RecordedVersion == "" {
		res.rep.RecordedVersion = oldH.AgentVersion
	}
	if res.rep.LiveVersion == "" {
		res.rep.LiveVersion = curH.AgentVersion
	}
	printReport(ios.Out, file, label, oldH.Agent, curH.Agent, res.rep)
	if c.Update && res.rep.Grade > replay.Timing {
		if err := copyFile(against, file); err != nil {
			res.err = err
			return res
		}
		res.updated = true
		fmt.Fprintf(ios.Err, "agentjq: %s updated from %s\n", file, label)
	}
	return res
}

// printReport writes one recording's findings, worst first; nothing when
// there is no difference at all.
func printReport(w io.Writer, file, label, oldAgent, curAgent string, r replay.Report) {
	if len(r.Findings) == 0 && len(r.Warnings) == 0 {
		return
	}
	head := "drift between"
	if r.Grade <= replay.Timing {
		head = "no drift between"
	}
	fmt.Fprintf(w, "%s %s (%s) and %s (%s): %s\n", head, file, replay.Describe(oldAgent, r.RecordedVersion),
		label, replay.Describe(curAgent, r.LiveVersion), gradeText(r.Grade))
	for _, f := range r.Findings {
		fmt.Fprintln(w, f.String())
	}
	for _, m := range r.Warnings {
		fmt.Fprintln(w, "! warning: "+m)
	}
}

func gradeText(g replay.Grade) string {
	switch g {
	case replay.Breaking:
		return "breaking drift (exit 1)"
	case replay.Compatible:
		return fmt.Sprintf("compatible drift (exit %d)", replay.ExitCompatible)
	case replay.Timing:
		return "timing only (exit 0)"
	}
	return "no drift (exit 0)"
}

// printSummary writes one table for a check of several recordings.
func printSummary(w io.Writer, results []checkResult, worst int) {
	fmt.Fprintf(w, "summary of %d recordings:\n", len(results))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RECORDING\tRECORDED\tLIVE\tGRADE\tBREAKING\tCOMPATIBLE\tTIMING")
	unchecked := false
	for _, r := range results {
		if r.err != nil {
			fmt.Fprintf(tw, "%s\t-\t-\terror\t%v\t\t\n", r.file, oneLine(r.err.Error()))
			continue
		}
		live := orDash(r.rep.LiveVersion)
		if r.rep.LiveVersion != "" && !protocol.VersionChecked(r.rep.LiveVersion) {
			live += "*"
			unchecked = true
		}
		grade := r.rep.Grade.String()
		if r.updated {
			grade += " (updated)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%d\n", r.file, orDash(r.rep.RecordedVersion), live, grade,
			r.rep.Count(replay.Breaking), r.rep.Count(replay.Compatible), r.rep.Count(replay.Timing))
	}
	tw.Flush()
	if unchecked {
		fmt.Fprintf(w, "* not a checked version (checked: %s)\n", strings.Join(protocol.CheckedVersions, ", "))
	}
	fmt.Fprintf(w, "worst: exit %d (%s)\n", worst, map[int]string{
		protocol.ExitSuccess: "no drift", replay.ExitCompatible: "compatible drift", protocol.ExitError: "breaking drift or an error"}[worst])
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func oneLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// copyFile replaces dst with src through a temporary file and a rename,
// so a fixture is never left half written; a .gz dst is written
// compressed.
func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err == nil {
		b, err = withAgentVersion(b)
	}
	if err != nil {
		return err
	}
	if strings.HasSuffix(dst, ".gz") {
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		if _, err := zw.Write(b); err != nil {
			return err
		}
		if err := zw.Close(); err != nil {
			return err
		}
		b = z.Bytes()
	}
	tmp := dst + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, dst)
}
