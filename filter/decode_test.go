package filter

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/itchyny/gojq"

	"github.com/agentjq/agentjq/fixtures"
	"github.com/agentjq/agentjq/internal/protocol"
)

// referenceDecode is the plain decoder the fast one must match:
// encoding/json with UseNumber, numbers then converted by numberValue.
func referenceDecode(data []byte) ([]any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var vs []any
	for {
		var v any
		err := dec.Decode(&v)
		if err != nil {
			if err.Error() == "EOF" {
				return vs, nil
			}
			return nil, err
		}
		vs = append(vs, normalizeNumbers(v))
	}
}

func normalizeNumbers(v any) any {
	switch v := v.(type) {
	case json.Number:
		s := string(v)
		return numberValue(s, !strings.ContainsAny(s, ".eE"))
	case []any:
		for i, x := range v {
			v[i] = normalizeNumbers(x)
		}
	case map[string]any:
		for k, x := range v {
			v[k] = normalizeNumbers(x)
		}
	}
	return v
}

func sameValues(a, b []any) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !sameJSON(a[i], b[i]) {
			return false
		}
	}
	return true
}

// sameJSON is deep equality where NaN never occurs and floats compare
// bit for bit (so -0 and 0 differ, as their spellings do).
func sameJSON(a, b any) bool {
	if fa, ok := a.(float64); ok {
		fb, ok := b.(float64)
		return ok && math.Float64bits(fa) == math.Float64bits(fb)
	}
	return reflect.DeepEqual(a, b)
}

var decodeCases = []string{
	`{"a":1,"b":[true,false,null],"c":"x\u00e9\n","d":-0.5e3}`,
	`12345678901234567890123`,
	`-9223372036854775808`,
	`9223372036854775807`,
	`9223372036854775808`,
	`1e400`,
	`-0`,
	`0.1`,
	`"\ud83d\ude00 \ud800 \udc00 \ud800\u0041"`,
	"\"\xff\xfe ok\"",
	`{"a":1,"a":2}`,
	`[]`, `{}`, `""`, ` [ 1 , 2 ] `,
	`1 2 "three"`,
	`{"a" 1}`, `[1,]`, `{"a":1,}`, `01`, `1.`, `-`, `.5`, `1e`, `"\x"`, "\"a\tb\"", `tru`, `nul`, `[`, `"`, `"\u12"`,
	`{"k":"\/\b\f\r\t\"\\"}`,
}

func TestDecodeMatchesEncodingJSON(t *testing.T) {
	for _, c := range decodeCases {
		checkDecode(t, []byte(c))
	}
}

func TestDecodeCaptures(t *testing.T) {
	for _, name := range fixtures.Scenarios() {
		b, err := fixtures.Capture(name, "out")
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range bytes.Split(b, []byte("\n")) {
			if len(line) > 0 {
				checkDecode(t, line)
			}
		}
	}
}

func checkDecode(t *testing.T, data []byte) {
	t.Helper()
	want, wantErr := referenceDecode(data)
	got, gotErr := decodeAll(data)
	if (wantErr == nil) != (gotErr == nil) {
		t.Fatalf("decode %q: error %v, encoding/json says %v", data, gotErr, wantErr)
	}
	if wantErr == nil && !sameValues(got, want) {
		t.Fatalf("decode %q:\n got %#v\nwant %#v", data, got, want)
	}
	// The validator agrees with the decoder on one value.
	_, verr := newDecoder().validateOne(data)
	if one := gotErr == nil && len(got) == 1; (verr == nil) != one {
		t.Fatalf("validate %q: %v, the decoder found %d values (%v)", data, verr, len(got), gotErr)
	}
}

// The decoder's errors are the scanner's: a value nested too deep is
// valid JSON and says so; one that is not JSON gets the offset of the
// first byte that does not fit, however deep it sits.
func TestDecodeErrors(t *testing.T) {
	deep := strings.Repeat("[", 10001) + strings.Repeat("]", 10001)
	for _, c := range []struct{ text, want string }{
		{deep, "JSON nesting deeper than 10000 at column 10001"},
		{`{"k":` + deep + `}`, "JSON nesting deeper than 10000 at column 10005"},
		{deep[:len(deep)-1], "invalid JSON at column 20002: unexpected end of line in an array"},
		{`{"a" 1}`, `invalid JSON at column 6: unexpected '1' after an object key`},
		{`[1,]`, `invalid JSON at column 4: unexpected ']', looking for a value`},
		{`"\q"`, `invalid JSON at column 3: invalid escape "\\q"`},
		{`1 x`, `invalid JSON at column 3: unexpected 'x', looking for a value`},
	} {
		_, err := decodeAll([]byte(c.text))
		if err == nil || err.Error() != c.want {
			t.Errorf("decode %.40q: %v, want %s", c.text, err, c.want)
		}
	}
	var de *protocol.DepthError
	if _, err := newDecoder().validateOne([]byte(deep)); !errors.As(err, &de) {
		t.Errorf("validateOne: %v, want a DepthError", err)
	}
	if _, err := newDecoder().validateOne([]byte(`[1] x`)); err == nil || err.Error() != "invalid JSON at column 5: unexpected 'x' after the value" {
		t.Errorf("validateOne with a trailer: %v", err)
	}
}

func FuzzDecode(f *testing.F) {
	for _, c := range decodeCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkDecode(t, data)
	})
}

func TestBigIntegersSurvive(t *testing.T) {
	vs, err := decodeAll([]byte(`{"id":123456789012345678901234567890}`))
	if err != nil {
		t.Fatal(err)
	}
	got := (&style{}).encode(nil, vs[0], 0)
	if string(got) != `{"id":123456789012345678901234567890}` {
		t.Fatalf("got %s", got)
	}
}

// The encoder writes what gojq.Marshal writes in compact style.
func TestEncodeMatchesGojq(t *testing.T) {
	vals := []any{nil, true, false, 0, -3, 1.5, 1e21, 1e-7, 3.0, math.Inf(1), math.NaN(), float64(1 << 60), 72057594037927936.0,
		"a\"\\\b\f\n\r\t\x01\x7f é 😀 \u2028", "\xff", []any{}, map[string]any{},
		map[string]any{"b": []any{1, map[string]any{"z": nil, "a": "x"}}, "a": json.Number("123456789012345678901")}}
	for _, v := range vals {
		want, _ := gojq.Marshal(v)
		got := (&style{}).encode(nil, v, 0)
		if string(got) != string(want) {
			t.Errorf("encode %#v: got %s, gojq %s", v, got, want)
		}
	}
}

func FuzzEncode(f *testing.F) {
	for _, c := range decodeCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		vs, err := decodeAll(data)
		if err != nil {
			return
		}
		for _, v := range vs {
			want, _ := gojq.Marshal(v)
			if got := (&style{}).encode(nil, v, 0); string(got) != string(want) {
				t.Fatalf("encode %q: got %s, gojq %s", data, got, want)
			}
		}
	})
}

// The original-bytes writer lays out like the encoder, for values whose
// bytes the encoder would spell the same way.
func TestAppendRawLayout(t *testing.T) {
	raw := `{"a":[1,{"b":null,"c":[]}],"d":{},"e":"é"}`
	vs, _ := decodeAll([]byte(raw))
	for _, st := range []style{{}, {indent: 2}, {indent: 7}, {tab: true}, {color: true}, {indent: 1, color: true}, {ascii: true}, {ascii: true, indent: 3}} {
		got := st.appendRaw(nil, []byte(raw))
		want := st.encode(nil, vs[0], 0)
		if string(got) != string(want) {
			t.Errorf("style %+v:\n got %q\nwant %q", st, got, want)
		}
	}
	spaced := []byte(" { \"a\" : [ 1 , 2 ] , \"s\" : \" x \" } ")
	if got := (&style{}).appendRaw(nil, bytes.TrimSpace(spaced)); string(got) != `{"a":[1,2],"s":" x "}` {
		t.Errorf("compacting: %s", got)
	}
}
