package recording

// Session is what the session of a recording was started with, as spawn
// or record parsed its command line: what replay --check needs to run the
// session again. Only settings that shape the transcript are kept, plus
// how permissions were decided (for the person reading the header).
// Recordings made before agentjq wrote it have none (Header.Session nil).
type Session struct {
	Agent              string   `json:"agent,omitempty"`
	AgentArgs          []string `json:"agent_args,omitempty"` // after --
	Model              string   `json:"model,omitempty"`
	PermissionMode     string   `json:"permission_mode,omitempty"`
	AllowedTools       string   `json:"allowed_tools,omitempty"`
	DisallowedTools    string   `json:"disallowed_tools,omitempty"`
	SystemPrompt       string   `json:"system_prompt,omitempty"`
	AppendSystemPrompt string   `json:"append_system_prompt,omitempty"`
	MaxTurns           int      `json:"max_turns,omitempty"`
	Partial            bool     `json:"partial,omitempty"`
	Init               bool     `json:"init,omitempty"`
	MCPTool            []string `json:"mcp_tool,omitempty"`
	MCPToolDesc        []string `json:"mcp_tool_desc,omitempty"`
	MCPToolSchema      []string `json:"mcp_tool_schema,omitempty"`
	// MCPToolTimeout and HookTimeout are Go durations ("2m"); "" is the
	// default.
	MCPToolTimeout string   `json:"mcp_tool_timeout,omitempty"`
	MCPServer      []string `json:"mcp_server,omitempty"`
	Hook           []string `json:"hook,omitempty"`
	HookTimeout    string   `json:"hook_timeout,omitempty"`

	// How permission requests were decided; replay --check answers them
	// as recorded instead.
	Policy   []string `json:"policy,omitempty"`
	Approver string   `json:"approver,omitempty"`
	NoPrompt bool     `json:"no_prompt,omitempty"`
	OneShot  bool     `json:"one_shot,omitempty"` // -p: one turn, stdin unused
}

// redacted returns s with redact applied to every string (a hook command
// or a system prompt may hold a secret as well as argv).
func (s Session) redacted(redact func(string) string) Session {
	one := func(v *string) { *v = redact(*v) }
	all := func(v *[]string) {
		if *v == nil {
			return
		}
		out := make([]string, len(*v))
		for i, x := range *v {
			out[i] = redact(x)
		}
		*v = out
	}
	for _, v := range []*string{&s.Agent, &s.Model, &s.PermissionMode, &s.AllowedTools, &s.DisallowedTools,
		&s.SystemPrompt, &s.AppendSystemPrompt, &s.MCPToolTimeout, &s.HookTimeout, &s.Approver} {
		one(v)
	}
	for _, v := range []*[]string{&s.AgentArgs, &s.MCPTool, &s.MCPToolDesc, &s.MCPToolSchema, &s.MCPServer, &s.Hook, &s.Policy} {
		all(v)
	}
	return s
}
