package protocol

// Party says, in a proxied session, who is on agentjq's side of a line:
// for a line written to the agent, who wrote it; for a line of the agent's,
// that agentjq kept it from the client (the client never saw it); for a
// decision, who decided. Sessions agentjq runs on its own leave it empty.
type Party string

// Parties.
const (
	PartyClient  Party = "client"  // the program that spawned agentjq proxy
	PartyAgentjq Party = "agentjq" // agentjq itself (policy, hosted hooks and servers)
)

// ByClient is the decided_by of a permission request the client answered.
const ByClient = "client"
