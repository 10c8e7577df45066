package filter

import (
	"errors"
	"fmt"
	"strings"

	"github.com/itchyny/gojq"

	"github.com/agentjq/agentjq/filter/agentlib"
	"github.com/agentjq/agentjq/internal/suggest"
)

// Exit statuses, as jq's.
const (
	ExitOK       = 0
	ExitFalse    = 1 // -e: the last value was false or null
	ExitUsage    = 2
	ExitCompile  = 3
	ExitNoOutput = 4 // -e: no value at all
	ExitRuntime  = 5 // a runtime error or a bad input line
)

// ExitTable documents the exit statuses of `agentjq filter`.
var ExitTable = []struct {
	Code    int
	Meaning string
}{
	{ExitOK, "success"},
	{ExitFalse, "with -e: the last value was false or null"},
	{ExitUsage, "usage error (bad flag, missing file)"},
	{ExitCompile, "the program does not compile"},
	{ExitNoOutput, "with -e: the program wrote no value"},
	{ExitRuntime, "a runtime error or a bad input line (each reported on stderr; the rest was processed)"},
}

// Error is a filter failure with its exit status. A Reported error was
// already written to stderr line by line; the caller prints nothing more.
type Error struct {
	Code     int
	Err      error
	Reported bool
}

func (e *Error) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

// ExitCode returns the exit status.
func (e *Error) ExitCode() int { return e.Code }

func (e *Error) Unwrap() error { return e.Err }

// compileError renders a parse or compile error with the program and a
// caret under the fault, as:
//
//	compile error: unexpected token ")"
//	    .a | )
//	         ^
func compileError(program, name string, err error) error {
	var b strings.Builder
	b.WriteString("compile error: ")
	b.WriteString(err.Error())
	b.WriteString(didYouMean(err.Error()))
	offset := -1
	var pe *gojq.ParseError
	if errors.As(err, &pe) {
		offset = pe.Offset - len(pe.Token)
		if pe.Token == "" {
			offset = len(program)
		}
	} else {
		offset = locateCompileError(program, err.Error())
	}
	if offset >= 0 {
		b.WriteByte('\n')
		b.WriteString(caret(program, name, offset))
	}
	return &Error{Code: ExitCompile, Err: errors.New(strings.TrimRight(b.String(), "\n"))}
}

// didYouMean names the agentlib helper nearest to the function a
// "function not defined: foo/1" error is about, if one is near.
func didYouMean(msg string) string {
	_, what, ok := strings.Cut(msg, "function not defined: ")
	if !ok {
		return ""
	}
	if i := strings.LastIndexByte(what, '/'); i > 0 {
		what = what[:i]
	}
	var helpers []string
	for _, d := range agentlib.Docs {
		name, _, _ := strings.Cut(d.Name, "/")
		helpers = append(helpers, name)
	}
	if s := suggest.Closest(what, helpers); s != "" {
		return " (did you mean " + s + "? agentjq filter --help lists the agent definitions)"
	}
	return ""
}

// locateCompileError finds the name a compile error is about ("function
// not defined: foo/1", "variable not defined: $x") in the program.
func locateCompileError(program, msg string) int {
	_, what, ok := strings.Cut(msg, "not defined: ")
	if !ok {
		return -1
	}
	if i := strings.LastIndexByte(what, '/'); i > 0 {
		what = what[:i]
	}
	for from := 0; ; {
		i := strings.Index(program[from:], what)
		if i < 0 {
			return -1
		}
		i += from
		end := i + len(what)
		before := i == 0 || !isIdent(program[i-1])
		after := end == len(program) || !isIdent(program[end])
		if before && after {
			return i
		}
		from = i + 1
	}
}

func isIdent(c byte) bool {
	return c == '_' || c == '$' || c == ':' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// caret shows the line of program holding offset with a caret under it.
func caret(program, name string, offset int) string {
	offset = max(0, min(offset, len(program)))
	start := strings.LastIndexByte(program[:offset], '\n') + 1
	end := strings.IndexByte(program[offset:], '\n')
	if end < 0 {
		end = len(program)
	} else {
		end += offset
	}
	line := strings.ReplaceAll(program[start:end], "\t", " ")
	col := len([]rune(program[start:offset]))
	var b strings.Builder
	if name != "" {
		fmt.Fprintf(&b, "    %s:%d\n", name, strings.Count(program[:start], "\n")+1)
	}
	b.WriteString("    ")
	b.WriteString(line)
	b.WriteString("\n    ")
	b.WriteString(strings.Repeat(" ", col))
	b.WriteString("^")
	return b.String()
}
