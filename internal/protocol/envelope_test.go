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

func TestControlResponses(t *testing.T) {
	for _, c := range []struct {
		got  []byte
		want string
	}{
		{SuccessResponse("r<1>", nil), `{"type":"control_response","response":{"subtype":"success","request_id":"r<1>","response":{}}}`},
		// An id is echoed as the JSON value it came as.
		{SuccessResponseRaw([]byte(`7`), map[string]string{"behavior": "allow"}), `{"type":"control_response","response":{"subtype":"success","request_id":7,"response":{"behavior":"allow"}}}`},
		{ErrorResponseRaw([]byte(`"r2"`), "bad"), `{"type":"control_response","response":{"subtype":"error","request_id":"r2","error":"bad"}}`},
	} {
		if string(c.got) != c.want {
			t.Errorf("got  %s\nwant %s", c.got, c.want)
		}
	}
}
