package daemon

import (
	"io"
	"os"
	"runtime"
	"strings"

	"github.com/agentjq/agentjq/approve"
	"github.com/agentjq/agentjq/internal/bridge"
)

// testBuild is a minimal session builder for the daemon's own tests, which
// cannot import cmd: the agent command and a chain of the policy files.
// agentjq serve uses spawn's builder (cmd/serve.go), whose guard and
// setting sources cmd's tests check.
func testBuild(o Options) func(CreateParams) (bridge.Options, *approve.Chain, error) {
	return func(p CreateParams) (bridge.Options, *approve.Chain, error) {
		profile := bridge.Profiles[p.Agent]
		if err := bridge.CheckAgentArgs(profile, p.Args); err != nil {
			return bridge.Options{}, nil, err
		}
		home, _ := os.UserHomeDir()
		for _, kv := range o.Env {
			if v, ok := strings.CutPrefix(kv, "HOME="); ok {
				home = v
			}
		}
		chain, err := approve.NewChain(approve.ChainOptions{Policies: p.Policy, Cwd: p.Workdir, Home: home, Env: o.Env, Stderr: io.Discard})
		if err != nil {
			return bridge.Options{}, nil, err
		}
		bin := o.AgentBin
		if bin == "" {
			bin = profile.Name
		}
		path, args := bridge.Command(profile, bin, runtime.GOOS, bridge.PassFlags{Model: p.Model, PermissionMode: p.Mode, Partial: p.Partial}, p.Args)
		return bridge.Options{Profile: profile, Path: path, Args: args, Dir: p.Workdir, Env: bridge.ChildEnv(o.Env), Approver: chain}, chain, nil
	}
}
