package approve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
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

// orEmpty is an absent tool input as the empty object.
func orEmpty(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage(`{}`)
	}
	return b
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

// readToolInput reads a tool input strictly; bad says why it cannot be
// judged (a duplicate or case-variant key, a path field of the wrong type,
// a missing path, a glob that reaches outside its directory).
func readToolInput(tool string, input json.RawMessage) (toolInput, string) {
	var in toolInput
	if err := decodeStrict(orEmpty(input), &in); err != nil {
		return in, "input that does not match the tool's schema: " + err.Error()
	}
	fields, isFileTool := pathFields[tool]
	if tool == "Bash" && in.Command == "" {
		return in, "no command"
	}
	if !isFileTool {
		return in, ""
	}
	var m map[string]json.RawMessage
	if err := decodeStrict(orEmpty(input), &m); err != nil {
		return in, "input that is not an object"
	}
	for _, f := range fields {
		raw, ok := m[f]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return in, f + " is not a string"
		}
		if (f == "glob" || f == "pattern") && globEscapes(s) {
			return in, f + " reaches outside the searched directory"
		}
	}
	if requiredPath[tool] {
		if _, ok := m[fields[0]]; !ok {
			return in, "no " + fields[0]
		}
	}
	return in, ""
}
