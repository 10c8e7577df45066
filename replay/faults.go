package replay

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/recording"
)

// FaultKind is one way replay misbehaves on purpose, to test clients.
type FaultKind string

// Faults.
const (
	FaultTruncate FaultKind = "truncate" // write the first half of the line only
	FaultGarbage  FaultKind = "garbage"  // write a non-JSON line before it
	FaultOversize FaultKind = "oversize" // write a huge valid line before it
	FaultDelay    FaultKind = "delay"    // pause before writing it
	FaultDrop     FaultKind = "drop"     // do not write it
	FaultExit     FaultKind = "exit"     // exit with a code instead of writing it
)

// Fault is one --inject: KIND@WHERE[:ARG]. WHERE is a sequence number or
// a message type or kind (result, control_request/can_use_tool): the first
// agent line of that kind at or after the start ("drop@result" drops every
// result). drop-result is short for drop@result.
type Fault struct {
	Kind  FaultKind
	Seq   int64  // 0 when At is used
	At    string // a type or kind
	Delay time.Duration
	Size  int // oversize bytes
	Code  int // exit code
	used  bool
}

// ParseFault parses an --inject value.
func ParseFault(s string) (Fault, error) {
	if s == "drop-result" {
		return Fault{Kind: FaultDrop, At: "result"}, nil
	}
	var f Fault
	kind, rest, ok := strings.Cut(s, "@")
	if !ok {
		return f, fmt.Errorf("--inject %q: want KIND@SEQ[:ARG] (truncate, garbage, oversize, delay, drop, exit) or drop-result", s)
	}
	f.Kind = FaultKind(kind)
	where, arg, hasArg := strings.Cut(rest, ":")
	if n, err := strconv.ParseInt(where, 10, 64); err == nil && n > 0 {
		f.Seq = n
	} else if where != "" {
		f.At = where
	} else {
		return f, fmt.Errorf("--inject %q: missing the sequence number or type after @", s)
	}
	switch f.Kind {
	case FaultTruncate, FaultGarbage, FaultDrop:
		if hasArg {
			return f, fmt.Errorf("--inject %q: %s takes no argument", s, kind)
		}
	case FaultOversize:
		f.Size = 16 << 20
		if hasArg {
			n, err := parseSize(arg)
			if err != nil {
				return f, fmt.Errorf("--inject %q: %w", s, err)
			}
			f.Size = n
		}
	case FaultDelay:
		d, err := time.ParseDuration(arg)
		if err != nil || d < 0 {
			return f, fmt.Errorf("--inject %q: delay needs a duration, e.g. delay@5:2s", s)
		}
		f.Delay = d
	case FaultExit:
		f.Code = 1
		if hasArg {
			n, err := strconv.Atoi(arg)
			if err != nil || n < 0 || n > 255 {
				return f, fmt.Errorf("--inject %q: exit needs a code 0-255", s)
			}
			f.Code = n
		}
	default:
		return f, fmt.Errorf("--inject %q: unknown fault %q (truncate, garbage, oversize, delay, drop, exit)", s, kind)
	}
	return f, nil
}

func parseSize(s string) (int, error) {
	mult := 1
	switch {
	case strings.HasSuffix(s, "M"), strings.HasSuffix(s, "MiB"):
		mult, s = 1<<20, strings.TrimSuffix(strings.TrimSuffix(s, "iB"), "M")
	case strings.HasSuffix(s, "K"), strings.HasSuffix(s, "KiB"):
		mult, s = 1<<10, strings.TrimSuffix(strings.TrimSuffix(s, "iB"), "K")
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("bad size %q", s)
	}
	return n * mult, nil
}

// faultsFor returns the faults that apply to the agent line e.
func faultsFor(faults []Fault, e recording.Entry) []*Fault {
	var hit []*Fault
	var kind, typ string
	for i := range faults {
		f := &faults[i]
		if f.Seq != 0 {
			if f.Seq == e.Seq {
				hit = append(hit, f)
			}
			continue
		}
		if f.used && f.Kind != FaultDrop {
			continue
		}
		if kind == "" {
			kind = kindOf(e.Msg)
			typ, _, _ = strings.Cut(kind, "/")
		}
		if f.At == kind || f.At == typ {
			f.used = true
			hit = append(hit, f)
		}
	}
	return hit
}

// ExitError ends a replay with a chosen status (an injected exit, or the
// recorded agent's own exit code).
type ExitError struct {
	Code   int
	Reason string
}

func (e *ExitError) Error() string { return e.Reason }

// ExitCode is the status the process exits with.
func (e *ExitError) ExitCode() int { return e.Code }

// kindOf names a line for messages and matching: type, plus subtype or
// the control request's subtype.
func kindOf(line []byte) string {
	env, err := protocol.DecodeEnvelope(line)
	if err != nil {
		return "non-JSON"
	}
	switch env.Type {
	case protocol.TypeControlRequest:
		return env.Type + "/" + env.ControlSubtype()
	case protocol.TypeControlResp:
		var r struct {
			Subtype string `json:"subtype"`
		}
		_ = json.Unmarshal(env.Response, &r)
		return env.Type + "/" + r.Subtype
	}
	if env.Subtype != "" {
		return env.Type + "/" + env.Subtype
	}
	return env.Type
}
