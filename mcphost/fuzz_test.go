package mcphost

import (
	"context"
	"encoding/json"
	"testing"
)

// FuzzHostHandle: any mcp_message gets a JSON-RPC 2.0 message back
// (tools/call of an unknown tool runs nothing).
func FuzzHostHandle(f *testing.F) {
	for _, s := range []string{
		`{"subtype":"mcp_message","server_name":"agentjq","message":{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}}`,
		`{"subtype":"mcp_message","server_name":"agentjq","message":{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":[1]}}}`,
		`{"subtype":"mcp_message","server_name":"agentjq","message":{"jsonrpc":"2.0","id":{"a":1},"method":"tools/call","params":{"name":"x","arguments":7}}}`,
		`{"subtype":"mcp_message","server_name":"nope","message":1}`,
		`{"server_name":"agentjq","message":"x"}`,
	} {
		f.Add([]byte(s))
	}
	var h Host
	if err := h.Add("agentjq", &ToolServer{}); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, req []byte) {
		got, err := h.Handle(context.Background(), "r", json.RawMessage(req))
		if err != nil {
			return
		}
		b, err := json.Marshal(got)
		if err != nil {
			t.Fatalf("unmarshalable answer: %v", err)
		}
		var m struct {
			MCPResponse struct {
				JSONRPC string `json:"jsonrpc"`
			} `json:"mcp_response"`
		}
		if json.Unmarshal(b, &m) != nil || m.MCPResponse.JSONRPC != "2.0" {
			t.Errorf("%s -> %s", req, b)
		}
	})
}
