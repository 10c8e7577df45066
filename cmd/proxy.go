package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/alecthomas/kong"

	"github.com/agentjq/agentjq/internal/bridge"
	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/internal/syncio"
	"github.com/agentjq/agentjq/iostreams"
)

// ProxyCmd is the proxy subcommand: agentjq as the claude a client starts.
type ProxyCmd struct {
	Bin             string        `placeholder:"PATH" help:"The real agent CLI (default: $$AGENTJQ_AGENT_BIN, the config file's \"bin\", else the first claude on PATH that is not agentjq or a shim running agentjq proxy)."`
	Policy          []string      `placeholder:"FILE" help:"Approval policy files (.json rules, .jq programs); repeatable; added to $$AGENTJQ_POLICY (a list separated by ':') and the config file's \"policy\". A deny is answered by agentjq; anything else goes to the client."`
	Approver        string        `placeholder:"CMD" help:"An approver command asked after the policies (default: $$AGENTJQ_APPROVER); only its deny is final."`
	ApproverFormat  string        `enum:"control,hook" default:"control" help:"How the approver speaks: control or hook (see spawn)."`
	ApprovalTimeout time.Duration `default:"1m" help:"Deny a permission request the policy and approver have not decided within this long (the client is asked only after them)."`
	Record          string        `placeholder:"FILE" help:"Record the session to FILE, each line and decision marked with its party (default: $$AGENTJQ_RECORD); a directory gets one file per session."`
	RedactFlags
	Events    int    `placeholder:"FD" help:"Write agentjq's own events (decisions, warnings, exit) to file descriptor FD, e.g. 2 for stderr or 3 (default: $$AGENTJQ_EVENTS; else only the recording keeps them). The client's stdout never carries them."`
	Config    string `placeholder:"FILE" help:"A JSON config file of agentjq options (default: $$AGENTJQ_PROXY_CONFIG): {\"bin\":..., \"policy\":[...], \"approver\":..., \"record\":..., \"events\":N, \"hook\":[...], \"mcp_tool\":[...], \"mcp_server\":[...]}; relative paths are relative to the file."`
	NoSandbox bool   `help:"Run the agent's commands without the OS sandbox (warns once); otherwise the client's --settings are merged with agentjq's sandbox, the stricter value winning."`
	HostFlags

	AgentArgs []string `arg:"" optional:"" passthrough:"" help:"The agent's own arguments, passed on unchanged but for --settings, which is merged with agentjq's sandbox (the -- before them may be left out)."`
}

// proxyMarker holds the pid of a running proxy in the agent's environment:
// a proxy whose parent (or grandparent, through a shim's shell) is a proxy
// was started by itself.
const proxyMarker = "AGENTJQ_PROXY_PID"

// Help is shown after the flags.
func (c *ProxyCmd) Help() string {
	return `Stand in for claude in a program that speaks its stream-json protocol
itself (the Agent SDKs, IDE plugins): that program (the client) starts
agentjq proxy with the CLI's own arguments, and agentjq starts the real CLI
with the same arguments and environment. The client sees the CLI's stdout
byte for byte and gets its exit status; agentjq's events go to --events and
the recording. Clients control the argv, so agentjq's options also come from
the environment (AGENTJQ_POLICY, AGENTJQ_APPROVER, AGENTJQ_RECORD,
AGENTJQ_EVENTS, AGENTJQ_AGENT_BIN) or a config file (AGENTJQ_PROXY_CONFIG).

can_use_tool goes through the policies first: a deny is answered by agentjq
and the client never sees the request; anything else is the client's to
answer, and its answer goes to the CLI (a policy allow never overrides the
client's deny; an edited input must pass the policy too). hook_callback and
mcp_message for agentjq's own --hook, --mcp-tool and --mcp-server are
answered by agentjq, all others by the client; agentjq's registrations are
merged into the client's initialize. Every request gets exactly one answer.
With a policy or an approver, agentjq's own PreToolUse hook is merged in
too (under a renamed id), so the policy also sees the calls the CLI runs
without asking (reads inside the project, tools the app allows): its deny
holds for them; what it does not deny, the CLI and the app decide as they
would without agentjq.
A policy's "default" applies as usual: write "default": "ask" to leave what
no rule matches to the client.

When the client closes its stdin, the CLI's stdin closes once agentjq owes the
CLI nothing: while a turn of the client's runs it stays open, so that a policy
deny or an answer of agentjq's own hooks and servers still reaches the CLI. It
closes at the turn's result, when the CLI asks what only the client could
answer, or after two grace periods ($AGENTJQ_GRACE, default 5s) in which the
CLI wrote nothing. SIGINT, SIGTERM and SIGHUP are passed on to the CLI; a
third in a row kills it.

A fixture for an app's own CI: run the app once against the real CLI with
AGENTJQ_RECORD=fixture.ndjson (or --record in the shim); in CI point the app
at a shim running 'agentjq replay --as-agent fixture.ndjson -- "$@"'. The
replay expects only the app's lines, answers what agentjq answered (a policy
deny, agentjq's own hooks) itself, and answers an initialize the recording
lacks from the recorded one.

Examples:
  printf '#!/bin/sh\nexec agentjq proxy --policy /etc/agent-policy.json -- "$@"\n' > claude-proxy
  AGENTJQ_RECORD=fixture.ndjson node app.mjs   # app: pathToClaudeCodeExecutable: "./claude-proxy"
  printf '#!/bin/sh\nexec agentjq replay --as-agent fixture.ndjson -- "$@"\n' > claude-replay
  AGENTJQ_POLICY=deny-net.json:ci.jq AGENTJQ_EVENTS=2 node app.mjs
  agentjq spawn --bin ./claude-proxy -p 'fix the test'`
}

// proxyConfig is the config file.
type proxyConfig struct {
	Bin            string     `json:"bin"`
	Policy         stringList `json:"policy"`
	Approver       string     `json:"approver"`
	ApproverFormat string     `json:"approver_format"`
	Record         string     `json:"record"`
	Events         int        `json:"events"`
	Hook           stringList `json:"hook"`
	MCPTool        stringList `json:"mcp_tool"`
	MCPServer      stringList `json:"mcp_server"`
}

// stringList is a string or a list of strings.
type stringList []string

func (l *stringList) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*l = []string{s}
		return nil
	}
	var list []string
	if err := json.Unmarshal(b, &list); err != nil {
		return errors.New("want a string or a list of strings")
	}
	*l = list
	return nil
}

// settle fills what the flags left unset from the environment, then from
// the config file. Lists add up: every policy named anywhere applies.
func (c *ProxyCmd) settle(ios *iostreams.IO) error {
	path := c.Config
	if path == "" {
		path = ios.Getenv("AGENTJQ_PROXY_CONFIG")
	}
	var cfg proxyConfig
	if path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return usageError("proxy config: %v", err)
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&cfg); err != nil {
			return usageError("proxy config %s: %v", path, err)
		}
		base := filepath.Dir(path)
		rel := func(p string) string {
			if p == "" || filepath.IsAbs(p) {
				return p
			}
			return filepath.Join(base, p)
		}
		for i := range cfg.Policy {
			cfg.Policy[i] = rel(cfg.Policy[i])
		}
		cfg.Record = rel(cfg.Record)
		if strings.ContainsRune(cfg.Bin, filepath.Separator) {
			cfg.Bin = rel(cfg.Bin)
		}
	}
	first := func(vals ...string) string {
		for _, v := range vals {
			if v != "" {
				return v
			}
		}
		return ""
	}
	c.Bin = first(c.Bin, ios.Getenv("AGENTJQ_AGENT_BIN"), cfg.Bin)
	c.Approver = first(c.Approver, ios.Getenv("AGENTJQ_APPROVER"), cfg.Approver)
	if cfg.ApproverFormat != "" && c.ApproverFormat == "control" {
		c.ApproverFormat = cfg.ApproverFormat
	}
	c.Record = first(c.Record, ios.Getenv("AGENTJQ_RECORD"), cfg.Record)
	if env := ios.Getenv("AGENTJQ_POLICY"); env != "" {
		for _, p := range filepath.SplitList(env) {
			if p != "" {
				c.Policy = append(c.Policy, p)
			}
		}
	}
	c.Policy = append(c.Policy, cfg.Policy...)
	if c.Events == 0 {
		if v := ios.Getenv("AGENTJQ_EVENTS"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return usageError("AGENTJQ_EVENTS=%s: want a file descriptor number", v)
			}
			c.Events = n
		} else {
			c.Events = cfg.Events
		}
	}
	c.Hook = append(c.Hook, cfg.Hook...)
	c.MCPTool = append(c.MCPTool, cfg.MCPTool...)
	c.MCPServer = append(c.MCPServer, cfg.MCPServer...)
	return nil
}

// Run runs proxy.
func (c *ProxyCmd) Run(ctx context.Context, ios *iostreams.IO, kctx *kong.Context) error {
	agentArgs := c.AgentArgs
	if len(agentArgs) > 0 && agentArgs[0] == "--" {
		agentArgs = agentArgs[1:]
	}
	if err := c.settle(ios); err != nil {
		return err
	}
	if err := startedByItself(ios); err != nil {
		return err
	}
	bin, err := c.realAgent(ios)
	if err != nil {
		return err
	}

	shared := *ios
	shared.Err = &syncio.Writer{W: ios.Err}
	ios = &shared
	// spawn's session options give the approval chain and the hosted
	// hooks and servers; the argv, environment and streams are the
	// client's.
	flags := SpawnFlags{
		Agent: "claude", Bin: bin, ApprovalTimeout: c.ApprovalTimeout,
		Policy: c.Policy, Approver: c.Approver, ApproverFormat: c.ApproverFormat,
		NoPrompt: true, HostFlags: c.HostFlags, proxied: true, NoSandbox: c.NoSandbox,
	}
	opts, chain, err := sessionOptions(ios, flags, nil)
	if err != nil {
		return err
	}
	defer chain.Close()
	sb, err := sessionSandbox(ios, flags, opts.Dir, chain, agentArgs)
	if err != nil {
		return err
	}
	defer sb.done()
	agentArgs, opts.Watch = sb.args, sb.watch
	opts.Path, opts.Args = bridge.Command(bridge.Profile{}, bin, runtime.GOOS, bridge.PassFlags{}, agentArgs)
	opts.Env = append(append(append([]string(nil), ios.Environ...), sb.env...), proxyMarker+"="+strconv.Itoa(os.Getpid()))
	opts.NoEvents, opts.Echo = true, false
	fwd := &bridge.Forward{}
	opts.Forward = fwd
	switch {
	case c.Events == 2:
		fwd.Events = ios.Err
	case c.Events > 0:
		events := os.NewFile(uintptr(c.Events), "events")
		if _, err := events.Stat(); err != nil {
			return usageError("--events %d: not an open file descriptor", c.Events)
		}
		defer events.Close()
		fwd.Events = events
	}

	var rec *openedRecording
	if c.Record != "" {
		path := recordPath(c.Record)
		argv := append([]string{"agentjq"}, kctx.Args...)
		version := probeAgentVersion(bin, ios.Environ)
		if rec, err = openRecordingOf(ios, path, c.RedactFlags, sessionOf(flags, agentArgs), argv, opts.Dir, version); err != nil {
			return err
		}
		opts.Tap = rec.w.Tap
		// A recording that failed (disk full) is the session's error, as
		// under spawn: the client sees the proxy exit 1.
		opts.TapErr = rec.Flush
		fwd.TapParty = rec.w.TapParty
	}

	sigs, stop := sessionSignals()
	defer stop()
	opts.Signals = sigs

	rep, runErr := bridge.Run(ctx, opts)
	if runErr == nil {
		runErr = silentExit(rep.ExitCode)
	}
	if rec != nil {
		return closeRecording(ios, rec, runErr)
	}
	return runErr
}

// recordPath names the recording: a directory gets a file per session.
func recordPath(p string) string {
	if st, err := os.Stat(p); (err == nil && st.IsDir()) || strings.HasSuffix(p, string(filepath.Separator)) {
		name := fmt.Sprintf("proxy-%s-%d.ndjson", time.Now().UTC().Format("20060102T150405.000Z"), os.Getpid())
		return filepath.Join(p, name)
	}
	return p
}

// startedByItself refuses to run when the proxy's parent or grandparent
// is a proxy: the "real" CLI it found runs agentjq proxy again.
func startedByItself(ios *iostreams.IO) error {
	v := ios.Getenv(proxyMarker)
	if v == "" {
		return nil
	}
	pid, err := strconv.Atoi(v)
	if err != nil {
		return nil
	}
	for _, anc := range ancestors(2) {
		if anc == pid {
			return &exitError{code: protocol.ExitNotFound, err: errors.New("proxy: started by agentjq proxy itself: the agent binary it ran is a shim for agentjq proxy; point --bin or $AGENTJQ_AGENT_BIN at the real CLI")}
		}
	}
	return nil
}

// ancestors returns the pids of up to n ancestors of this process.
func ancestors(n int) []int {
	pids := []int{os.Getppid()}
	for len(pids) < n {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pids[len(pids)-1]))
		if err != nil {
			break
		}
		// pid (comm) state ppid ...; comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(b, ')')
		fields := strings.Fields(string(b[i+1:]))
		if i < 0 || len(fields) < 2 {
			break
		}
		ppid, err := strconv.Atoi(fields[1])
		if err != nil || ppid <= 1 {
			break
		}
		pids = append(pids, ppid)
	}
	return pids
}

// realAgent finds the CLI to run: --bin (settled with the environment and
// the config), else the first claude on PATH that is neither agentjq
// itself nor a shim that runs agentjq proxy.
func (c *ProxyCmd) realAgent(ios *iostreams.IO) (string, error) {
	self, _ := os.Executable()
	selfSt, selfErr := os.Stat(self)
	isSelf := func(p string) bool {
		st, err := os.Stat(p)
		return err == nil && selfErr == nil && os.SameFile(st, selfSt)
	}
	if c.Bin != "" {
		bin := c.Bin
		if !strings.ContainsRune(bin, filepath.Separator) {
			found, err := lookPath(bin, ios.Getenv("PATH"))
			if err != nil {
				return "", &exitError{code: protocol.ExitNotFound, err: fmt.Errorf("proxy: agent %q not found on PATH", bin)}
			}
			bin = found
		}
		if isSelf(bin) {
			return "", usageError("proxy: --bin %s is agentjq itself", bin)
		}
		return bin, nil
	}
	for _, dir := range filepath.SplitList(ios.Getenv("PATH")) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, "claude")
		st, err := os.Stat(p)
		if err != nil || st.IsDir() || st.Mode()&0o111 == 0 || isSelf(p) || isProxyShim(p) {
			continue
		}
		return p, nil
	}
	return "", &exitError{code: protocol.ExitNotFound,
		err: errors.New("proxy: no claude on PATH other than agentjq itself; point --bin or $AGENTJQ_AGENT_BIN at the real CLI")}
}

// isProxyShim reports whether p is a short script that runs agentjq proxy.
func isProxyShim(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, 4097))
	return len(b) <= 4096 && bytes.HasPrefix(b, []byte("#!")) &&
		bytes.Contains(b, []byte("agentjq")) && bytes.Contains(b, []byte("proxy"))
}

// proxyArgs lets the client's argv follow proxy's own flags without a --:
// the first argument that is not one of proxy's flags starts the agent's.
func proxyArgs(app *kong.Application, args []string) []string {
	if len(args) == 0 || args[0] != "proxy" {
		return args
	}
	var node *kong.Node
	for _, n := range app.Children {
		if n.Name == "proxy" {
			node = n
		}
	}
	if node == nil {
		return args
	}
	flags := map[string]*kong.Flag{}
	for _, group := range node.AllFlags(false) {
		for _, f := range group {
			flags["--"+f.Name] = f
			if f.Short != 0 {
				flags["-"+string(f.Short)] = f
			}
		}
	}
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return args
		}
		name, _, hasValue := strings.Cut(a, "=")
		f := flags[name]
		if f == nil {
			return append(append(append([]string{}, args[:i]...), "--"), args[i:]...)
		}
		if !hasValue && !f.IsBool() && !f.IsCounter() {
			i++ // its value
		}
	}
	return args
}
