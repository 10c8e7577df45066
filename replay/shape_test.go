package replay

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

func TestDriftIgnoresVolatileValues(t *testing.T) {
	c, _ := captureBytes(t, "write-allow")
	a := splitLines(c.out)
	// Another run: new ids, uuids, session, timings, costs, paths.
	volatile := regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|"duration(_api)?_ms":\d+|"total_cost_usd":[0-9.]+|/home/user/project|msg_\d+`)
	b := make([][]byte, len(a))
	for i, l := range a {
		b[i] = volatile.ReplaceAllFunc(l, func(m []byte) []byte {
			switch {
			case bytes.HasPrefix(m, []byte(`"duration`)):
				return append(m[:bytes.IndexByte(m, ':')+1], "99999"...)
			case bytes.HasPrefix(m, []byte(`"total_cost`)):
				return []byte(`"total_cost_usd":1.25`)
			case bytes.HasPrefix(m, []byte("/home")):
				return []byte("/srv/elsewhere")
			case bytes.HasPrefix(m, []byte("msg_")):
				return []byte("msg_zz9")
			}
			return []byte("ffffffff-ffff-ffff-ffff-ffffffffffff")
		})
	}
	if d := Drift(a, b); len(d) != 0 {
		t.Errorf("volatile values drifted: %v", d)
	}
}

func TestDriftReportsShapeChanges(t *testing.T) {
	c, _ := captureBytes(t, "write-allow")
	a := splitLines(c.out)
	b := make([][]byte, 0, len(a))
	for _, l := range a {
		switch {
		case bytes.Contains(l, []byte(`"type":"control_request"`)):
			continue // the CLI stopped asking
		case bytes.HasPrefix(l, []byte(`{"type":"system","subtype":"init"`)):
			l = bytes.Replace(l, []byte(`"cwd":`), []byte(`"new_field":true,"cwd":`), 1)
		}
		b = append(b, l)
	}
	b = append(b, []byte(`{"type":"rate_limit_event","rate_limit_info":{}}`))
	d := Drift(a, b)
	var got []string
	for _, x := range d {
		got = append(got, x.String())
	}
	report := strings.Join(got, "\n")
	for _, want := range []string{"~ line 1→1 system/init: +.new_field (new key)", "- line 4 control_request/can_use_tool: no longer sent", "+ line 7 rate_limit_event: new"} {
		if !strings.Contains(report, want) {
			t.Errorf("drift report lacks %q:\n%s", want, report)
		}
	}
	if len(d) != 3 {
		t.Errorf("%d differences:\n%s", len(d), report)
	}
}

func TestShape(t *testing.T) {
	s := Shape([]byte(`{"type":"assistant","message":{"content":[{"type":"tool_use","input":{"anything":1}}]}}`))
	if s.Kind != "assistant[tool_use]" {
		t.Errorf("kind %q", s.Kind)
	}
	if strings.Contains(strings.Join(s.Paths, " "), "anything") {
		t.Errorf("tool input keys are data, not shape: %v", s.Paths)
	}
	if Shape([]byte(`nope`)).Kind != "non-JSON" {
		t.Error("non-JSON kind")
	}
	if k := Shape([]byte(`{"type":"control_request","request":{"subtype":"can_use_tool"}}`)).Kind; k != "control_request/can_use_tool" {
		t.Errorf("kind %q", k)
	}
}

// TestDriftComparesStreamsApart: how a subagent's lines and a background
// task's events interleave with the parent's varies from run to run and
// is not drift; a change inside a stream still is.
func TestDriftComparesStreamsApart(t *testing.T) {
	c, _ := captureBytes(t, "subagent")
	a := splitLines(c.out)
	var main, side [][]byte
	for _, l := range a {
		s := Shape(l)
		if s.Stream == "" {
			main = append(main, l)
		} else {
			side = append(side, l)
		}
	}
	if len(side) < 3 {
		t.Fatalf("the subagent capture has %d subagent or task lines", len(side))
	}
	// Another interleaving: every side line after the main ones.
	b := append(append([][]byte{}, main...), side...)
	if d := Drift(a, b); len(d) != 0 {
		t.Errorf("reordered streams drifted: %v", d)
	}
	// A subagent line loses a key: reported.
	c2 := append([][]byte{}, b...)
	for i, l := range c2 {
		if s := Shape(l); s.Stream != "" && s.Stream != "tasks" {
			c2[i] = bytes.Replace(l, []byte(`"parent_tool_use_id"`), []byte(`"gone":1,"parent_tool_use_id"`), 1)
			break
		}
	}
	if d := Drift(a, c2); len(d) != 1 || d[0].Change != KeyAdded || d[0].Path != ".gone" {
		t.Errorf("a changed subagent line: %v", d)
	}
}
