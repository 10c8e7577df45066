package daemon

import (
	"context"
	"encoding/json"
	"time"

	"github.com/itchyny/gojq"
)

// jqMatcher is a subscription's filter: a jq program run on each event
// (the session.event params); the event is sent when its first output is
// truthy. gojq is the engine the filter package runs.
type jqMatcher struct{ code *gojq.Code }

func compileMatcher(src string) (*jqMatcher, error) {
	q, err := gojq.Parse(src)
	if err != nil {
		return nil, err
	}
	code, err := gojq.Compile(q)
	if err != nil {
		return nil, err
	}
	return &jqMatcher{code: code}, nil
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
	it := m.code.RunWithContext(ctx, v)
	out, ok := it.Next()
	if !ok {
		return false, nil
	}
	if err, isErr := out.(error); isErr {
		return false, err
	}
	return out != nil && out != false, nil
}
