package acp

import (
	"encoding/json"
	"testing"
)

// session/load's params are session/new's and the id: all of them decode.
func TestLoadSessionRequest(t *testing.T) {
	var p loadSessionRequest
	err := json.Unmarshal([]byte(`{"sessionId":"s1","cwd":"/p","additionalDirectories":["/q"],"mcpServers":[{"name":"m","command":"x"}],"_meta":{"k":1}}`), &p)
	if err != nil {
		t.Fatal(err)
	}
	if p.SessionID != "s1" || p.Cwd != "/p" || len(p.AdditionalDirectories) != 1 || len(p.MCPServers) != 1 ||
		p.MCPServers[0].Command != "x" || string(p.Meta) != `{"k":1}` {
		t.Errorf("decoded %+v", p)
	}
}
