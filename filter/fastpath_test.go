package filter

import (
	"bytes"
	"strings"
	"testing"

	"github.com/itchyny/gojq"

	"github.com/agentjq/agentjq/fixtures"
)

// Programs that take the fast paths (and some that must not).
var fastPrograms = []string{
	`.`,
	`select(.type=="assistant") | .message.content[] | select(.type=="text") | .text`,
	`select(.type=="result") | {cost: .total_cost_usd, turns: .num_turns}`,
	`select(.type=="control_request")`,
	`select("x" == .type)`,
	`select(.type? == "x" and .n > 1)`,
	`select(.type == "a") | .n`,
	`select(.type == "a"), 1`,
	`select(.type == "a") // "none"`,
	`{type, n: .n}`,
	`.type, .n`,
	`if .type == "a" then .n else "other" end`,
	`if .type == "a" then .n end`,
	`select(.n) | .type`,
	`[.type, .n] | length`,
	`"\(.type)-\(.n)"`,
	`.["type"]`,
	`."type"`,
	`select(.type == "é")`,
	`select(.type == "a/b")`,
	`keys`,
	`length`,
	`has("n")`,
	`select(.type == "a") | keys`,
	`to_entries`,
	`.n = 1`,
	`. + {z: 1}`,
	`select(.type == "a") | tojson`,
	`(select(.type == "a"))`,
	`.type as $t | $t`,
	`def f: .; f`,
	`del(.n)`,
	`select(.type == "a") | .n |= . + 1`,
}

var fastInputs = []string{
	`{"type":"a","n":2}`,
	`{"type":"b","n":1,"x":[1,2]}`,
	`{"type":"\u0061","n":3}`,
	`{"typ\u0065":"a","n":4}`,
	`{"n":5,"type":"a","type":"b"}`,
	`{"type":"a\/b"}`,
	`{"type":"é"}`,
	`{"type":"\u00e9"}`,
	`[1,{"type":"a"}]`,
	`"a"`, `null`, `1`, `{"type":"a"} {"type":"b"}`, `{"type":"a"`, `{"type":"b","n":`,
	`{}`, `{"type":null}`, `{"type":"a","n":1.50}`, `{"type":"result","total_cost_usd":0.10,"num_turns":1}`,
}

func runBoth(t *testing.T, program string, input string, extra ...string) {
	t.Helper()
	args := append([]string{program}, extra...)
	pOut, pErr, pCode := runFilterOpts(t, input, func(o *Options) { o.NoFastPath = true; o.Workers = 1 }, args...)
	fOut, fErr, fCode := runFilterOpts(t, input, func(o *Options) { o.Workers = 2 }, args...)
	if pOut != fOut || pErr != fErr || pCode != fCode {
		t.Fatalf("program %q %q on %q:\n plain %q %q %d\n  fast %q %q %d", program, extra, input, pOut, pErr, pCode, fOut, fErr, fCode)
	}
}

func TestFastPathsMatchPlain(t *testing.T) {
	input := strings.Join(fastInputs, "\n") + "\n"
	for _, p := range fastPrograms {
		runBoth(t, p, input)
		runBoth(t, p, input, "--indent", "2")
		runBoth(t, p, input, "-a", "-r")
	}
}

func TestFastPathsMatchPlainOnCaptures(t *testing.T) {
	t.Parallel()
	var all bytes.Buffer
	for _, name := range fixtures.Scenarios() {
		b, err := fixtures.Capture(name, "out")
		if err != nil {
			t.Fatal(err)
		}
		all.Write(b)
	}
	for _, p := range fastPrograms {
		runBoth(t, p, all.String())
	}
}

func FuzzFastPaths(f *testing.F) {
	for i := range fastPrograms {
		for _, in := range fastInputs {
			f.Add(uint8(i), in)
		}
	}
	f.Fuzz(func(t *testing.T, i uint8, input string) {
		runBoth(t, fastPrograms[int(i)%len(fastPrograms)], input)
	})
}

func TestPlans(t *testing.T) {
	tests := []struct {
		program string
		typ     string
		keys    string // sorted, comma-separated; "*" means no projection
	}{
		{`.`, "", ""}, // the output is the input, written from its bytes
		{`select(.type=="assistant") | .message.content[] | select(.type=="text") | .text`, "assistant", "message,type"},
		{`select(.type=="result") | {cost: .total_cost_usd, turns: .num_turns}`, "result", "num_turns,total_cost_usd,type"},
		{`select(.type=="control_request")`, "control_request", "type"},
		{`select(.type == "a") // 1`, "", "type"},
		{`select(.type == "a") | keys`, "a", "*"},
		{`keys`, "", "*"},
		{`.a = 1`, "", "*"},
		{`select(.type == "a\"b")`, "", "type"},
		{`def select(f): .; select(.type == "a")`, "", "*"},
		{`{type}`, "", "type"},
		{`if .a then .b else . end`, "", "a,b"},
		{`.a[.b]`, "", "*"},
	}
	for _, tt := range tests {
		q, err := gojq.Parse(tt.program)
		if err != nil {
			t.Fatal(err)
		}
		p := makePlan(q, nil)
		typ, keys := "", "*"
		if p != nil {
			typ = p.typeValue
			if p.only != nil {
				var ks []string
				for k := range p.only {
					ks = append(ks, k)
				}
				keys = strings.Join(sorted(ks), ",")
			}
		}
		if typ != tt.typ || keys != tt.keys {
			t.Errorf("plan of %q: type %q keys %q, want %q %q", tt.program, typ, keys, tt.typ, tt.keys)
		}
	}
}

func sorted(s []string) []string {
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s
}
