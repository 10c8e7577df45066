package cmd

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentjq/agentjq/hooks"
	"github.com/agentjq/agentjq/internal/bridge"
	"github.com/agentjq/agentjq/internal/buildinfo"
	"github.com/agentjq/agentjq/internal/proc"
	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/iostreams"
	"github.com/agentjq/agentjq/mcphost"
)

// HostFlags give the agent tools and hooks hosted by agentjq over the
// control channel, with no config files.
type HostFlags struct {
	Init bool `help:"Send the initialize control request at start and pass its response (commands, agents, models, account) through to stdout. Automatic with --mcp-tool, --mcp-server or --hook."`

	MCPTool        []string      `name:"mcp-tool" sep:"none" placeholder:"NAME=CMD" help:"Expose CMD to the model as the tool mcp__agentjq__NAME; repeatable. A call runs 'sh -c CMD' in the agent's directory with the arguments as JSON on stdin and each scalar argument as $$AGENTJQ_ARG_<NAME> (NAME upper-cased, every character but a letter or digit as _; a call whose argument names collide, such as file and FILE, is refused) (also $$AGENTJQ_TOOL, $$AGENTJQ_TOOL_USE_ID); stdout is the result, a non-zero exit an error carrying stderr. The values are the model's: always quote them. Calls are approved like any tool (--policy, --approver). Example: --mcp-tool 'weather=curl -s -G --data-urlencode \"format=3\" -- \"https://wttr.in/$${AGENTJQ_ARG_CITY}\"'."`
	MCPToolDesc    []string      `name:"mcp-tool-desc" sep:"none" placeholder:"NAME=TEXT" help:"The description the model reads for tool NAME; repeatable."`
	MCPToolSchema  []string      `name:"mcp-tool-schema" sep:"none" placeholder:"NAME=FILE" help:"A JSON schema file for the arguments of tool NAME (default: any object); repeatable."`
	MCPToolTimeout time.Duration `name:"mcp-tool-timeout" default:"2m" help:"Kill a tool command, and all it started, after this long; the call returns an error."`

	MCPServer []string `name:"mcp-server" sep:"none" placeholder:"NAME=CMD" help:"Start 'sh -c CMD' as a stdio MCP server owned by this session and relay the agent's MCP traffic to it; its tools appear as mcp__NAME__<tool>. No --mcp-config file needed; the server and everything it started end with the session. Repeatable. Example: --mcp-server 'fs=npx -y @modelcontextprotocol/server-filesystem .'."`

	Hook        []string      `name:"hook" sep:"none" placeholder:"EVENT[:MATCHER]=CMD" help:"Run CMD as a hook for EVENT (PreToolUse, PostToolUse, UserPromptSubmit, Stop, ...), optionally only for tools matching MATCHER; repeatable. CMD gets the hook input JSON on stdin, with Claude Code's command-hook semantics: JSON on stdout is the answer; exit 2 blocks (PreToolUse: denies the call) with stderr as the reason; other statuses are non-blocking errors. claude 2.1.328 calls no SessionStart or SessionEnd hook registered this way. With --policy or --approver, PreToolUse hooks run inside agentjq's own hook, before the policy; the stricter answer wins (agentjq-policy(5)). Example: --hook 'PreToolUse:Bash=./guard.sh'."`
	HookTimeout time.Duration `name:"hook-timeout" default:"60s" help:"Kill a hook command after this long and answer for it (no opinion)."`

	PassCredentials bool `name:"pass-credentials" help:"Let hook and tool commands, MCP servers and approvers inherit the agent's credentials (ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN, CLAUDE_CODE_OAUTH_TOKEN, AWS_*, ...); by default only the agent gets them."`
}

// hostedEnv is the environment of the commands a session hosts: the
// agent's, without its credentials unless --pass-credentials.
func (f HostFlags) hostedEnv(env []string) []string {
	if f.PassCredentials {
		return env
	}
	return proc.WithoutAgentCredentials(env)
}

// hosting reports whether any flag needs the control channel held open.
func (f HostFlags) hosting() bool {
	return len(f.MCPTool) > 0 || len(f.MCPServer) > 0 || len(f.Hook) > 0
}

// applyHostFlags registers the hosted tools, servers and hooks on opts.
func applyHostFlags(ios *iostreams.IO, f HostFlags, opts *bridge.Options) error {
	return hostSession(ios, f, opts, nil)
}

// hostSession registers the hosted tools, servers and hooks on opts and,
// when guard is not nil, agentjq's own PreToolUse hook (the guard) that
// asks the approval chain about every tool call before it runs; the
// user's hooks become its Runner.
func hostSession(ios *iostreams.IO, f HostFlags, opts *bridge.Options, guard *hooks.Guard) error {
	if !f.Init && !f.hosting() && guard == nil {
		return nil
	}
	host := &mcphost.Host{}
	env := f.hostedEnv(opts.Env)
	tools, err := toolsFromFlags(f)
	if err != nil {
		return err
	}
	if len(tools) > 0 {
		if err := host.Add("agentjq", &mcphost.ToolServer{
			Name: "agentjq", Version: buildinfo.Version(), Tools: tools,
			Timeout: f.MCPToolTimeout, Dir: opts.Dir, Env: env,
		}); err != nil {
			return usageError("--mcp-tool: %v", err)
		}
	}
	for _, spec := range f.MCPServer {
		name, command, err := nameEquals("--mcp-server", spec, "NAME=CMD")
		if err != nil {
			return err
		}
		relay := &mcphost.Relay{Name: name, Command: command, Dir: opts.Dir, Env: env, Stderr: ios.Err}
		if err := host.Add(name, relay); err != nil {
			if name == "agentjq" && len(tools) > 0 {
				return usageError("--mcp-server %s: the name agentjq is taken by the --mcp-tool tools", name)
			}
			return usageError("--mcp-server %s: %v", name, err)
		}
	}

	runner := &hooks.Runner{Timeout: f.HookTimeout, Dir: opts.Dir, Env: env, Stderr: ios.Err}
	for _, spec := range f.Hook {
		h, err := hooks.ParseHook(spec)
		if err != nil {
			return usageError("--hook %v", err)
		}
		runner.Hooks = append(runner.Hooks, h)
	}
	if guard != nil {
		guard.Runner = runner
	}
	own := ownInitialize(runner, guard, host.Names())
	opts.Init = own.request()
	if !f.hosting() && guard == nil {
		return nil // --init alone
	}

	if opts.Handlers == nil {
		opts.Handlers = map[string]bridge.ControlHandler{}
	}
	if len(own.Servers) > 0 {
		opts.Handlers[protocol.SubMCPMessage] = host.Handle
		opts.AtEnd = append(opts.AtEnd, func() {
			if err := host.Close(); err != nil {
				fmt.Fprintf(ios.Err, "agentjq: %v\n", err)
			}
		})
	}
	if len(runner.Hooks) > 0 {
		opts.Handlers[protocol.SubHookCallback] = runner.Handle
	}
	if guard != nil {
		opts.Guard = guard.Answer
	}
	// A hook call the agent sends to a closed stdin is lost, and a lost
	// PreToolUse hook lets the call run: hold stdin open to the end.
	opts.KeepStdinOpen = true
	return nil
}

// ownInit is what agentjq adds to the agent's initialize request: the hooks
// it registers and the SDK MCP servers it hosts. It is built in one place
// (ownInitialize) so that a front end forwarding a client's own initialize
// can merge these into it.
type ownInit struct {
	Hooks   map[string][]hooks.Matcher
	Servers []string
}

// ownInitialize gathers the hooks and servers agentjq registers: the
// user's --hook commands and, with the guard, its PreToolUse matcher for
// every tool (the user's PreToolUse hooks then run inside it).
func ownInitialize(runner *hooks.Runner, guard *hooks.Guard, servers []string) ownInit {
	own := ownInit{Hooks: map[string][]hooks.Matcher{}, Servers: servers}
	switch {
	case guard != nil:
		own.Hooks = guard.Hooks()
	case len(runner.Hooks) > 0:
		own.Hooks = runner.Registration()
	}
	return own
}

// request is the initialize control request itself.
func (o ownInit) request() map[string]any {
	init := map[string]any{"subtype": protocol.SubInitialize, "hooks": o.Hooks}
	if len(o.Servers) > 0 {
		init["sdkMcpServers"] = o.Servers
	}
	return init
}

// toolsFromFlags builds the --mcp-tool tools with their descriptions and
// schemas.
func toolsFromFlags(f HostFlags) ([]mcphost.Tool, error) {
	var tools []mcphost.Tool
	for _, spec := range f.MCPTool {
		name, command, err := nameEquals("--mcp-tool", spec, "NAME=CMD")
		if err != nil {
			return nil, err
		}
		if !mcphost.ValidName(name) {
			return nil, usageError("--mcp-tool %s: a tool name is letters, digits, '_' and '-'", name)
		}
		if slices.ContainsFunc(tools, func(t mcphost.Tool) bool { return t.Name == name }) {
			return nil, usageError("--mcp-tool %s: defined twice", name)
		}
		tools = append(tools, mcphost.Tool{Name: name, Command: command})
	}
	find := func(flag, name string) (*mcphost.Tool, error) {
		for i := range tools {
			if tools[i].Name == name {
				return &tools[i], nil
			}
		}
		return nil, usageError("%s %s: no --mcp-tool of that name", flag, name)
	}
	for _, spec := range f.MCPToolDesc {
		name, text, err := nameEquals("--mcp-tool-desc", spec, "NAME=TEXT")
		if err != nil {
			return nil, err
		}
		t, err := find("--mcp-tool-desc", name)
		if err != nil {
			return nil, err
		}
		t.Description = text
	}
	for _, spec := range f.MCPToolSchema {
		name, file, err := nameEquals("--mcp-tool-schema", spec, "NAME=FILE")
		if err != nil {
			return nil, err
		}
		t, err := find("--mcp-tool-schema", name)
		if err != nil {
			return nil, err
		}
		if t.InputSchema, err = mcphost.ReadSchema(file); err != nil {
			return nil, usageError("--mcp-tool-schema %s: %v", name, err)
		}
	}
	return tools, nil
}

// nameEquals splits NAME=VALUE at the first '='.
func nameEquals(flag, spec, form string) (name, value string, err error) {
	name, value, ok := strings.Cut(spec, "=")
	if !ok || name == "" || strings.TrimSpace(value) == "" {
		return "", "", usageError("%s %q: want %s", flag, spec, form)
	}
	return name, value, nil
}
