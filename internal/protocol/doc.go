// Package protocol is agentjq's model of the agent CLIs' stream-json
// protocol: the envelope every line carries, the control requests in both
// directions and their responses, the content of the messages (blocks and
// partial-message events), the result and the outcome computed from it,
// and agentjq's own events.
//
// Lines are decoded lazily: only the envelope (type, subtype, ids) is read,
// and every other field and every unknown type passes through untouched.
// Typed structs exist only where agentjq acts on a message.
//
// The tables in tables.go are the single source of truth for the protocol
// reference page, agentjq-protocol(7).
package protocol
