package streamgen

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

func TestNoControl(t *testing.T) {
	g, err := New(3)
	if err != nil {
		t.Fatal(err)
	}
	g.NoControl = true
	var buf bytes.Buffer
	g.WriteTo(&buf, 1<<20)
	if bytes.Contains(buf.Bytes(), []byte(`"type":"control_`)) {
		t.Error("control lines with NoControl")
	}
}

func TestBenchLines(t *testing.T) {
	lines, n, err := BenchLines(1 << 20)
	if err != nil || n < 1<<20 {
		t.Fatalf("%d bytes: %v", n, err)
	}
	var sum int64
	for i, l := range lines {
		sum += int64(len(l)) + 1
		if !json.Valid(l) || l[0] != '{' || bytes.IndexByte(l, '\n') >= 0 {
			t.Fatalf("line %d is not one object: %.80s", i+1, l)
		}
		if bytes.Contains(l, []byte(`"type":"control_`)) {
			t.Fatalf("line %d is a control message: %.80s", i+1, l)
		}
	}
	if sum != n {
		t.Errorf("lines hold %d bytes with their newlines, the stream %d", sum, n)
	}
}

func TestBigLine(t *testing.T) {
	var buf bytes.Buffer
	if err := BigLine(&buf, 3<<20); err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n"))
	if len(lines) != 2 || len(lines[0]) < 3<<20 || !json.Valid(lines[0]) || !json.Valid(lines[1]) {
		t.Fatalf("BigLine wrote %d lines", len(lines))
	}
}
