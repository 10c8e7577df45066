package bridge

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// InitIDs map the names agentjq's own hooks and SDK MCP servers go by on
// the wire (in a merged initialize) back to the names agentjq's handlers
// know them by.
type InitIDs struct {
	Hooks   map[string]string // wire callback id -> agentjq's callback id
	Servers map[string]string // wire server name -> agentjq's server name
}

// ownHookPrefix starts the wire id of every hook callback agentjq
// registers. SDKs number theirs hook_0, hook_1...; agentjq's own runner
// does too, so agentjq's are always renamed.
const ownHookPrefix = "agentjq-"

// MergeInitialize merges agentjq's own initialize additions (ours: the body
// agentjq would send alone, with "hooks" and "sdkMcpServers") into the
// client's initialize request body. Every field of the client's is kept;
// agentjq's hook matchers are appended to the client's for each event,
// their callback ids renamed with a prefix no client id carries; agentjq's
// SDK MCP servers are added, a name the client uses too renamed the same
// way. client may be nil: the result is then agentjq's own request, with
// the same renaming. The ids returned map the wire names back.
func MergeInitialize(client, ours json.RawMessage) (json.RawMessage, InitIDs, error) {
	ids := InitIDs{Hooks: map[string]string{}, Servers: map[string]string{}}
	body := map[string]json.RawMessage{}
	if len(client) > 0 {
		if err := json.Unmarshal(client, &body); err != nil {
			return nil, ids, fmt.Errorf("the client's initialize request: %w", err)
		}
	}
	var own struct {
		Hooks   map[string][]map[string]any `json:"hooks"`
		Servers []string                    `json:"sdkMcpServers"`
	}
	var ownAll map[string]json.RawMessage
	if len(ours) > 0 {
		if err := json.Unmarshal(ours, &own); err != nil {
			return nil, ids, fmt.Errorf("agentjq's initialize request: %w", err)
		}
		_ = json.Unmarshal(ours, &ownAll)
	}
	if len(client) == 0 {
		// agentjq's own request alone: its other fields too.
		for k, v := range ownAll {
			if k != "hooks" && k != "sdkMcpServers" {
				body[k] = v
			}
		}
	}

	var clientHooks map[string][]json.RawMessage
	if raw := body["hooks"]; len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &clientHooks); err != nil {
			return nil, ids, fmt.Errorf("the client's initialize hooks: %w", err)
		}
	}
	var clientServers []string
	if raw := body["sdkMcpServers"]; len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &clientServers); err != nil {
			return nil, ids, fmt.Errorf("the client's initialize sdkMcpServers: %w", err)
		}
	}

	// A prefix that no client callback id or server name starts with.
	taken := map[string]bool{}
	for _, list := range clientHooks {
		for _, m := range list {
			var mm struct {
				IDs []string `json:"hookCallbackIds"`
			}
			_ = json.Unmarshal(m, &mm)
			for _, id := range mm.IDs {
				taken[id] = true
			}
		}
	}
	prefix := ownHookPrefix
	for collides(taken, prefix) {
		prefix = ownHookPrefix + prefix
	}

	if len(own.Hooks) > 0 {
		if clientHooks == nil {
			clientHooks = map[string][]json.RawMessage{}
		}
		for _, ev := range slices.Sorted(maps.Keys(own.Hooks)) {
			for _, m := range own.Hooks[ev] {
				renamed := map[string]any{}
				for k, v := range m {
					renamed[k] = v
				}
				var wire []string
				list, _ := m["hookCallbackIds"].([]any)
				for _, id := range list {
					s, _ := id.(string)
					w := prefix + s
					ids.Hooks[w] = s
					wire = append(wire, w)
				}
				renamed["hookCallbackIds"] = wire
				b, err := json.Marshal(renamed)
				if err != nil {
					return nil, ids, err
				}
				clientHooks[ev] = append(clientHooks[ev], b)
			}
		}
		b, err := json.Marshal(clientHooks)
		if err != nil {
			return nil, ids, err
		}
		body["hooks"] = b
	}
	if len(own.Servers) > 0 {
		servers := append([]string(nil), clientServers...)
		for _, name := range own.Servers {
			wire := name
			for slices.Contains(servers, wire) {
				wire = ownHookPrefix + wire
			}
			ids.Servers[wire] = name
			servers = append(servers, wire)
		}
		b, err := json.Marshal(servers)
		if err != nil {
			return nil, ids, err
		}
		body["sdkMcpServers"] = b
	}
	if _, ok := body["subtype"]; !ok {
		body["subtype"] = json.RawMessage(`"initialize"`)
	}
	out, err := json.Marshal(body)
	return out, ids, err
}

func collides(taken map[string]bool, prefix string) bool {
	for id := range taken {
		if strings.HasPrefix(id, prefix) {
			return true
		}
	}
	return false
}
