package filter

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/agentjq/agentjq/fixtures"
	"github.com/agentjq/agentjq/internal/testkit/livetest"
)

// The compatibility table: each program runs over the captures with
// Debian's jq 1.6 and with agentjq filter, and the outputs must match
// modulo key order (objects are compared with sorted keys, numbers by
// value; "unordered" rows, whose output order follows key order, compare
// their lines as a sorted list).
//
// Accepted differences (gojq's, not ours):
//   - gojq keeps no key order: keys_unsorted, to_entries, tojson/tostring
//     of objects and the order of paths/.. follow sorted keys, jq's follow
//     insertion order (rows marked unordered; tojson rows decode the
//     string before comparing).
//   - numbers print differently: jq 1.6 writes 1e-05 and 1.0000000000000002
//     style 17-digit values, gojq the shortest round-trip spelling
//     (0.00001); integers beyond 2^53 keep their digits in agentjq and are
//     rounded to doubles by jq 1.6.
//   - objects and arrays passed through unchanged keep their original
//     bytes in agentjq (number spelling, escapes, key order), jq
//     re-serialises them.
//   - error messages differ in wording (stderr is not compared; exit
//     statuses are). jq 1.6's exit status reflects the last input only;
//     agentjq exits 5 when any input failed, as jq 1.7 does.
//   - keys_unsorted and leaf_paths are not in gojq: agentjq defines them
//     (keys_unsorted is keys).
//   - an error on the left of // is suppressed by gojq (as in jq 1.7),
//     reported by jq 1.6: "s" | .[0] // 1 gives 1.
//   - error(null) inside try is caught by gojq, ignored by jq 1.6.
//   - --seq input: jq 1.6 needs RS before each input text; agentjq
//     accepts lines with or without it.
//   - input_filename: both print the name as given.
var compatTable = []struct {
	args      []string
	unordered bool
	tojson    bool // outputs are JSON text in strings: decode them first
}{
	{args: []string{"."}},
	{args: []string{".type"}},
	{args: []string{`select(.type == "assistant")`}},
	{args: []string{`select(.type == "result") | .total_cost_usd`}},
	{args: []string{`select(.type == "result") | {cost: .total_cost_usd, turns: .num_turns}`}},
	{args: []string{"-r", `select(.type == "assistant") | .message.content[] | select(.type == "text") | .text`}},
	{args: []string{`select(.type == "control_request")`}},
	{args: []string{`select(.type == "system" and .subtype == "init") | .model`}},
	{args: []string{`.message.content[]?.type`}},
	{args: []string{`select(.message.content | type == "array") | .message.content | map(.type)`}},
	{args: []string{`[paths] | length`}},
	{args: []string{`paths | map(tostring) | join(".")`}, unordered: true},
	{args: []string{`[leaf_paths] | length`}},
	{args: []string{`[.. | numbers] | length`}},
	{args: []string{`.. | strings | select(test("^toolu_"))`}, unordered: true},
	{args: []string{"-s", `map(.type) | unique`}},
	{args: []string{"-s", `group_by(.type) | map({type: .[0].type, n: length})`}},
	{args: []string{"-s", `[.[] | select(.type == "result") | .total_cost_usd] | add`}},
	{args: []string{"-s", `reduce .[] as $e ({}; .[$e.type] += 1)`}},
	{args: []string{"-s", `map(select(.type == "result")) | sort_by(.duration_ms) | map(.num_turns)`}},
	{args: []string{"-s", `map(.type) | unique_by(length)`}},
	{args: []string{"-s", `min_by(.uuid? // "") | .type`}},
	{args: []string{"-s", `max_by(.num_turns? // 0) | .num_turns`}},
	{args: []string{"-s", `length`}},
	{args: []string{"-s", `[.[] | .session_id? // empty] | unique | length`}},
	{args: []string{`"\(.type)/\(.subtype // "-")"`}},
	{args: []string{"-r", `[.type, (.subtype // "")] | @tsv`}},
	{args: []string{"-r", `[.type, (.subtype // ""), (.uuid // "")] | @csv`}},
	{args: []string{"-r", `{type} | @json`}},
	{args: []string{"-r", `.type | @base64`}},
	{args: []string{"-r", `.type | @base64 | @base64d`}},
	{args: []string{"-r", `.type | @uri`}},
	{args: []string{"-r", `.type | @html`}},
	{args: []string{"-r", `[.type] | @sh`}},
	{args: []string{`try error("x") catch .`}},
	{args: []string{`try (.type | error) catch .`}},
	{args: []string{`.message.content[0]?.text? // "none"`}},
	{args: []string{`[limit(2; .message.content[]?)] | length`}},
	{args: []string{`first(.message.content[]?.type)`}},
	{args: []string{"-n", `first(inputs | select(.type == "result")) | .num_turns`}},
	{args: []string{"-n", `[inputs | .type] | length`}},
	{args: []string{"-n", `input | .type`}},
	{args: []string{"-n", `reduce inputs as $e (0; . + 1)`}},
	{args: []string{"-n", `[limit(3; inputs)] | map(.type)`}},
	{args: []string{"-n", `$ENV.AGENTJQ_COMPAT`}},
	{args: []string{"-n", `env.AGENTJQ_COMPAT`}},
	{args: []string{"--arg", "t", "result", `select(.type == $t) | .subtype`}},
	{args: []string{"--argjson", "n", "1", `select(.num_turns? == $n) | .type`}},
	{args: []string{"-n", "--arg", "a", "1", "--argjson", "b", `{"x":2}`, `[$a, $b]`}},
	{args: []string{"-n", `$ARGS.positional`, "--args", "x", "y"}},
	{args: []string{"-n", `$ARGS.positional`, "--jsonargs", "1", `{"a":[2]}`}},
	{args: []string{`keys`}},
	{args: []string{`keys_unsorted | sort`}},
	{args: []string{`to_entries | map(.key) | sort`}},
	{args: []string{`with_entries(select(.key | startswith("t")))`}},
	{args: []string{`del(.message) | has("message")`}},
	{args: []string{`has("uuid")`}},
	{args: []string{`map_values(type)`}},
	{args: []string{`[.[] | type] | sort`}},
	{args: []string{`select(.type == "assistant") | .message.content | map(select(.type == "tool_use") | .name)`}},
	{args: []string{`select(.type == "user") | .message.content[]? | select(type == "object") | .tool_use_id`}},
	{args: []string{`.type | ascii_upcase`}},
	{args: []string{`.type | length`}},
	{args: []string{`.type | split("_")`}},
	{args: []string{`.type | test("^c")`}},
	{args: []string{`.type | sub("_"; "-")`}},
	{args: []string{`.type | gsub("[aeiou]"; "")`}},
	{args: []string{`.type | ltrimstr("control_")`}},
	{args: []string{`.type | startswith("s"), endswith("t")`}},
	{args: []string{`.type | explode | implode`}},
	{args: []string{`.type | [match("[a-z]+").string]`}},
	{args: []string{`.type | capture("(?<first>[a-z])")`}},
	{args: []string{`if .type == "result" then .num_turns elif .type == "system" then .subtype else empty end`}},
	{args: []string{`.type as $t | {t: $t, n: ($t | length)}`}},
	{args: []string{`. as {type: $t} | $t`}},
	{args: []string{`[range(3)] | map(. * 2)`}},
	{args: []string{`[foreach (1, 2, 3) as $x (0; . + $x)]`}},
	{args: []string{`label $out | foreach (.type | explode[]) as $c (0; . + 1; if . > 3 then ., break $out else empty end)`}},
	{args: []string{`any(.[]; type == "array"), all(.[]; type != "null")`}},
	{args: []string{`[.[] | numbers] | add // 0`}},
	{args: []string{`getpath(["message", "role"])`}},
	{args: []string{`[.type, .subtype] | index("init")`}},
	{args: []string{`.type | tojson | fromjson`}},
	{args: []string{`{type, subtype} | tojson`}, tojson: true},
	{args: []string{`[.message.content[]?] | flatten | length`}},
	{args: []string{`.num_turns? | values | tostring`}},
	{args: []string{`.type | ascii_downcase | [splits("_")]`}},
	{args: []string{`.type | inside("control_request_response")`}},
	{args: []string{`{a: 1} | contains({a: 1})`}},
	{args: []string{`[.type] | inside(["result", "system"])`}},
	{args: []string{`.duration_ms? | numbers | floor, sqrt > 0`}},
	{args: []string{`.type | utf8bytelength`}},
	{args: []string{`[.type, .subtype] | map(values) | join("/")`}},
	{args: []string{`select(.type == "result") | .usage | to_entries | map(select(.value | type == "number")) | from_entries`}},
	{args: []string{`select(.type == "result") | .modelUsage | keys[0]`}},
	{args: []string{`input_filename`}},
	{args: []string{"-e", `.type == "result"`}},
	{args: []string{"-j", `.type`}},
	{args: []string{"--tab", `{type}`}},
	{args: []string{"--indent", "3", `{a: .type, n: [1, {}]}`}},
	{args: []string{"-a", `select(.type == "assistant") | .message.content[]? | .text? // empty`}},
	{args: []string{"-n", "--seq", `1, [2]`}},
	{args: []string{`.message.content[0] | .a.b`}},
	{args: []string{`error`}},
}

func TestCompatibilityWithJQ(t *testing.T) {
	livetest.SkipShort(t, "runs jq")
	jq := os.Getenv("AGENTJQ_JQ")
	if jq == "" {
		jq = "/usr/bin/jq"
	}
	if _, err := os.Stat(jq); err != nil {
		if os.Getenv("AGENTJQ_REQUIRE_JQ") != "" {
			t.Fatalf("jq not found at %s", jq)
		}
		t.Skipf("jq not found at %s (apt-get install jq; CI does)", jq)
	}
	if len(compatTable) < 60 {
		t.Fatalf("the table has %d programs; the spec asks for at least 60", len(compatTable))
	}
	var stream bytes.Buffer
	for _, name := range fixtures.Scenarios() {
		if name == "big-line" {
			continue
		}
		b, err := fixtures.Capture(name, "out")
		if err != nil {
			t.Fatal(err)
		}
		stream.Write(b)
	}
	input := filepath.Join(t.TempDir(), "captures.ndjson")
	if err := os.WriteFile(input, stream.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, row := range compatTable {
		t.Run(strings.Join(row.args, " "), func(t *testing.T) {
			args := append(append([]string{}, row.args...), input)
			if hasPositional(row.args) {
				args = row.args // --args rows read no input
			}
			jqArgs := append([]string{"-c"}, args...)
			if hasFlag(row.args, "--tab") || hasFlag(row.args, "--indent") {
				jqArgs = args
			}
			cmd := exec.Command(jq, jqArgs...)
			cmd.Env = []string{"AGENTJQ_COMPAT=yes"}
			var jqOut, jqErr bytes.Buffer
			cmd.Stdout = &jqOut
			cmd.Stderr = &jqErr
			err := cmd.Run()
			jqCode := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				jqCode = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if jqCode == 0 && strings.Contains(jqErr.String(), "jq: error") {
				// jq 1.6's status reflects the last input only; any
				// error gives 5 in jq 1.7 and in agentjq.
				jqCode = ExitRuntime
			}
			out, _, code := runFilterOpts(t, "", func(o *Options) { o.Environ = []string{"AGENTJQ_COMPAT=yes"} }, args...)
			if code != jqCode {
				t.Errorf("exit %d, jq %d", code, jqCode)
			}
			if hasFlag(row.args, "--tab") || hasFlag(row.args, "--indent") || hasFlag(row.args, "-j") || hasFlag(row.args, "--seq") {
				if out != jqOut.String() {
					t.Errorf("output differs:\nagentjq %q\n     jq %q", out, jqOut.String())
				}
				return
			}
			got, want := normalize(out, row.tojson), normalize(jqOut.String(), row.tojson)
			if row.unordered {
				sort.Strings(got)
				sort.Strings(want)
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("output differs:\nagentjq %s\n     jq %s", clip(strings.Join(got, "\n")), clip(strings.Join(want, "\n")))
			}
		})
	}
}

func hasFlag(args []string, f string) bool {
	for _, a := range args {
		if a == f {
			return true
		}
	}
	return false
}

func hasPositional(args []string) bool { return hasFlag(args, "--args") || hasFlag(args, "--jsonargs") }

func clip(s string) string {
	if len(s) > 600 {
		return s[:600] + "..."
	}
	return s
}

// normalize makes each output line comparable: JSON is re-encoded with
// sorted keys and numbers by value; other lines (raw output) stay.
func normalize(out string, tojson bool) []string {
	var lines []string
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		dec := json.NewDecoder(strings.NewReader(l))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil || dec.More() {
			lines = append(lines, l)
			continue
		}
		if s, ok := v.(string); ok && tojson {
			dec := json.NewDecoder(strings.NewReader(s))
			dec.UseNumber()
			if dec.Decode(&v) != nil {
				v = s
			}
		}
		b, _ := json.Marshal(canonicalNumbers(v))
		lines = append(lines, string(b))
	}
	return lines
}

func canonicalNumbers(v any) any {
	switch v := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil {
			return string(v)
		}
		return strconv.FormatFloat(f, 'g', -1, 64)
	case []any:
		for i := range v {
			v[i] = canonicalNumbers(v[i])
		}
	case map[string]any:
		for k := range v {
			v[k] = canonicalNumbers(v[k])
		}
	}
	return v
}
