package filter

import (
	"context"
	"errors"
	"testing"
)

// Compile is the filter language for callers with values of their own:
// agentlib is there, the caller's environment and the stream are not.
func TestCompileForValues(t *testing.T) {
	p, err := Compile(`.payload | key_input`)
	if err != nil {
		t.Fatal(err)
	}
	v := map[string]any{"payload": map[string]any{"name": "Bash", "input": map[string]any{"command": "ls -l"}}}
	if got, _ := p.Run(context.Background(), v).Next(); got != "ls -l" {
		t.Fatalf("key_input gave %v", got)
	}
	p, err = Compile(`$ENV | length`)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("AGENTJQ_SECRET_FOR_TEST", "x")
	if got, _ := p.Run(context.Background(), nil).Next(); got != 0 {
		t.Fatalf("$ENV has %v entries, want none", got)
	}
	var fe *Error
	if _, err := Compile(`inputs`); !errors.As(err, &fe) || fe.Code != ExitCompile {
		t.Fatalf("inputs compiled: %v", err)
	}
}
