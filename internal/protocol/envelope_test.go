package protocol

import "testing"

func TestMayBeType(t *testing.T) {
	for _, c := range []struct {
		line, typ string
		want      bool
	}{
		{`{"type":"system","subtype":"init"}`, "system", true},
		{`{"type":"systemd"}`, "system", false},
		{`{"type":"assistant"}`, "system", false},
		{`{"subtype":"init","type":"system"}`, "system", true},
		{`{ "type":"assistant"}`, "system", true},
		{`{"type":"sys`, "system", false},
		{`{"type":"control_response","response":{}}`, "control_response", true},
	} {
		if got := MayBeType([]byte(c.line), c.typ); got != c.want {
			t.Errorf("MayBeType(%s, %s) = %v", c.line, c.typ, got)
		}
	}
}
