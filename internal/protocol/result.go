package protocol

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Result is the part of a result message agentjq computes outcomes from.
type Result struct {
	Subtype           string            `json:"subtype"`
	IsError           bool              `json:"is_error"`
	Result            string            `json:"result"`
	NumTurns          int               `json:"num_turns"`
	DurationMS        float64           `json:"duration_ms"`
	TotalCostUSD      float64           `json:"total_cost_usd"`
	PermissionDenials []json.RawMessage `json:"permission_denials"`
	Errors            []string          `json:"errors"`
	TerminalReason    string            `json:"terminal_reason"`
	SessionID         string            `json:"session_id"`
	// QueuedTurns is queued_turn_count: turns still waiting after this
	// one (nil when the agent does not say).
	QueuedTurns *int `json:"queued_turn_count"`
}

// Result subtypes.
const (
	ResultSuccess            = "success"
	ResultErrorDuringExec    = "error_during_execution"
	ResultErrorMaxTurns      = "error_max_turns"
	ResultErrorMaxBudget     = "error_max_budget_usd"
	ResultErrorMaxStructured = "error_max_structured_output_retries"
)

// resultKeys are the fields of Result, in the order DecodeResult reads them.
var resultKeys = []string{"subtype", "is_error", "result", "num_turns", "duration_ms", "total_cost_usd",
	"permission_denials", "errors", "terminal_reason", "session_id", "queued_turn_count"}

// DecodeResult reads the fields of a result line that outcomes need,
// without decoding the rest (usage and modelUsage are most of a result).
// The line must be one Scan accepted.
func DecodeResult(line []byte) (Result, error) {
	var r Result
	dst := []any{&r.Subtype, &r.IsError, &r.Result, &r.NumTurns, &r.DurationMS, &r.TotalCostUSD,
		&r.PermissionDenials, &r.Errors, &r.TerminalReason, &r.SessionID, &r.QueuedTurns}
	// Like encoding/json, a field of the wrong type does not stop the
	// others from being read; the first such error is returned.
	var first error
	for i, raw := range Fields(line, resultKeys...) {
		if raw == nil || string(raw) == "null" {
			continue
		}
		if err := json.Unmarshal(raw, dst[i]); err != nil && first == nil {
			first = fmt.Errorf("result.%s: %w", resultKeys[i], err)
		}
	}
	return r, first
}

// Failed reports whether the result ended the turn in an error, whatever
// its subtype says: an API error arrives as subtype success with is_error.
func (r *Result) Failed() bool {
	return r.IsError || (r.Subtype != "" && r.Subtype != ResultSuccess)
}

// Aborted reports whether the turn was cut short by an interrupt.
func (r *Result) Aborted() bool {
	return strings.HasPrefix(r.TerminalReason, "aborted")
}

// ErrorText is a one-line description of a failed result.
func (r *Result) ErrorText() string {
	if len(r.Errors) > 0 {
		return strings.Join(r.Errors, "; ")
	}
	if r.Result != "" {
		return r.Result
	}
	if r.TerminalReason != "" {
		return r.TerminalReason
	}
	return r.Subtype
}
