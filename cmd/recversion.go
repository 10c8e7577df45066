package cmd

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/recording"
)

// withAgentVersion returns the recording b with the agent's version in its
// header. A recording's header is written before the agent has said its
// version (it arrives later, as a meta entry), so a fresh recording's
// header names none; replay --check --update writes the new recording over
// a fixture, which must say which CLI made it. A recording that never
// learnt its version is refused rather than written with an empty one.
func withAgentVersion(b []byte) ([]byte, error) {
	nl := bytes.IndexByte(b, '\n')
	if nl < 0 {
		nl = len(b)
	}
	h, err := recording.ParseHeader(b[:nl])
	if err != nil {
		return nil, err
	}
	if h.AgentVersion != "" {
		return b, nil
	}
	for rest := b[nl:]; len(rest) > 0; {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		var e struct {
			Dir string `json:"dir"`
			Msg struct {
				AgentVersion string `json:"agent_version"`
			} `json:"msg"`
		}
		if bytes.Contains(line, []byte(`"agent_version"`)) && json.Unmarshal(line, &e) == nil &&
			e.Dir == string(protocol.DirMeta) && e.Msg.AgentVersion != "" {
			h.AgentVersion = e.Msg.AgentVersion
			break
		}
	}
	if h.AgentVersion == "" {
		return nil, errors.New("the new recording never learnt the agent's version (no system/init line)")
	}
	hb, err := recording.MarshalHeader(h)
	if err != nil {
		return nil, err
	}
	return append(hb, b[nl:]...), nil
}
