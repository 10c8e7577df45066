package daemon

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The generated files are what the code generates (make protocol).
func TestGeneratedProtocolFilesUpToDate(t *testing.T) {
	for path, want := range map[string][]byte{
		"protocol.json":      Schema(),
		"../sdk/protocol.ts": TypeScript(),
	} {
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from what the method table generates: run make protocol", path)
		}
	}
	if !bytes.Equal(SchemaJSON(), Schema()) {
		t.Error("the embedded protocol.json (GET /protocol.json) is not the generated one: rebuild after make protocol")
	}
}

// schemaDoc is protocol.json, read for validation.
type schemaDoc struct {
	Defs    map[string]json.RawMessage `json:"$defs"`
	Methods map[string]struct {
		Direction string          `json:"direction"`
		Params    json.RawMessage `json:"params"`
		Result    json.RawMessage `json:"result"`
	} `json:"methods"`
	Events map[string]struct {
		Payload json.RawMessage `json:"payload"`
	} `json:"events"`
	ErrorCodes map[string]string `json:"errorCodes"`
}

func loadSchema(t testing.TB, b []byte) *schemaDoc {
	var d schemaDoc
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	return &d
}

// validate checks v against a schema of the subset the generator writes.
func (d *schemaDoc) validate(schema json.RawMessage, v any, at string) error {
	var s struct {
		Ref        string                     `json:"$ref"`
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
		Additional json.RawMessage            `json:"additionalProperties"`
		Items      json.RawMessage            `json:"items"`
		Const      *string                    `json:"const"`
		Enum       []string                   `json:"enum"`
		OneOf      []json.RawMessage          `json:"oneOf"`
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		return err
	}
	if len(s.OneOf) > 0 {
		var errs []string
		for _, alt := range s.OneOf {
			err := d.validate(alt, v, at)
			if err == nil {
				errs = append(errs, "")
				continue
			}
			errs = append(errs, err.Error())
		}
		matched := 0
		for _, e := range errs {
			if e == "" {
				matched++
			}
		}
		if matched != 1 {
			return fmt.Errorf("%s: %d of the oneOf variants match %v: %s", at, matched, v, strings.Join(errs, "; "))
		}
		return nil
	}
	if s.Const != nil && v != *s.Const {
		return fmt.Errorf("%s: %v is not %q", at, v, *s.Const)
	}
	if len(s.Enum) > 0 {
		str, _ := v.(string)
		if !slices.Contains(s.Enum, str) {
			return fmt.Errorf("%s: %v is not one of %v", at, v, s.Enum)
		}
	}
	if s.Ref != "" {
		def, ok := d.Defs[strings.TrimPrefix(s.Ref, "#/$defs/")]
		if !ok {
			return fmt.Errorf("%s: unknown %s", at, s.Ref)
		}
		return d.validate(def, v, at)
	}
	switch s.Type {
	case "":
		return nil
	case "string":
		if _, ok := v.(string); !ok {
			return fmt.Errorf("%s: %v is not a string", at, v)
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return fmt.Errorf("%s: %v is not a boolean", at, v)
		}
	case "integer", "number":
		f, ok := v.(float64)
		if !ok || s.Type == "integer" && f != math.Trunc(f) {
			return fmt.Errorf("%s: %v is not an %s", at, v, s.Type)
		}
	case "array":
		a, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%s: %v is not an array", at, v)
		}
		for i, e := range a {
			if err := d.validate(s.Items, e, fmt.Sprintf("%s[%d]", at, i)); err != nil {
				return err
			}
		}
	case "object":
		o, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: %v is not an object", at, v)
		}
		for _, r := range s.Required {
			if _, ok := o[r]; !ok {
				return fmt.Errorf("%s: required %q missing", at, r)
			}
		}
		for k, e := range o {
			if p, ok := s.Properties[k]; ok {
				if err := d.validate(p, e, at+"."+k); err != nil {
					return err
				}
				continue
			}
			if string(s.Additional) == "false" {
				return fmt.Errorf("%s: unexpected member %q", at, k)
			}
			if len(s.Additional) > 0 {
				if err := d.validate(s.Additional, e, at+"."+k); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// validateTraffic checks every message of one client's connection
// (recorded by the tests) against protocol.json.
func validateTraffic(t *testing.T, tr *traffic) {
	t.Helper()
	d := loadSchema(t, SchemaJSON())
	pending := map[string]string{} // id -> method, both directions
	tr.mu.Lock()
	defer tr.mu.Unlock()
	checked := 0
	// Requests the daemon refused as invalid_params were invalid on purpose.
	refused := map[string]bool{}
	for _, raw := range tr.msgs {
		var r struct {
			ID    json.RawMessage `json:"id"`
			Error *struct {
				Data struct {
					Code string `json:"code"`
				} `json:"data"`
			} `json:"error"`
		}
		if json.Unmarshal(raw, &r) == nil && r.Error != nil && r.Error.Data.Code == CodeInvalidParams {
			refused[string(r.ID)] = true
		}
	}
	for _, raw := range tr.msgs {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params any             `json:"params"`
			Result any             `json:"result"`
			Error  *struct {
				Data struct {
					Code string `json:"code"`
				} `json:"data"`
			} `json:"error"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Errorf("not JSON: %s", raw)
			continue
		}
		if m.Method != "" {
			spec, ok := d.Methods[m.Method]
			if !ok {
				continue // the tests call unknown methods on purpose
			}
			if len(m.ID) > 0 && refused[string(m.ID)] {
				continue
			}
			params := m.Params
			if params == nil {
				params = map[string]any{}
			}
			if err := d.validate(spec.Params, params, m.Method+".params"); err != nil {
				t.Errorf("%s: %v", raw, err)
			}
			if m.Method == "session.event" {
				p := params.(map[string]any)
				if ev, ok := d.Events[fmt.Sprint(p["kind"])]; !ok {
					t.Errorf("event kind %v not in the schema", p["kind"])
				} else if err := d.validate(ev.Payload, p["payload"], fmt.Sprint(p["kind"])); err != nil {
					t.Errorf("%s: %v", raw, err)
				}
			}
			if len(m.ID) > 0 {
				pending[string(m.ID)] = m.Method
			}
			checked++
			continue
		}
		method := pending[string(m.ID)]
		delete(pending, string(m.ID))
		if method == "" {
			continue
		}
		if m.Error != nil {
			if _, ok := d.ErrorCodes[m.Error.Data.Code]; !ok && m.Error.Data.Code != "" {
				t.Errorf("error code %q of %s is not in the schema", m.Error.Data.Code, method)
			}
			continue
		}
		if err := d.validate(d.Methods[method].Result, m.Result, method+".result"); err != nil {
			t.Errorf("%s: %v", raw, err)
		}
		checked++
	}
	if checked == 0 {
		t.Error("no traffic validated")
	}
}

// The freeze gate's check: since the last tag (else the checked-in
// baseline) the schema only grew.
func TestSchemaOnlyGrew(t *testing.T) {
	base, from := baselineSchema(t)
	old, cur := loadSchema(t, base), loadSchema(t, Schema())
	for name := range old.Methods {
		if _, ok := cur.Methods[name]; !ok {
			t.Errorf("method %s was removed since %s", name, from)
		}
	}
	for kind := range old.Events {
		if _, ok := cur.Events[kind]; !ok {
			t.Errorf("event kind %s was removed since %s", kind, from)
		}
	}
	for code := range old.ErrorCodes {
		if _, ok := cur.ErrorCodes[code]; !ok {
			t.Errorf("error code %s was removed since %s", code, from)
		}
	}
	for name, raw := range old.Defs {
		craw, ok := cur.Defs[name]
		if !ok {
			t.Errorf("type %s was removed since %s", name, from)
			continue
		}
		// A type that became a union (Event): each variant is held to
		// what the type was.
		for _, c := range cur.variants(craw) {
			grewFrom(t, name, from, raw, c)
		}
	}
}

type schemaDef struct {
	Properties map[string]json.RawMessage `json:"properties"`
	Required   []string                   `json:"required"`
	OneOf      []struct {
		Ref string `json:"$ref"`
	} `json:"oneOf"`
}

// variants are the defs of a oneOf of $refs, or the def itself.
func (d *schemaDoc) variants(raw json.RawMessage) []json.RawMessage {
	var def schemaDef
	json.Unmarshal(raw, &def)
	if len(def.OneOf) == 0 {
		return []json.RawMessage{raw}
	}
	var out []json.RawMessage
	for _, v := range def.OneOf {
		out = append(out, d.Defs[strings.TrimPrefix(v.Ref, "#/$defs/")])
	}
	return out
}

// grewFrom checks that def c keeps every property of o, each of the same
// type or narrowed in the two ways that break no client: a string that
// always took a closed set of values now says which (an enum or a const:
// the daemon refused any other in a request, and sent no other), and a
// value that was unconstrained ({}) now has a type. No property is newly
// required.
func grewFrom(t *testing.T, name, from string, oraw, craw json.RawMessage) {
	t.Helper()
	var o, c schemaDef
	json.Unmarshal(oraw, &o)
	json.Unmarshal(craw, &c)
	for p, ps := range o.Properties {
		if cs, ok := c.Properties[p]; !ok {
			t.Errorf("%s.%s was removed since %s", name, p, from)
		} else if !narrowed(ps, cs) {
			t.Errorf("%s.%s changed type since %s", name, p, from)
		}
	}
	was := map[string]bool{}
	for _, r := range o.Required {
		was[r] = true
	}
	for _, r := range c.Required {
		if !was[r] {
			if _, existed := o.Properties[r]; existed || strings.HasSuffix(name, "Params") {
				t.Errorf("%s.%s is newly required since %s", name, r, from)
			}
		}
	}
}

func narrowed(old, cur json.RawMessage) bool {
	o, c := compactJSON(old), compactJSON(cur)
	if bytes.Equal(o, c) || string(o) == "{}" {
		return true
	}
	var cs struct {
		Type  string   `json:"type"`
		Const *string  `json:"const"`
		Enum  []string `json:"enum"`
	}
	json.Unmarshal(cur, &cs)
	return string(o) == `{"type":"string"}` && cs.Type == "string" && (cs.Const != nil || len(cs.Enum) > 0)
}

func compactJSON(b []byte) []byte {
	var out bytes.Buffer
	json.Compact(&out, b)
	return out.Bytes()
}

func baselineSchema(t *testing.T) ([]byte, string) {
	if tag, err := exec.Command("git", "describe", "--tags", "--abbrev=0").Output(); err == nil {
		name := strings.TrimSpace(string(tag))
		if b, err := exec.Command("git", "show", name+":daemon/protocol.json").Output(); err == nil {
			return b, "tag " + name
		}
	}
	b, err := os.ReadFile(filepath.Join("testdata", "protocol.baseline.json"))
	if err != nil {
		t.Fatal(err)
	}
	return b, "testdata/protocol.baseline.json"
}

// Event in protocol.json is a union discriminated by kind: an event
// validates against its kind's payload only, and an unknown kind against
// none.
func TestEventUnionValidates(t *testing.T) {
	d := loadSchema(t, Schema())
	ev := func(kind, payload string) any {
		var v any
		json.Unmarshal([]byte(`{"sessionId":"s","seq":1,"ts":"t","kind":"`+kind+`","payload":`+payload+`}`), &v)
		return v
	}
	ref := json.RawMessage(`{"$ref":"#/$defs/Event"}`)
	if err := d.validate(ref, ev("turn.done", `{"subtype":"success","isError":false,"numTurns":1,"durationMs":2}`), "ev"); err != nil {
		t.Errorf("a turn.done: %v", err)
	}
	for _, bad := range [][2]string{
		{"turn.done", `{"text":"a turn.started payload"}`},
		{"turn.finished", `{}`},
		{"session.ended", `{"outcome":"fine","exitCode":0}`},
	} {
		if err := d.validate(ref, ev(bad[0], bad[1]), "ev"); err == nil {
			t.Errorf("%s %s validated", bad[0], bad[1])
		}
	}
}
