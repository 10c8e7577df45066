package manpages

import (
	"strings"

	"github.com/agentjq/agentjq/internal/proc"
	"github.com/agentjq/agentjq/internal/roff"
)

// processPages are the command pages that get the PROCESSES section:
// the commands that start processes.
var processPages = map[string]bool{"spawn": true, "record": true, "approve": true, "acp": true}

// processes says what agentjq guarantees about the processes it starts,
// per system, and what environment the hosted commands get.
func processes(p *roff.Page) {
	p.Section("PROCESSES")
	p.Para("Every process agentjq starts for a session ends with it, together with everything that process started: the agent, --hook and --mcp-tool commands, --mcp-server servers, the --approver co-process and hook-format approvers.")
	p.Para("On Linux each of them runs under a reaper of its own: agentjq re-executes itself (argv[0] agentjq-reaper), and that process, a child subreaper (PR_SET_CHILD_SUBREAPER), starts the command and owns its whole tree: the kernel hands it every orphaned descendant, including grandchildren that call setsid or double-fork and the commands claude's Bash tool runs in sessions of their own. When the command exits, when agentjq ends it (a timeout, the third SIGINT, the end of the session) or when agentjq dies, even by SIGKILL (the reaper holds a pipe only agentjq can write to, which the kernel closes), the reaper kills and reaps every descendant left and exits with the command's own status. What remains possible: a reaper killed by SIGKILL itself (its command then dies by PR_SET_PDEATHSIG, but what the command started may stay), and processes handed to another manager (systemd-run, a container runtime).")
	p.Para("On other Unix systems (macOS, the BSDs) each command runs in a process group of its own and is ended by killing that group: a descendant that leaves the group (setsid) survives it, and a SIGKILL of agentjq leaves its commands running. On Windows only the command itself is ended.")
	p.Para("Hosted commands (hooks, tool commands, MCP servers, approvers) get agentjq's environment without the agent's credentials: " + strings.Join(credentialNames(), ", ") + ". Only the agent gets those; --pass-credentials passes them to the hosted commands as well.")
}

func credentialNames() []string {
	var out []string
	for _, c := range proc.AgentCredentials {
		if strings.HasSuffix(c, "_") {
			c = "every " + c + "* variable"
		}
		out = append(out, c)
	}
	return out
}
