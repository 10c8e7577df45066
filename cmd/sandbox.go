package cmd

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/agentjq/agentjq/approve"
	"github.com/agentjq/agentjq/internal/bridge"
	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/iostreams"
	"github.com/agentjq/agentjq/protect"
	"github.com/agentjq/agentjq/sandbox"
)

// defaultPath is the search path of a process without PATH.
const defaultPath = "/usr/local/bin:/usr/bin:/bin"

// sandboxGOOS is the system whose sandbox is checked (tests set another).
var sandboxGOOS = runtime.GOOS

// sessionSandbox turns Claude Code's sandbox on for a session: it checks
// that the sandbox can run here (else the agent is not started: exit 127
// and what to install), derives its settings from the policy, merges them
// with the client's own --settings (the stricter value wins) and returns
// the agent arguments with the one merged --settings, and the watch that
// reports what the sandbox blocked. --no-sandbox, or a policy's
// "sandbox": {"enabled": false}, passes the arguments on as they are and
// warns once on stderr and in the event stream.
func sessionSandbox(ios *iostreams.IO, f SpawnFlags, dir string, chain *approve.Chain, agentArgs []string) (sandboxed, error) {
	sp := chain.Sandbox()
	if f.NoSandbox || sp.Off != "" {
		why := "--no-sandbox"
		if !f.NoSandbox {
			why = "the policy at " + sp.Off
		}
		fmt.Fprintf(ios.Err, "agentjq: warning: the sandbox is off (%s): the agent's commands run without file, read and network limits\n", why)
		w := sandbox.NewWatcher(nil, dir)
		return sandboxed{args: agentArgs, done: func() {},
			watch: func(typ, subtype string, line []byte) ([]any, string) { return w.Line(typ, subtype, line), "" }}, nil
	}
	path := ios.Getenv("PATH")
	if path == "" {
		path = defaultPath // as execvp(3) searches without PATH
	}
	look := func(name string) (string, error) { return lookPath(name, path) }
	if err := sandbox.Check(sandboxGOOS, look); err != nil {
		return sandboxed{}, &exitError{code: protocol.ExitNotFound, err: err}
	}
	home := ios.Getenv("HOME")
	caches := sandbox.Caches(sandbox.Env{Getenv: ios.Getenv, LookPath: look, Environ: bridge.ChildEnv(ios.Environ)})
	for _, c := range caches {
		// The sandbox opens only paths that exist: a cache the tool has
		// not made yet is made now, as the tool would make it.
		os.MkdirAll(c, 0o755)
	}
	pol := sandbox.Policy{
		Project: dir, Home: home,
		AllowWrite: append(sp.AllowWrite, caches...),
		DenyWrite:  sp.DenyWrite, DenyRead: sp.DenyRead, AllowRead: sp.AllowRead,
		Domains: sp.Domains, HideEnv: sp.HideEnv,
	}
	settings := sandbox.Settings(pol)
	// What the sandbox holds: the file tools refuse it too, and a control
	// file not among it when the session ends was made during it.
	var held []string
	if fs, ok := settings["filesystem"].(map[string]any); ok {
		held, _ = fs["denyWrite"].([]string)
	}
	chain.SetHeld(held)
	rest, client := takeSettings(agentArgs)
	merged, notes, err := sandbox.Merge(client, settings, dir, home)
	if err != nil {
		return sandboxed{}, usageError("%v", err)
	}
	if len(notes) > 0 {
		fmt.Fprintf(ios.Err, "agentjq: warning: the client's sandbox settings would weaken the sandbox; dropped: %s\n", strings.Join(notes, ", "))
	}
	w := sandbox.NewWatcher(settings, dir)
	var stop string
	w.Unverified = func(why string) { stop = "the sandbox is not on: " + why }
	watch := func(typ, subtype string, line []byte) ([]any, string) {
		ev := w.Line(typ, subtype, line)
		return ev, stop
	}
	env, removeExcludes := sandbox.GitExcludes(dir, ios.Getenv)
	before := map[string]bool{}
	for _, p := range held {
		before[p] = true
	}
	done := func() {
		removeExcludes()
		warnNewControlFiles(ios, dir, before)
	}
	return sandboxed{args: append(rest, "--settings", string(merged)), watch: watch, env: env, done: done}, nil
}

// warnNewControlFiles names the control files that appeared in the
// project during the session: the sandbox holds only those that existed
// when it started, so one made since (a .cargo/config.toml, a nested
// repository's config, a branch checked out with an .npmrc) may run code
// when somebody next works there, outside any sandbox.
func warnNewControlFiles(ios *iostreams.IO, dir string, before map[string]bool) {
	var made []string
	for _, p := range protect.Paths(dir) {
		if !before[p] {
			if rel, err := filepath.Rel(dir, p); err == nil {
				p = rel
			}
			made = append(made, p)
		}
	}
	if len(made) > 0 {
		fmt.Fprintf(ios.Err, "agentjq: warning: the session made control files that can run code when git, a package manager or an editor next works here, outside the sandbox: %s; review them\n", strings.Join(made, ", "))
	}
}

// sandboxed is what sessionSandbox gives a session: the agent's
// arguments, the watch of its lines, the variables to add to its
// environment, and what to remove when it ends.
type sandboxed struct {
	args  []string
	watch func(typ, subtype string, line []byte) ([]any, string)
	env   []string
	done  func()
}

// takeSettings removes every --settings from the agent's arguments and
// returns the last value given (claude takes one).
func takeSettings(args []string) (rest []string, value string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--settings" && i+1 < len(args):
			value = args[i+1]
			i++
		case strings.HasPrefix(a, "--settings="):
			value = strings.TrimPrefix(a, "--settings=")
		default:
			rest = append(rest, a)
		}
	}
	return rest, value
}

// sandboxTurnedOn reports whether agent arguments turn claude's sandbox
// on (a --settings JSON object whose sandbox.enabled is true): what replay
// --as-agent, standing in for claude, honours.
func sandboxTurnedOn(args []string) bool {
	_, v := takeSettings(args)
	var s struct {
		Sandbox struct {
			Enabled bool `json:"enabled"`
		} `json:"sandbox"`
	}
	return json.Unmarshal([]byte(v), &s) == nil && s.Sandbox.Enabled
}
