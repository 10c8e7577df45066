package daemon

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
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
				if enum := f.Tag.Get("enum"); enum != "" && f.Type.Kind() == reflect.String {
					// A closed set of values: a string enum (a union of
					// string literals in TypeScript).
					props[key] = map[string]any{"type": "string", "enum": strings.Split(enum, ",")}
				}
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
	g.eventUnion()
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

// eventUnion makes Event a discriminated union: one variant per kind,
// <Kind>Event, whose kind is that kind (a const) and whose payload is its
// payload type; Event is the oneOf of them (in TypeScript a union a
// client narrows by switching on kind, no casts).
func (g *schemaGen) eventUnion() {
	g.typeSchema(reflect.TypeOf(Event{}))
	def := g.defs["Event"].(map[string]any)
	props := def["properties"].(map[string]any)
	var variants []any
	for _, k := range EventKinds {
		vp := map[string]any{}
		for name, p := range props {
			vp[name] = p
		}
		vp["kind"] = map[string]any{"const": k.Kind, "type": "string"}
		vp["payload"] = g.typeSchema(typeOf(k.Payload))
		name := eventTypeName(k.Kind)
		g.defs[name] = map[string]any{"type": "object", "properties": vp, "required": def["required"], "additionalProperties": false,
			"description": k.Doc}
		variants = append(variants, map[string]any{"$ref": "#/$defs/" + name})
	}
	g.defs["Event"] = map[string]any{"oneOf": variants, "description": "One session.event: a variant per kind (discriminator kind)."}
}

// eventTypeName is the name of a kind's event type: turn.done is
// TurnDoneEvent.
func eventTypeName(kind string) string {
	var b strings.Builder
	for _, part := range strings.FieldsFunc(kind, func(r rune) bool { return r == '.' || r == '_' }) {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String() + "Event"
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
		if d.Description != "" {
			fmt.Fprintf(&b, "/** %s */\n", d.Description)
		}
		if len(d.OneOf) > 0 {
			fmt.Fprintf(&b, "export type %s =\n", name)
			for i, v := range d.OneOf {
				sep := ""
				if i == len(d.OneOf)-1 {
					sep = ";"
				}
				fmt.Fprintf(&b, "  | %s%s\n", v.ts(), sep)
			}
			b.WriteString("\n")
			continue
		}
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
	// The messages themselves, discriminated by method.
	b.WriteString("/** A notification from the daemon: switch on method to narrow params. */\n")
	b.WriteString("export type NotificationMessage = {\n  [M in keyof Notifications]: { jsonrpc: \"2.0\"; method: M; params: Notifications[M][\"params\"] };\n}[keyof Notifications];\n\n")
	b.WriteString("/** A request from the daemon: answer it with the result of its method. */\n")
	b.WriteString("export type ServerRequestMessage = {\n  [M in keyof ServerRequests]: { jsonrpc: \"2.0\"; id: number | string; method: M; params: ServerRequests[M][\"params\"] };\n}[keyof ServerRequests];\n\n")
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
	Ref         string              `json:"$ref"`
	Const       *string             `json:"const"`
	Enum        []string            `json:"enum"`
	OneOf       []tsSchema          `json:"oneOf"`
	Description string              `json:"description"`
	Type        string              `json:"type"`
	Items       *tsSchema           `json:"items"`
	Properties  map[string]tsSchema `json:"properties"`
	Required    []string            `json:"required"`
	Additional  json.RawMessage     `json:"additionalProperties"`
}

func (s tsSchema) ts() string {
	switch {
	case s.Ref != "":
		return strings.TrimPrefix(s.Ref, "#/$defs/")
	case s.Const != nil:
		return strconv.Quote(*s.Const)
	case len(s.Enum) > 0:
		q := make([]string, len(s.Enum))
		for i, e := range s.Enum {
			q[i] = strconv.Quote(e)
		}
		return strings.Join(q, " | ")
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
