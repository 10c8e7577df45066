package filter

import (
	"fmt"
	"strconv"
	"strings"
)

// FlagDoc documents one flag of `agentjq filter`. Flags is the table the
// parser, --help and the man page generator all read.
type FlagDoc struct {
	Short string // one letter, without the dash; "" if none
	Long  string // without the dashes
	Args  string // names of the values the flag takes, e.g. "NAME VALUE"; "" for a switch
	Help  string
}

// Flags is the flag table of `agentjq filter`, in the order --help shows it.
var Flags = []FlagDoc{
	{"c", "compact-output", "", "One line per value (the default: this is a stream)."},
	{"", "indent", "N", "Pretty-print with N spaces (0-7); 0 means compact."},
	{"", "tab", "", "Pretty-print with a tab per level."},
	{"r", "raw-output", "", "Write strings without quotes."},
	{"j", "join-output", "", "Like -r, with no newline after each value."},
	{"a", "ascii-output", "", "Escape every non-ASCII character."},
	{"S", "sort-keys", "", "Sort object keys (gojq always sorts keys of values it builds)."},
	{"s", "slurp", "", "Read the whole stream into one array and run the program once."},
	{"n", "null-input", "", "Run the program once with null; read the stream with input/inputs."},
	{"R", "raw-input", "", "Each line is a string, not JSON (with -s: the whole text)."},
	{"e", "exit-status", "", "Exit 1 if the last value was false or null, 4 if there was none."},
	{"", "arg", "NAME VALUE", "Set $NAME to the string VALUE."},
	{"", "argjson", "NAME JSON", "Set $NAME to the JSON value JSON."},
	{"", "slurpfile", "NAME FILE", "Set $NAME to an array of the JSON values in FILE."},
	{"", "rawfile", "NAME FILE", "Set $NAME to the text of FILE."},
	{"", "args", "", "Remaining positional arguments are strings in $ARGS.positional, not files."},
	{"", "jsonargs", "", "Remaining positional arguments are JSON values in $ARGS.positional."},
	{"f", "from-file", "FILE", "Read the program from FILE; every positional argument is an input."},
	{"L", "library-path", "DIR", "Search DIR for modules named by import and include (repeatable)."},
	{"", "seq", "", "Write an ASCII RS (0x1e) before each value (RFC 7464); ignore RS in input."},
	{"C", "color-output", "", "Colour the JSON, even on a pipe."},
	{"M", "monochrome-output", "", "Never colour the JSON."},
	{"", "color", "WHEN", "Colour the JSON: auto (on a terminal, unless NO_COLOR or TERM=dumb), always or never."},
	{"", "view", "", "Render the stream for a person instead of running a program."},
	{"", "all", "", "With --view: show a transcript's bookkeeping lines too (queue operations, attachments, API request snapshots, cost state)."},
	{"", "project", "", "Read the transcripts Claude Code wrote for the current project (--project=DIR: for DIR): the *.jsonl files of ~/.claude/projects/<DIR escaped> ($CLAUDE_CONFIG_DIR/projects when set), oldest first."},
	{"", "prices", "FILE", "Prices for usage_cost and the usage reports: FILE's models (prices.json's shape, USD per million tokens) over agentjq's table."},
	{"", "lenient", "", "Read a damaged recording as far as it goes: a msg that is not an object as it is, a gzip file cut off up to the cut (a warning); without it both are bad input lines (exit 5)."},
	{"h", "help", "", "Show this help."},
}

// Color choices, spelled like --color's values.
const (
	ColorAuto   = "auto"
	ColorAlways = "always"
	ColorNever  = "never"
)

// Options is a parsed `agentjq filter` command line plus what the caller
// knows about the process (environment, directory, terminal answers).
type Options struct {
	// Program is the jq program; ProgramFile the file it came from (-f).
	Program     string
	ProgramFile string
	// Files are the inputs; none means the reader given to Run.
	Files []string

	// Named are --arg/--argjson/--slurpfile/--rawfile variables in order.
	// Values of --slurpfile and --rawfile are read by Run (they name files).
	Named []NamedArg
	// Positional is $ARGS.positional (--args strings, --jsonargs values).
	Positional []any

	Indent     int  // spaces per level; 0 is compact
	Tab        bool // indent with tabs
	Raw        bool // -r
	Join       bool // -j
	ASCII      bool // -a
	SortKeys   bool // -S
	Slurp      bool // -s
	NullInput  bool // -n
	RawInput   bool // -R
	ExitStatus bool // -e
	Seq        bool // --seq
	// ColorMode is --color's value (-C is always, -M never); Run does not
	// read it: the caller decides, per stream, and sets Color.
	ColorMode string
	Color     bool
	LibDirs   []string
	View      bool
	Help      bool
	// Lenient is --lenient (recording.Lines.Lenient).
	Lenient bool
	// PricesFile is --prices: a price table over agentlib's.
	PricesFile string
	// All is --all (view.Options.All).
	All bool
	// Projects are the --project directories ("" for the current one),
	// whose transcript folders the caller adds to Files.
	Projects []string

	// Environ is $ENV and env (KEY=VALUE pairs).
	Environ []string
	// Dir resolves relative file names; "" is the process's directory.
	Dir string
	// FlushEachInput flushes the output after each input (stdout is a pipe
	// or terminal, not a regular file), so a live stream stays live.
	FlushEachInput bool
	// Workers bounds the goroutines that decode and run in parallel;
	// 0 picks GOMAXPROCS (at most 4), 1 disables parallelism.
	Workers int
	// NoFastPath turns off every fast path; tests compare both ways.
	NoFastPath bool
}

// NamedArg is one named variable from the command line.
type NamedArg struct {
	Name  string
	Kind  string // "arg", "argjson", "slurpfile", "rawfile"
	Value any    // the string or JSON value; the file name for slurpfile/rawfile
}

// ParseArgs parses filter's arguments the way jq does: flags anywhere,
// short flags bundled (-nr), --arg taking two values, --args/--jsonargs
// turning later positionals into $ARGS.positional. Errors are usage errors
// (exit 2).
func ParseArgs(args []string) (*Options, error) {
	o := &Options{ColorMode: ColorAuto}
	positionalMode := "" // "", "args" or "jsonargs"
	havePrograms := false
	onlyPositional := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if onlyPositional || a == "-" || !strings.HasPrefix(a, "-") {
			if err := o.positional(a, &havePrograms, positionalMode); err != nil {
				return nil, err
			}
			continue
		}
		if a == "--" {
			onlyPositional = true
			continue
		}
		// take returns the next n arguments as the flag's values.
		take := func(name string, n int) ([]string, error) {
			if i+n >= len(args) {
				return nil, usagef("--%s takes %d argument%s", name, n, plural(n))
			}
			vals := args[i+1 : i+1+n]
			i += n
			return vals, nil
		}
		if strings.HasPrefix(a, "--") {
			name, inline, hasInline := strings.Cut(a[2:], "=")
			d := lookupLong(name)
			if d == nil {
				return nil, usagef("unknown flag --%s", name)
			}
			var vals []string
			n := len(strings.Fields(d.Args))
			switch {
			case hasInline && n == 1, hasInline && d.Long == "project":
				vals = []string{inline}
			case hasInline:
				return nil, usagef("--%s does not take =VALUE", name)
			case n > 0:
				var err error
				if vals, err = take(name, n); err != nil {
					return nil, err
				}
			}
			if err := o.apply(d.Long, vals, &positionalMode); err != nil {
				return nil, err
			}
			continue
		}
		// A bundle of short flags: -nr, -L DIR, -LDIR, -f FILE.
		for j := 1; j < len(a); j++ {
			d := lookupShort(a[j])
			if d == nil {
				return nil, usagef("unknown flag -%c", a[j])
			}
			var vals []string
			if d.Args != "" {
				if j+1 < len(a) {
					vals = []string{a[j+1:]}
				} else {
					var err error
					if vals, err = take(d.Long, 1); err != nil {
						return nil, usagef("-%s takes an argument (%s)", d.Short, d.Args)
					}
				}
				j = len(a)
			}
			if err := o.apply(d.Long, vals, &positionalMode); err != nil {
				return nil, err
			}
		}
	}
	if o.ProgramFile != "" && havePrograms {
		// -f came after the first positional: that one is an input too.
		o.Files = append([]string{o.Program}, o.Files...)
		o.Program = ""
	}
	if o.View && havePrograms {
		// --view runs no program: every positional is a file.
		o.Files = append([]string{o.Program}, o.Files...)
		o.Program = ""
	}
	if o.Help || o.View {
		return o, nil
	}
	if !havePrograms && o.ProgramFile == "" {
		// jq without a program on a pipe runs `.`; do the same.
		o.Program = "."
	}
	return o, nil
}

func (o *Options) positional(a string, havePrograms *bool, mode string) error {
	if !*havePrograms && o.ProgramFile == "" {
		o.Program = a
		*havePrograms = true
		return nil
	}
	switch mode {
	case "args":
		o.Positional = append(o.Positional, a)
	case "jsonargs":
		v, err := parseJSONArg(a)
		if err != nil {
			return usagef("--jsonargs: invalid JSON %q: %v", a, err)
		}
		o.Positional = append(o.Positional, v)
	default:
		o.Files = append(o.Files, a)
	}
	return nil
}

func (o *Options) apply(long string, vals []string, mode *string) error {
	switch long {
	case "compact-output":
		o.Indent, o.Tab = 0, false
	case "indent":
		n, err := strconv.Atoi(vals[0])
		if err != nil || n < 0 {
			return usagef("--indent takes a number of spaces, not %q", vals[0])
		}
		if n > 7 {
			return usagef("--indent: cannot indent more than 7 spaces")
		}
		o.Indent, o.Tab = n, false
	case "tab":
		o.Tab, o.Indent = true, 1
	case "raw-output":
		o.Raw = true
	case "join-output":
		o.Raw, o.Join = true, true
	case "ascii-output":
		o.ASCII = true
	case "sort-keys":
		o.SortKeys = true
	case "slurp":
		o.Slurp = true
	case "null-input":
		o.NullInput = true
	case "raw-input":
		o.RawInput = true
	case "exit-status":
		o.ExitStatus = true
	case "arg":
		o.Named = append(o.Named, NamedArg{vals[0], "arg", vals[1]})
	case "argjson":
		v, err := parseJSONArg(vals[1])
		if err != nil {
			return usagef("--argjson %s: invalid JSON: %v", vals[0], err)
		}
		o.Named = append(o.Named, NamedArg{vals[0], "argjson", v})
	case "slurpfile", "rawfile":
		o.Named = append(o.Named, NamedArg{vals[0], long, vals[1]})
	case "args", "jsonargs":
		*mode = long
	case "from-file":
		o.ProgramFile = vals[0]
	case "library-path":
		o.LibDirs = append(o.LibDirs, vals[0])
	case "seq":
		o.Seq = true
	case "color-output":
		o.ColorMode = ColorAlways
	case "monochrome-output":
		o.ColorMode = ColorNever
	case "color":
		switch vals[0] {
		case ColorAuto, ColorAlways, ColorNever:
			o.ColorMode = vals[0]
		default:
			return usagef("--color takes auto, always or never, not %q", vals[0])
		}
	case "view":
		o.View = true
	case "lenient":
		o.Lenient = true
	case "all":
		o.All = true
	case "prices":
		o.PricesFile = vals[0]
	case "project":
		dir := ""
		if len(vals) > 0 {
			dir = vals[0]
		}
		o.Projects = append(o.Projects, dir)
	case "help":
		o.Help = true
	default:
		return usagef("unknown flag --%s", long)
	}
	return nil
}

func lookupLong(name string) *FlagDoc {
	for i := range Flags {
		if Flags[i].Long == name {
			return &Flags[i]
		}
	}
	return nil
}

func lookupShort(c byte) *FlagDoc {
	for i := range Flags {
		if Flags[i].Short != "" && Flags[i].Short[0] == c {
			return &Flags[i]
		}
	}
	return nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// parseJSONArg decodes one JSON value from a command-line argument.
func parseJSONArg(s string) (any, error) {
	vs, err := decodeAll([]byte(s))
	if err != nil {
		return nil, err
	}
	if len(vs) != 1 {
		return nil, fmt.Errorf("want one value, got %d", len(vs))
	}
	return vs[0], nil
}

func usagef(format string, a ...any) error {
	return &Error{Code: ExitUsage, Err: fmt.Errorf(format, a...)}
}
