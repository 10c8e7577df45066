package daemon

import (
	"context"
	"encoding/json"
	"time"

	"github.com/agentjq/agentjq/filter"
)

// jqMatcher is a subscription's filter: a jq program run on each event
// (the session.event params); the event is sent when its first output is
// truthy. It is compiled by the filter package, so a program that works
// with `agentjq filter` (agentlib's definitions: tool_calls, key_input,
// in_subagent...) works here.
type jqMatcher struct{ prog *filter.Program }

func compileMatcher(src string) (*jqMatcher, error) {
	p, err := filter.Compile(src)
	if err != nil {
		return nil, err
	}
	return &jqMatcher{prog: p}, nil
}

// Matches runs the program on one event, for at most 100 ms: a filter
// runs on the session's path and must not hold it.
func (m *jqMatcher) Matches(line []byte) (bool, error) {
	var v any
	if err := json.Unmarshal(line, &v); err != nil {
		return false, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	out, ok := m.prog.Run(ctx, v).Next()
	if !ok {
		return false, nil
	}
	if err, isErr := out.(error); isErr {
		return false, err
	}
	return out != nil && out != false, nil
}
