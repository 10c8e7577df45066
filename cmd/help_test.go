package cmd

import (
	"strings"
	"testing"
	"unicode"

	"github.com/agentjq/agentjq/filter"
	"github.com/agentjq/agentjq/iostreams"
)

// TestHelpEndsWithExamples: every command's --help ends with two or three
// examples, and each example's agentjq command lines parse.
func TestHelpEndsWithExamples(t *testing.T) {
	t.Parallel()
	for _, path := range [][]string{
		{"spawn"}, {"record"}, {"replay"}, {"approve"}, {"approve", "answer"}, {"approve", "test"},
		{"approve", "explain"}, {"man"}, {"completion"}, {"version"},
	} {
		name := strings.Join(path, " ")
		ios, _, out, errOut := iostreams.Test()
		if code := Main(append(path, "--help"), ios); code != 0 {
			t.Errorf("%s --help: exit %d: %s", name, code, errOut)
			continue
		}
		text := strings.TrimRight(out.String(), "\n")
		i := strings.LastIndex(text, "\nExamples:\n")
		if i < 0 {
			t.Errorf("%s --help has no Examples:\n%s", name, text)
			continue
		}
		examples := strings.Split(text[i+len("\nExamples:\n"):], "\n")
		if len(examples) < 2 || len(examples) > 3 {
			t.Errorf("%s --help ends with %d example lines, want 2 or 3: %q", name, len(examples), examples)
		}
		for _, ex := range examples {
			if !strings.HasPrefix(ex, "  ") || !strings.Contains(ex, "agentjq ") {
				t.Errorf("%s --help: %q is not an example command", name, ex)
				continue
			}
			checkExample(t, name, strings.TrimSpace(ex))
		}
	}
}

// TestFilterExamplesParse checks filter's own examples (its help is
// filter.WriteHelp, not kong's).
func TestFilterExamplesParse(t *testing.T) {
	t.Parallel()
	for _, ex := range filter.Examples {
		checkExample(t, "filter", ex.Command)
	}
	ios, _, out, _ := iostreams.Test()
	if code := Main([]string{"filter", "--help"}, ios); code != 0 {
		t.Fatalf("filter --help: exit %d", code)
	}
	text := out.String()
	i := strings.LastIndex(text, "\nExamples:\n")
	if i < 0 || strings.Contains(text[i:], "Exit status") {
		t.Errorf("filter --help does not end with its examples")
	}
}

// checkExample parses every agentjq invocation in a shell command line
// with the real parser (nothing runs), so an example cannot name a flag
// that does not exist.
func checkExample(t *testing.T, name, line string) {
	t.Helper()
	n := 0
	for _, args := range agentjqInvocations(line) {
		n++
		if len(args) > 0 && args[0] == "filter" {
			if _, err := filter.ParseArgs(args[1:]); err != nil {
				t.Errorf("%s example %q: filter: %v", name, line, err)
			}
			continue
		}
		var cli CLI
		ios, _, _, _ := iostreams.Test()
		p, err := newParser(&cli, ios)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Parse(args); err != nil {
			t.Errorf("%s example %q: %v", name, line, err)
		}
	}
	if n == 0 {
		t.Errorf("%s example %q runs no agentjq", name, line)
	}
}

// agentjqInvocations splits a shell line into words (quotes honoured) and
// returns the arguments of each simple command that starts with agentjq,
// also inside quotes ('agentjq approve ...' as an --approver).
func agentjqInvocations(line string) [][]string {
	var out [][]string
	var words []string
	flush := func() {
		if len(words) > 0 && words[0] == "agentjq" {
			out = append(out, words[1:])
		}
		for _, w := range words {
			if strings.HasPrefix(w, "agentjq ") {
				out = append(out, agentjqInvocations(w)...)
			}
		}
		words = nil
	}
	var cur strings.Builder
	inWord := false
	end := func() {
		if inWord {
			words = append(words, cur.String())
			cur.Reset()
			inWord = false
		}
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				j = len(line) - i - 1
			}
			cur.WriteString(line[i+1 : i+1+j])
			inWord = true
			i += j + 1
		case c == '"':
			i++
			for i < len(line) && line[i] != '"' {
				if line[i] == '\\' && i+1 < len(line) {
					i++
				}
				cur.WriteByte(line[i])
				i++
			}
			inWord = true
		case c == '\\' && i+1 < len(line):
			i++
			cur.WriteByte(line[i])
			inWord = true
		case c == '|' || c == ';' || c == '(' || c == ')' || c == '&':
			end()
			flush()
		case (c == '<' || c == '>') && i+1 < len(line) && line[i+1] == '(':
			end()
			flush() // process substitution: the '(' starts a command
		case c == '<' || c == '>':
			end()
			flush()
			// skip the redirection's target
			for i+1 < len(line) && (line[i+1] == ' ' || line[i+1] == '>' || line[i+1] == '(') {
				i++
			}
			for i+1 < len(line) && !unicode.IsSpace(rune(line[i+1])) {
				i++
			}
		case c == ' ' || c == '\t':
			end()
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	end()
	flush()
	return out
}
