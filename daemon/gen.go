package daemon

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
)

// The generators below are the only writers of protocol.json,
// sdk/protocol.ts and agentjq-daemon(7) (make protocol, make man); tests
// fail when a committed file differs.

var rawMessageType = reflect.TypeOf(json.RawMessage(nil))

type schemaGen struct {
	defs map[string]any
}

func (g *schemaGen) typeSchema(t reflect.Type) map[string]any {
	if t == rawMessageType {
		return map[string]any{} // any JSON value
	}
	switch t.Kind() {
	case reflect.Pointer:
		return g.typeSchema(t.Elem())
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int64, reflect.Int32:
		return map[string]any{"type": "integer"}
	case reflect.Float64, reflect.Float32:
		return map[string]any{"type": "number"}
	case reflect.Slice:
		return map[string]any{"type": "array", "items": g.typeSchema(t.Elem())}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": g.typeSchema(t.Elem())}
	case reflect.Struct:
		name := t.Name()
		if _, ok := g.defs[name]; !ok {
			g.defs[name] = nil // recursion guard
			props := map[string]any{}
			required := []string{}
			for i := 0; i < t.NumField(); i++ {
				f := t.Field(i)
				tag := f.Tag.Get("json")
				if tag == "-" || !f.IsExported() {
					continue
				}
				key, opts, _ := strings.Cut(tag, ",")
				if key == "" {
					key = f.Name
				}
				props[key] = g.typeSchema(f.Type)
				if !strings.Contains(opts, "omitempty") && f.Type.Kind() != reflect.Pointer {
					required = append(required, key)
				}
			}
			sort.Strings(required)
			g.defs[name] = map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false}
		}
		return map[string]any{"$ref": "#/$defs/" + name}
	}
	panic(fmt.Sprintf("daemon schema: unsupported type %s", t))
}

// Schema is protocol.json: JSON Schema (2020-12) $defs for every type, and
// the method table, events and error codes pointing at them.
func Schema() []byte {
	g := &schemaGen{defs: map[string]any{}}
	methods := map[string]any{}
	for _, m := range Methods {
		e := map[string]any{"doc": m.Doc}
		switch {
		case m.ServerToClient:
			e["direction"] = "serverToClient"
		case m.Notification:
			e["direction"] = "notification"
		default:
			e["direction"] = "clientToServer"
		}
		if m.Params != nil {
			e["params"] = g.typeSchema(typeOf(m.Params))
		}
		if m.Result != nil {
			e["result"] = g.typeSchema(typeOf(m.Result))
		}
		methods[m.Name] = e
	}
	events := map[string]any{}
	for _, k := range EventKinds {
		events[k.Kind] = map[string]any{"doc": k.Doc, "payload": g.typeSchema(typeOf(k.Payload))}
	}
	codes := map[string]any{}
	for _, c := range ErrorCodes {
		codes[c.Code] = c.Meaning
	}
	doc := map[string]any{
		"$schema":         "https://json-schema.org/draft/2020-12/schema",
		"$id":             "https://github.com/agentjq/agentjq/daemon/protocol.json",
		"title":           "agentjq daemon protocol",
		"protocolVersion": ProtocolVersion,
		"$defs":           g.defs,
		"methods":         methods,
		"events":          events,
		"errorCodes":      codes,
		"notImplemented":  NotOffered(),
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		panic(err)
	}
	return append(b, '\n')
}

// TypeScript is sdk/protocol.ts, from the schema (never a second reading
// of the Go types).
func TypeScript() []byte {
	var doc struct {
		Defs    map[string]tsSchema `json:"$defs"`
		Methods map[string]struct {
			Direction string    `json:"direction"`
			Doc       string    `json:"doc"`
			Params    *tsSchema `json:"params"`
			Result    *tsSchema `json:"result"`
		} `json:"methods"`
		Events map[string]struct {
			Doc     string   `json:"doc"`
			Payload tsSchema `json:"payload"`
		} `json:"events"`
		Codes map[string]string `json:"errorCodes"`
	}
	if err := json.Unmarshal(Schema(), &doc); err != nil {
		panic(err)
	}
	var b bytes.Buffer
	b.WriteString("// Generated from daemon/protocol.json by make protocol. Do not edit.\n\n")
	fmt.Fprintf(&b, "export const PROTOCOL_VERSION = %q;\n\n", ProtocolVersion)
	for _, name := range sortedKeys(doc.Defs) {
		d := doc.Defs[name]
		fmt.Fprintf(&b, "export interface %s {\n", name)
		req := map[string]bool{}
		for _, r := range d.Required {
			req[r] = true
		}
		for _, p := range sortedKeys(d.Properties) {
			opt := "?"
			if req[p] {
				opt = ""
			}
			fmt.Fprintf(&b, "  %s%s: %s;\n", p, opt, d.Properties[p].ts())
		}
		b.WriteString("}\n\n")
	}
	write := func(title, dir string) {
		fmt.Fprintf(&b, "export interface %s {\n", title)
		for _, name := range sortedKeys(doc.Methods) {
			m := doc.Methods[name]
			if m.Direction != dir {
				continue
			}
			params, result := "Record<string, never>", "null"
			if m.Params != nil {
				params = m.Params.ts()
			}
			if m.Result != nil {
				result = m.Result.ts()
			}
			fmt.Fprintf(&b, "  /** %s */\n  %q: { params: %s; result: %s };\n", m.Doc, name, params, result)
		}
		b.WriteString("}\n\n")
	}
	write("ClientMethods", "clientToServer")
	write("ServerRequests", "serverToClient")
	write("Notifications", "notification")
	b.WriteString("export interface EventPayloads {\n")
	for _, k := range sortedKeys(doc.Events) {
		fmt.Fprintf(&b, "  /** %s */\n  %q: %s;\n", doc.Events[k].Doc, k, doc.Events[k].Payload.ts())
	}
	b.WriteString("}\n\nexport type EventKind = keyof EventPayloads;\n\n")
	b.WriteString("export type ErrorCode =\n")
	codes := sortedKeys(doc.Codes)
	for i, c := range codes {
		sep := ""
		if i == len(codes)-1 {
			sep = ";"
		}
		fmt.Fprintf(&b, "  | %q%s\n", c, sep)
	}
	return b.Bytes()
}

type tsSchema struct {
	Ref        string              `json:"$ref"`
	Type       string              `json:"type"`
	Items      *tsSchema           `json:"items"`
	Properties map[string]tsSchema `json:"properties"`
	Required   []string            `json:"required"`
	Additional json.RawMessage     `json:"additionalProperties"`
}

func (s tsSchema) ts() string {
	switch {
	case s.Ref != "":
		return strings.TrimPrefix(s.Ref, "#/$defs/")
	case s.Type == "string":
		return "string"
	case s.Type == "integer", s.Type == "number":
		return "number"
	case s.Type == "boolean":
		return "boolean"
	case s.Type == "array":
		return s.Items.ts() + "[]"
	case s.Type == "object":
		var inner tsSchema
		if json.Unmarshal(s.Additional, &inner) == nil {
			return "Record<string, " + inner.ts() + ">"
		}
		return "Record<string, unknown>"
	}
	return "unknown"
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
