package approve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/agentjq/agentjq/internal/protocol"
)

// Answers from approvers, hooks and policies, and the tool inputs rules
// judge, are read exactly as claude reads them. Go's encoding/json matches
// keys case-insensitively and lets a later duplicate win; claude (JSON.parse
// and exact property names) reads {"behavior":"deny","Behavior":"allow"} as
// a deny. decodeStrict closes that gap: a duplicate key anywhere is an
// error, and so is a key that differs from a field's name only in case
// (what encoding/json would wrongly take for the field).

var rawMessageType = reflect.TypeOf(json.RawMessage(nil))

// decodeStrict decodes data into v, refusing duplicate keys and keys that
// match a field only without regard to case.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := checkValue(dec, reflect.TypeOf(v), ""); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("trailing data after the JSON value")
	}
	return json.Unmarshal(data, v)
}

// checkValue reads one value from dec, checking objects against t (nil:
// any value, still checked for duplicates).
func checkValue(dec *json.Decoder, t reflect.Type, at string) error {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == rawMessageType {
		t = nil
	}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	switch d {
	case '{':
		seen := map[string]bool{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return err
			}
			key := kt.(string)
			if seen[key] {
				return fmt.Errorf("duplicate key %q%s", key, where(at))
			}
			seen[key] = true
			var sub reflect.Type
			if t != nil {
				switch t.Kind() {
				case reflect.Struct:
					ft, exact, folded := structField(t, key)
					if !exact && folded != "" {
						return fmt.Errorf("key %q%s is not %q (keys are case-sensitive)", key, where(at), folded)
					}
					sub = ft
				case reflect.Map:
					sub = t.Elem()
				}
			}
			if err := checkValue(dec, sub, at+"."+key); err != nil {
				return err
			}
		}
	case '[':
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for dec.More() {
			if err := checkValue(dec, elem, at+"[]"); err != nil {
				return err
			}
		}
	}
	_, err = dec.Token() // the closing delimiter
	return err
}

func where(at string) string {
	if at == "" {
		return ""
	}
	return " in " + strings.TrimPrefix(at, ".")
}

// structField finds the field for key: exact when its JSON name is key,
// folded names the field a key would match only without regard to case.
func structField(t reflect.Type, key string) (ft reflect.Type, exact bool, folded string) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" {
			et := f.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				if sub, ex, fo := structField(et, key); ex {
					return sub, true, ""
				} else if fo != "" && folded == "" {
					folded = fo
				}
				continue
			}
		}
		if name == "" {
			name = f.Name
		}
		if name == key {
			return f.Type, true, ""
		}
		if strings.EqualFold(name, key) && folded == "" {
			folded = name
		}
	}
	return nil, false, folded
}

// objectInput reports whether an updatedInput is usable: a JSON object.
// null, a string or an array would reach the agent as the tool's input.
func objectInput(b json.RawMessage) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 0 && b[0] == '{'
}

// checkAnswer enforces what every answer must be before it is sent: an
// allow carries an object as its input (a protocol error denies), a deny a
// message that says something, and no permission update that would write
// rules into the agent's settings files.
func checkAnswer(v Verdict) Verdict {
	switch v.Behavior {
	case protocol.Allow:
		if len(v.UpdatedInput) > 0 && !objectInput(v.UpdatedInput) {
			return Verdict{Behavior: protocol.Deny, Source: protocol.ByError, Rule: v.Rule,
				Message: fmt.Sprintf("agentjq: protocol error: %s allowed the call with an updatedInput that is not an object (%s), so it was denied.", answerSource(v), clip(string(v.UpdatedInput), 40))}
		}
		v.UpdatedPermissions = sessionOnly(v.UpdatedPermissions)
	case protocol.Deny:
		if strings.TrimSpace(v.Message) == "" {
			v.Message = "agentjq: denied."
		}
	}
	return v
}

func answerSource(v Verdict) string {
	if v.Rule != "" {
		return v.Rule
	}
	if v.Source != "" {
		return v.Source
	}
	return "the decider"
}

// sessionOnly keeps the permission updates whose destination is the
// session, except a setMode to bypassPermissions: updates for userSettings, projectSettings or localSettings
// (or with no or an unknown destination) would persist rules into the
// agent's own settings files, outside agentjq's policy, and are dropped.
func sessionOnly(list []json.RawMessage) []json.RawMessage {
	var kept []json.RawMessage
	for _, raw := range list {
		var u struct {
			Type        string `json:"type"`
			Mode        string `json:"mode"`
			Destination string `json:"destination"`
		}
		if decodeStrict(raw, &u) != nil || u.Destination != "session" {
			continue
		}
		if u.Type == "setMode" && u.Mode == "bypassPermissions" {
			// A mode that skips permission checks is no answer to one
			// request: agentjq's hook must go on deciding every call.
			continue
		}
		kept = append(kept, raw)
	}
	return kept
}
