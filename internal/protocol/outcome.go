package protocol

// Outcome is what happened in a session, computed once from the results,
// the decisions and the agent's exit. Each has its own exit status.
type Outcome string

// Outcomes, in the order they take precedence when several apply.
const (
	OutcomeTimeout     Outcome = "timeout"     // --timeout ran out
	OutcomeStalled     Outcome = "stalled"     // --idle-timeout ran out
	OutcomeInterrupted Outcome = "interrupted" // the user interrupted (SIGINT/SIGTERM)
	OutcomeClosed      Outcome = "closed"      // our stdout was closed by the reader
	OutcomeCrashed     Outcome = "crashed"     // the agent died without a result
	OutcomeError       Outcome = "error"       // the last result was an error
	OutcomeDenied      Outcome = "denied"      // a tool call was denied
	OutcomeSuccess     Outcome = "success"
)

// Exit statuses. 2 is a usage error or bad input, as in jq; 124 follows
// timeout(1); 130 and 141 are what a shell reports for SIGINT and SIGPIPE.
const (
	ExitSuccess     = 0
	ExitError       = 1
	ExitUsage       = 2
	ExitDenied      = 3
	ExitCrashed     = 4
	ExitNotFound    = 127
	ExitTimeout     = 124
	ExitStalled     = 125
	ExitInterrupted = 130
	ExitClosed      = 141
)

// ExitCode maps an outcome to agentjq's exit status.
func (o Outcome) ExitCode() int {
	switch o {
	case OutcomeSuccess:
		return ExitSuccess
	case OutcomeError:
		return ExitError
	case OutcomeDenied:
		return ExitDenied
	case OutcomeCrashed:
		return ExitCrashed
	case OutcomeTimeout:
		return ExitTimeout
	case OutcomeStalled:
		return ExitStalled
	case OutcomeInterrupted:
		return ExitInterrupted
	case OutcomeClosed:
		return ExitClosed
	}
	return ExitError
}

// ExitRow is one row of the documented exit status table.
type ExitRow struct {
	Code    int
	Outcome Outcome // "" for rows that are not session outcomes
	Meaning string
}

// SpawnExitTable is the exit status table of spawn and record, shown in
// --help and the man pages, and tested row by row.
var SpawnExitTable = []ExitRow{
	{ExitSuccess, OutcomeSuccess, "every turn succeeded and no tool call was denied"},
	{ExitError, OutcomeError, "the last result was an error (max turns, budget, API error, error during execution), or the recording (--record, record -o) could not be written"},
	{ExitUsage, "", "usage error or bad input (flags, policy files), before the agent starts"},
	{ExitDenied, OutcomeDenied, "the session succeeded but at least one tool call was denied"},
	{ExitCrashed, OutcomeCrashed, "the agent exited or died without the result of a turn in flight"},
	{ExitTimeout, OutcomeTimeout, "--timeout ran out; the agent was shut down"},
	{ExitStalled, OutcomeStalled, "--idle-timeout ran out with no output from the agent"},
	{ExitNotFound, "", "the agent binary was not found or could not start"},
	{ExitInterrupted, OutcomeInterrupted, "interrupted by SIGINT or SIGTERM"},
	{ExitClosed, OutcomeClosed, "stdout was closed by its reader; the agent was shut down quietly"},
}

// SessionFacts are what a session observed, from which Decide computes
// the outcome.
type SessionFacts struct {
	TimedOut, Stalled, Interrupted, StdoutClosed bool
	// TurnInFlight: a turn was sent and its result never came.
	TurnInFlight bool
	// AgentExit is the agent's exit code, -1 when killed by a signal.
	AgentExit int
	// LastResult is the last result seen, nil when none came.
	LastResult *Result
	// Denials counts denied tool calls: agentjq's own deny decisions and
	// the agent's permission_denials.
	Denials int
}

// Decide computes the one outcome of a session.
func Decide(f SessionFacts) Outcome {
	switch {
	case f.TimedOut:
		return OutcomeTimeout
	case f.Stalled:
		return OutcomeStalled
	case f.Interrupted:
		return OutcomeInterrupted
	case f.StdoutClosed:
		return OutcomeClosed
	case f.TurnInFlight:
		return OutcomeCrashed
	case f.LastResult != nil && f.LastResult.Failed():
		return OutcomeError
	case f.AgentExit != 0:
		// Killed, or exited non-zero after a successful result.
		return OutcomeCrashed
	case f.Denials > 0:
		return OutcomeDenied
	}
	return OutcomeSuccess
}
