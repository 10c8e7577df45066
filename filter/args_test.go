package filter

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseArgs(t *testing.T) {
	tests := []struct {
		args  []string
		check func(o *Options) bool
		err   string
	}{
		{nil, func(o *Options) bool { return o.Program == "." && len(o.Files) == 0 }, ""},
		{[]string{".a", "f1", "f2"}, func(o *Options) bool { return o.Program == ".a" && reflect.DeepEqual(o.Files, []string{"f1", "f2"}) }, ""},
		{[]string{"-nrc", "."}, func(o *Options) bool { return o.NullInput && o.Raw && o.Indent == 0 }, ""},
		{[]string{"-j"}, func(o *Options) bool { return o.Raw && o.Join }, ""},
		{[]string{"--indent", "4", "--tab"}, func(o *Options) bool { return o.Tab }, ""},
		{[]string{"--tab", "-c"}, func(o *Options) bool { return !o.Tab && o.Indent == 0 }, ""},
		{[]string{"--indent", "8"}, nil, "cannot indent more than 7"},
		{[]string{"--indent", "x"}, nil, "--indent takes a number"},
		{[]string{"--arg", "a", "1", "--argjson", "b", "[2]", "."}, func(o *Options) bool {
			return len(o.Named) == 2 && o.Named[0].Value == "1" && reflect.DeepEqual(o.Named[1].Value, []any{2})
		}, ""},
		{[]string{"--argjson", "b", "{"}, nil, "invalid JSON"},
		{[]string{"--arg", "a"}, nil, "--arg takes 2 arguments"},
		{[]string{".", "f1", "--args", "x", "-r", "y"}, func(o *Options) bool {
			return reflect.DeepEqual(o.Files, []string{"f1"}) && reflect.DeepEqual(o.Positional, []any{"x", "y"}) && o.Raw
		}, ""},
		{[]string{"--jsonargs", ".", "1", `"s"`}, func(o *Options) bool { return reflect.DeepEqual(o.Positional, []any{1, "s"}) }, ""},
		{[]string{"--jsonargs", ".", "nope"}, nil, "--jsonargs: invalid JSON"},
		{[]string{"-f", "prog.jq", "in.json"}, func(o *Options) bool {
			return o.ProgramFile == "prog.jq" && reflect.DeepEqual(o.Files, []string{"in.json"})
		}, ""},
		{[]string{"in.json", "-f", "prog.jq"}, func(o *Options) bool {
			return o.ProgramFile == "prog.jq" && reflect.DeepEqual(o.Files, []string{"in.json"})
		}, ""},
		{[]string{"-L", "d1", "-Ld2", "--library-path", "d3"}, func(o *Options) bool { return reflect.DeepEqual(o.LibDirs, []string{"d1", "d2", "d3"}) }, ""},
		{[]string{"-nL", "d1"}, func(o *Options) bool { return o.NullInput && reflect.DeepEqual(o.LibDirs, []string{"d1"}) }, ""},
		{[]string{"--", "-x", "-"}, func(o *Options) bool { return o.Program == "-x" && reflect.DeepEqual(o.Files, []string{"-"}) }, ""},
		{[]string{"-C"}, func(o *Options) bool { return o.ColorMode == ColorAlways }, ""},
		{[]string{"-C", "-M"}, func(o *Options) bool { return o.ColorMode == ColorNever }, ""},
		{[]string{"--color=never"}, func(o *Options) bool { return o.ColorMode == ColorNever }, ""},
		{[]string{"--color", "always"}, func(o *Options) bool { return o.ColorMode == ColorAlways }, ""},
		{[]string{"--color=blue"}, nil, "--color takes auto"},
		{[]string{"--raw-output=1"}, nil, "does not take =VALUE"},
		{[]string{"-x"}, nil, "unknown flag -x"},
		{[]string{"--view", "a.ndjson", "b.ndjson"}, func(o *Options) bool { return o.View && reflect.DeepEqual(o.Files, []string{"a.ndjson", "b.ndjson"}) }, ""},
		{[]string{"a.ndjson", "--view"}, func(o *Options) bool {
			return o.View && o.Program == "" && reflect.DeepEqual(o.Files, []string{"a.ndjson"})
		}, ""},
		{[]string{"-h"}, func(o *Options) bool { return o.Help }, ""},
		{[]string{"-seS", "--seq"}, func(o *Options) bool { return o.Slurp && o.ExitStatus && o.SortKeys && o.Seq }, ""},
	}
	for _, tt := range tests {
		o, err := ParseArgs(tt.args)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) || exitCode(err) != ExitUsage {
				t.Errorf("ParseArgs(%q): error %v, want %q (exit 2)", tt.args, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseArgs(%q): %v", tt.args, err)
			continue
		}
		if !tt.check(o) {
			t.Errorf("ParseArgs(%q) = %+v", tt.args, o)
		}
	}
}

// Every flag of the table parses, so the table cannot document a flag
// the parser does not know.
func TestFlagTableParses(t *testing.T) {
	for _, f := range Flags {
		args := []string{"--" + f.Long}
		switch f.Args {
		case "N":
			args = append(args, "2")
		case "WHEN":
			args = append(args, "auto")
		case "NAME JSON":
			args = append(args, "x", "1")
		case "":
		default:
			for range strings.Fields(f.Args) {
				args = append(args, "v")
			}
		}
		if _, err := ParseArgs(args); err != nil {
			t.Errorf("--%s: %v", f.Long, err)
		}
		if f.Short != "" {
			if d := lookupShort(f.Short[0]); d == nil || d.Long != f.Long {
				t.Errorf("-%s does not map to --%s", f.Short, f.Long)
			}
		}
	}
}

func FuzzParseArgs(f *testing.F) {
	f.Add("-nr\x00--arg\x00a\x00b\x00.")
	f.Add("--args\x00.\x00x\x00--jsonargs\x001")
	f.Fuzz(func(t *testing.T, joined string) {
		o, err := ParseArgs(strings.Split(joined, "\x00"))
		if err == nil && o == nil {
			t.Fatal("no options and no error")
		}
		if err != nil && exitCode(err) != ExitUsage {
			t.Fatalf("error %v with exit %d", err, exitCode(err))
		}
	})
}
