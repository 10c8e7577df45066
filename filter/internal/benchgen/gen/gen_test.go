package gen

import (
	"bufio"
	"bytes"
	"encoding/json"
	"testing"
)

func TestStreamIsValidAndDeterministic(t *testing.T) {
	var a, b bytes.Buffer
	for _, buf := range []*bytes.Buffer{&a, &b} {
		g, err := New(7)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := g.WriteTo(buf, 2<<20); err != nil || n < 2<<20 {
			t.Fatalf("wrote %d: %v", n, err)
		}
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("the same seed gave different streams")
	}
	types := map[string]int{}
	r := bufio.NewReader(&a)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) == 0 {
			break
		}
		var v struct{ Type string }
		if err := json.Unmarshal(line, &v); err != nil {
			t.Fatalf("invalid line %q: %v", line, err)
		}
		types[v.Type]++
		if err != nil {
			break
		}
	}
	for _, ty := range []string{"system", "assistant", "user", "result", "control_request", "stream_event"} {
		if types[ty] == 0 {
			t.Errorf("no %s events in %v", ty, types)
		}
	}
}
