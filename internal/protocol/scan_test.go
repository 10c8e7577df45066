package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/agentjq/agentjq/fixtures"
	"github.com/agentjq/agentjq/internal/testkit/streamgen"
)

// checkScan holds the scanner to encoding/json on line: Scan and ScanLine
// on it as a line, SkipValue on it as one value, ScanString on each string
// SkipValue passes at the top level.
func checkScan(t *testing.T, line []byte) {
	t.Helper()
	checkSkip(t, line)
	h, ok := Scan(line)
	trimmed := bytes.TrimSpace(line)
	want := json.Valid(line) && len(trimmed) > 0 && trimmed[0] == '{'
	if ok != want {
		t.Fatalf("Scan(%q) ok=%v, json.Valid says %v", line, ok, want)
	}
	if _, err := ScanLine(line); (err == nil) != ok {
		t.Fatalf("ScanLine(%q) = %v, Scan says %v", line, err, ok)
	}
	if !ok {
		if h.Known != 0 {
			t.Fatalf("Scan(%q) refused it but says %b", line, h.Known)
		}
		return
	}
	for k, v := range Fields(line, ResultKeys[:]...) {
		if !bytes.Equal(h.Result[k], v) || (h.Result[k] == nil) != (v == nil) {
			t.Fatalf("Scan(%q) %s = %q, Fields says %q", line, ResultKeys[k], h.Result[k], v)
		}
	}
	if h.Known&KnownObject == 0 || (h.Known&KnownPlain == 0) != HidesText(line) {
		t.Fatalf("Scan(%q) Known = %b, want an object, plain %v", line, h.Known, !HidesText(line))
	}
	// Keys match exactly, as the agent's own JSON parser matches them.
	var e map[string]any
	if err := json.Unmarshal(line, &e); err != nil {
		t.Fatalf("valid but undecodable: %q", line)
	}
	typ, sub, id := h.Strings()
	str := func(v any) string { s, _ := v.(string); return s }
	if sid := string(unescape(h.SessionID)); sid != str(e["session_id"]) {
		t.Fatalf("Scan(%q) session_id = %q, want %q", line, sid, str(e["session_id"]))
	}
	// A duplicate key: the last one counts, in both.
	if typ != str(e["type"]) || sub != str(e["subtype"]) || id != str(e["request_id"]) {
		t.Fatalf("Scan(%q) head = %q %q %q, want %q %q %q", line, typ, sub, id, str(e["type"]), str(e["subtype"]), str(e["request_id"]))
	}
}

func TestHidesText(t *testing.T) {
	for s, want := range map[string]bool{
		`{"a":"plain"}`:             false,
		`{"a":"line\nnext\t\"q\""}`: false,
		`{"a":"\u0073k-"}`:          true,
		`{"a":"x\/y"}`:              true,
		`{"a":"back\\u0073"}`:       true, // decoded, "\u0073": the text redaction decodes that too
		`{"a":"back\\n"}`:           false,
		`{"a":"back\\\u0073"}`:      true,
		`{"k\/":1}`:                 true,
		`\`:                         false,
		`not JSON \/`:               true,
	} {
		if got := HidesText([]byte(s)); got != want {
			t.Errorf("HidesText(%s) = %v", s, got)
		}
		// For a line Scan accepts, its one pass finds the same.
		if h, ok := Scan([]byte(s)); ok && (h.Known&KnownPlain == 0) != want {
			t.Errorf("Scan(%s) Known = %b, HidesText says %v", s, h.Known, want)
		}
	}
}

// checkSkip compares SkipValue with json.Valid on data as one value, and
// ScanString's flags with the string's bytes when data is a string.
func checkSkip(t *testing.T, data []byte) {
	t.Helper()
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	at := len(data) - len(trimmed)
	end, spaced, err := SkipValue(data, at, 0)
	rest := bytes.TrimLeft(data[min(end, len(data)):], " \t\r\n")
	whole := err == nil && len(rest) == 0
	if want := json.Valid(data); whole != want {
		t.Fatalf("SkipValue(%q) = %d, %v; json.Valid says %v", data, end, err, want)
	}
	var syn *SyntaxError
	var deep *DepthError
	if errors.As(err, &deep) && bytes.Count(data, []byte("["))+bytes.Count(data, []byte("{")) <= MaxDepth {
		t.Fatalf("SkipValue(%q): %v with fewer brackets than that", data, err)
	}
	if err != nil && !errors.As(err, &syn) && !errors.As(err, &deep) {
		t.Fatalf("SkipValue(%q): %T %v", data, err, err)
	}
	if err != nil {
		return
	}
	if hasSpace := bytes.ContainsAny(compactOutside(data[at:end]), " \t\r\n"); spaced != hasSpace {
		t.Fatalf("SkipValue(%q) spaced = %v", data, spaced)
	}
	if len(trimmed) > 0 && trimmed[0] == '"' {
		send, esc, nonASCII, err := ScanString(data, at)
		if err != nil || send != end {
			t.Fatalf("ScanString(%q) = %d %v, SkipValue says %d", data, send, err, end)
		}
		body := data[at+1 : end-1]
		if esc != (bytes.IndexByte(body, '\\') >= 0) {
			t.Fatalf("ScanString(%q) escaped = %v", data, esc)
		}
		ascii := true
		for _, c := range body {
			ascii = ascii && c < 0x80
		}
		if nonASCII == ascii {
			t.Fatalf("ScanString(%q) nonASCII = %v", data, nonASCII)
		}
	}
}

// compactOutside returns v with its strings emptied: what is left is the
// white space outside them, if any.
func compactOutside(v []byte) []byte {
	var out []byte
	for i := 0; i < len(v); i++ {
		if v[i] == '"' {
			end, _, _, _ := ScanString(v, i)
			out = append(out, '"', '"')
			i = end - 1
			continue
		}
		out = append(out, v[i])
	}
	return out
}

func TestScanDepth(t *testing.T) {
	deep := func(n int, inner string) []byte {
		return []byte(`{"a":` + strings.Repeat(`[{"b":`, n) + inner + strings.Repeat(`}]`, n) + `}`)
	}
	// 1 + 2*4999 = 9999 containers, then 10001 and 20001.
	if _, err := ScanLine(deep(4999, "1")); err != nil {
		t.Fatalf("9999 levels: %v", err)
	}
	for _, n := range []int{5000, 10000} {
		line := append([]byte(`{"type":"control_request","request_id":"r1",`), deep(n, "1")[1:]...)
		h, _ := ScanLine(line)
		if typ, _, id := h.Strings(); typ != "control_request" || id != "r1" {
			t.Errorf("%d levels: head %q %q", 1+2*n, typ, id)
		}
		if f := Fields(line, "request_id", "a"); string(f[0]) != `"r1"` || len(f[1]) != len(line)-len(`{"type":"control_request","request_id":"r1","a":}`) {
			t.Errorf("%d levels: Fields %.20q", 1+2*n, f)
		}
		_, err := ScanLine(deep(n, "1"))
		var de *DepthError
		if !errors.As(err, &de) || !strings.Contains(err.Error(), "nesting deeper than 10000") {
			t.Fatalf("%d levels: %v, want a DepthError", 1+2*n, err)
		}
		// Level 10001 is the { of the 5000th [{"b":.
		if want := len(`{"a":`) + 4999*len(`[{"b":`) + 1; de.Offset != want {
			t.Errorf("%d levels: offset %d, want %d", 1+2*n, de.Offset, want)
		}
		// Not JSON, however deep: a syntax error, not a depth error.
		for _, bad := range [][]byte{deep(n, "x"), deep(n, "1")[:len(deep(n, "1"))-1], append(deep(n, "1"), ',')} {
			var syn *SyntaxError
			if _, err := ScanLine(bad); !errors.As(err, &syn) {
				t.Fatalf("bad at %d levels: %v, want a SyntaxError", 1+2*n, err)
			}
		}
	}
	// SkipValue counts the containers a value sits in and still finds the
	// end of a value that is too deep.
	v := []byte(strings.Repeat("[", 10) + strings.Repeat("]", 10))
	if end, _, err := SkipValue(v, 0, MaxDepth-10); err != nil || end != len(v) {
		t.Fatalf("at the limit: %d %v", end, err)
	}
	var de *DepthError
	if end, _, err := SkipValue(v, 0, MaxDepth-9); !errors.As(err, &de) || end != len(v) {
		t.Fatalf("one past the limit: %d %v", end, err)
	}
	if _, err := ScanLine([]byte(`[1]`)); err != ErrNotObject {
		t.Fatalf("an array line: %v", err)
	}
}

func TestScanCaptures(t *testing.T) {
	for _, name := range fixtures.Scenarios() {
		for _, dir := range []string{"in", "out"} {
			b, err := fixtures.Capture(name, dir)
			if err != nil {
				continue
			}
			for _, l := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
				checkScan(t, l)
				if _, ok := Scan(l); !ok {
					t.Errorf("%s.%s: a capture line was refused: %.100s", name, dir, l)
				}
			}
		}
	}
}

var scanCases = []string{
	`{"type":"result","permission_denials":[{"tool_use_id":"t1"}],"queued_turn_count":2,"user_message_uuids":["a","b"],"user_message_uuid":"c"}`,
	`{"permission_denials":[],"x":{"permission_denials":[1]},"permission_denials":[2],"user_message_uuid":null}`,
	`{"a":"x\/y"}`, `{"a":"back\\u0073"}`, `{"a":"back\\\u0073"}`, `{"a":"back\\n\n\""}`, `{"k\/":1}`, `{"a":"\\\\/"}`,
	`{}`, ` {} `, `{"type":"x"}`, `{"type":"a\"b","subtype":"c\u0041"}`, `{"a":[1,2,{"b":null}],"type":"t"}`,
	`{"type":1}`, `{"type":"x",}`, `{"type":"x"`, `{"type":"x"}}`, `[1]`, `"s"`, `{"a":01}`, `{"a":1.}`,
	`{"a":-}`, `{"a":1e}`, `{"a":1e+5}`, `{"a":"\x01"}`, `{"a":"\q"}`, `{"a":"\u12"}`, `{"a":tru}`,
	`{"a":true,"b":false,"c":null}`, `{"request_id":"r1","type":"control_request","request":{"subtype":"can_use_tool"}}`,
	`{"a":"` + "\xff\xfe" + `"}`, `{"a" : [ ] , "b" : { } }`, "{\"a\":\"tab\there\"}", `{"a":"12345678\"9"}`,
	`{"type":"x","type":"y"}`, `{"\u0074ype":"z"}`, ``, `{`, `}`, `{"a":[}`, `{"a":[1,]}`,
	`[1, {"a" : "b"}]`, `"plain"`, `"é\n"`, "\"\xff\"", `12`, `-0.5e+3`, `true`, `nul`, ` [ ] `, `[1 2]`, `{"a":1 "b":2}`,
	`"` + strings.Repeat("é", 9) + `"`, `"abcdefgh` + "\x80" + `"`,
}

func TestScanCases(t *testing.T) {
	for _, c := range scanCases {
		checkScan(t, []byte(c))
	}
}

func FuzzScan(f *testing.F) {
	for _, c := range scanCases {
		f.Add([]byte(c))
	}
	b, _ := fixtures.Capture("write-allow", "out")
	for _, l := range bytes.Split(b, []byte("\n")) {
		f.Add(l)
	}
	f.Fuzz(func(t *testing.T, line []byte) { checkScan(t, line) })
}

func BenchmarkScan(b *testing.B) {
	var buf bytes.Buffer
	g, err := streamgen.New(1)
	if err != nil {
		b.Fatal(err)
	}
	g.WriteTo(&buf, 16<<20)
	lines := bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n"))
	b.SetBytes(int64(buf.Len()))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, l := range lines {
			if _, ok := Scan(l); !ok {
				b.Fatal("refused")
			}
		}
	}
}

func TestFields(t *testing.T) {
	line := []byte(`{"type":"result","n":[1,{"type":"x"}], "is_error" : true,"s":"a\"b","n":2}`)
	got := Fields(line, "is_error", "n", "s", "missing", "type")
	want := []string{"true", "2", `"a\"b"`, "", `"result"`}
	for i := range want {
		if string(got[i]) != want[i] {
			t.Errorf("field %d = %q, want %q", i, got[i], want[i])
		}
	}
}

func TestElementsAndString(t *testing.T) {
	arr := []byte(` [ {"tool_use_id":"a\"b","x":[1,2]} , 3,"s\u0041", [] ] `)
	got := Elements(arr)
	want := []string{`{"tool_use_id":"a\"b","x":[1,2]}`, `3`, `"s\u0041"`, `[]`}
	if len(got) != len(want) {
		t.Fatalf("Elements = %q, want %q", got, want)
	}
	for i := range want {
		if string(got[i]) != want[i] {
			t.Errorf("element %d = %s, want %s", i, got[i], want[i])
		}
	}
	if Elements([]byte(`{}`)) != nil || len(Elements([]byte(`[]`))) != 0 {
		t.Error("Elements of a non-array or an empty array")
	}
	for v, w := range map[string]string{`"plain"`: "plain", `"a\"b"`: `a"b`, `"s\u0041"`: "sA"} {
		if s, ok := String([]byte(v)); !ok || s != w {
			t.Errorf("String(%s) = %q %v, want %q", v, s, ok, w)
		}
	}
	for _, v := range []string{``, `"`, `3`, `null`, `"\q"`} {
		if _, ok := String([]byte(v)); ok {
			t.Errorf("String(%s) ok", v)
		}
	}
	id, _ := String(Fields(Elements(arr)[0], "tool_use_id")[0])
	if id != `a"b` {
		t.Errorf("tool_use_id = %q", id)
	}
}

// TestScanLongStrings puts every kind of special byte at every position of
// a long string, where the eight-byte loop meets it at each offset of a
// word and at the line's end, and compares with encoding/json.
func TestScanLongStrings(t *testing.T) {
	specials := []string{`\n`, `\"`, `\\`, `\/`, `\b`, `\f`, `\r`, `\t`, `\u0041`, `\u00e9x`, `\q`, `\u12`, `\`, `"`, "\x01", "\x1f", "\x7f", "é", `\\\"`, `\\\\`}
	for _, sp := range specials {
		for n := 0; n < 100; n++ {
			for _, tail := range []string{"", "abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz"} {
				body := strings.Repeat("a", n) + sp + tail
				checkScan(t, []byte(`{"k":"`+body+`","type":"x"}`))
				checkScan(t, []byte(`{"k":"`+body+`"}`))
				checkScan(t, []byte(`{"k":"`+body))
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "b", `\`, `"`, "n", "u", "0", "\x01", "é", " ", "/", "t"}
	for range 20000 {
		var sb strings.Builder
		for range r.IntN(160) {
			sb.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		checkScan(t, []byte(`{"k":"`+sb.String()+`"}`))
	}
}
