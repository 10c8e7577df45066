package replay

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/agentjq/agentjq/redact"
)

// JSONDiff lists the leaves that differ between two JSON documents, one
// per line: "- .path: old" and "+ .path: new". Non-JSON input is compared
// as text.
func JSONDiff(a, b []byte) string {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		if string(a) == string(b) {
			return ""
		}
		return fmt.Sprintf("- %s\n+ %s\n", a, b)
	}
	fa, fb := map[string]string{}, map[string]string{}
	flatten("", va, fa)
	flatten("", vb, fb)
	keys := map[string]bool{}
	for k := range fa {
		keys[k] = true
	}
	for k := range fb {
		keys[k] = true
	}
	var out strings.Builder
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		x, inA := fa[k]
		y, inB := fb[k]
		if inA && inB && redact.MatchRedacted(x, y) {
			continue
		}
		if inA {
			fmt.Fprintf(&out, "- %s: %s\n", k, x)
		}
		if inB {
			fmt.Fprintf(&out, "+ %s: %s\n", k, y)
		}
	}
	return out.String()
}

func flatten(path string, v any, out map[string]string) {
	switch t := v.(type) {
	case map[string]any:
		if len(t) == 0 {
			out[path] = "{}"
		}
		for k, x := range t {
			flatten(path+"."+jqKey(k), x, out)
		}
	case []any:
		if len(t) == 0 {
			out[path] = "[]"
		}
		for i, x := range t {
			flatten(fmt.Sprintf("%s[%d]", path, i), x, out)
		}
	default:
		b, _ := json.Marshal(t)
		if path == "" {
			path = "."
		}
		out[path] = string(b)
	}
}

func jqKey(k string) string {
	for i, c := range k {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			b, _ := json.Marshal(k)
			return string(b)
		}
	}
	if k == "" {
		return `""`
	}
	return k
}
