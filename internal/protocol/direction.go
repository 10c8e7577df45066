package protocol

// Direction says where a line of a session travelled: the one vocabulary
// of the bridge's tap, the recording format and everything that reads it.
type Direction string

// Directions.
const (
	DirIn    Direction = "in"    // written to the agent's stdin
	DirOut   Direction = "out"   // written by the agent on stdout
	DirErr   Direction = "err"   // a line of the agent's stderr (text)
	DirEvent Direction = "event" // one of agentjq's own events
	DirMeta  Direction = "meta"  // facts learnt mid-session (agent_version)
)
