package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"regexp"
	"sync"
	"time"

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

// agentVersions caches probeAgentVersion by binary: acp asks once for all
// its sessions.
var agentVersions sync.Map

var versionRE = regexp.MustCompile(`^v?([0-9]+\.[0-9]+\.[0-9]+[0-9A-Za-z.+-]*)`)

// probeAgentVersion is what bin --version says its version is ("" when it
// says none within 5s), for the header of a recording that may never see
// the agent's init line: proxy and acp open theirs before any turn, and
// an acp session may end without one. (claude answers in milliseconds.)
func probeAgentVersion(bin string, env []string) string {
	if v, ok := agentVersions.Load(bin); ok {
		return v.(string)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--version")
	cmd.Env = env
	cmd.WaitDelay = time.Second
	out, _ := cmd.Output()
	v := ""
	if m := versionRE.FindSubmatch(bytes.TrimSpace(out)); m != nil {
		v = string(m[1])
	}
	agentVersions.Store(bin, v)
	return v
}
