package main

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func writeBin(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "claude")
	b := append([]byte("\x7fELF\x00\x01junk"), text...)
	if err := os.WriteFile(p, append(b, 0, 0, 'x'), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestScanReadsSchemas(t *testing.T) {
	text := `var a=p(()=>u({subtype:P("can_use_tool"),tool_name:r(),input:Te(r(),de()),blocked_path:r().optional(),note:r().describe("a, b: c)").optional(),x:u({inner:r(),deep:r()}).nullish()}));` +
		"\x00" + `b=Gn({subtype:Q("can_use_tool"),tool_use_id:r()});c={subtype:L("brand_new"),"quoted":r()};` +
		`d={subtype:L("unclosed"),a:r(` // the binary ends inside it: not read
	got, err := scanFile(writeBin(t, text))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]fields{
		"can_use_tool": {"tool_name": false, "input": false, "blocked_path": true, "note": true, "x": true, "tool_use_id": false},
		"brand_new":    {"quoted": false},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("scan = %v\nwant %v", got, want)
	}
}

func TestReportNamesChangesAndUndocumented(t *testing.T) {
	cur := map[string]fields{
		"can_use_tool": {"tool_name": false, "input": false, "tool_use_id": false, "brand_new_field": true},
		"interrupt":    {},
		"new_subtype":  {"a": false},
	}
	old := map[string]fields{
		"can_use_tool": {"tool_name": false, "input": false, "tool_use_id": false, "dropped": true},
		"interrupt":    {},
		"gone_subtype": {},
	}
	var b bytes.Buffer
	report(&b, "new-claude", "old-claude", cur, old)
	out := b.String()
	for _, want := range []string{
		"~ can_use_tool", "+brand_new_field? -dropped",
		"+ new_subtype", "- gone_subtype",
		"brand_new_field?*", // not named in tables.go
		"hook_callback                  NOT SEEN",
		"new_subtype                    a\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "tool_name*") || strings.Contains(out, "~ interrupt") {
		t.Errorf("report marks what tables.go names or what did not change:\n%s", out)
	}
}
