package view

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/fatih/color"
)

// styles are the colours of the view. Each color.Color is switched on or
// off explicitly, so fatih/color's global NoColor (which looks at the
// process's stdout, our data pipe) never decides.
type styles struct {
	dim, bold, red, green, yellow, cyan, magenta *color.Color
}

func newStyles(on bool) styles {
	mk := func(a ...color.Attribute) *color.Color {
		c := color.New(a...)
		if on {
			c.EnableColor()
		} else {
			c.DisableColor()
		}
		return c
	}
	return styles{
		dim:     mk(color.Faint),
		bold:    mk(color.Bold),
		red:     mk(color.FgRed),
		green:   mk(color.FgGreen),
		yellow:  mk(color.FgYellow),
		cyan:    mk(color.FgCyan),
		magenta: mk(color.FgMagenta),
	}
}

// fit cuts s to at most n runes, marking a cut with an ellipsis.
func fit(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n == 1 {
		return "…"
	}
	i, count := 0, 0
	for j := range s {
		if count == n-1 {
			i = j
			break
		}
		count++
	}
	return s[:i] + "…"
}

// oneLine makes s printable on one line: tabs become two spaces and other
// control characters a space, so that a result never moves the cursor.
func oneLine(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) }) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\t':
			b.WriteString("  ")
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// clean removes control characters but newlines and tabs from text the
// agent wrote, so that model output cannot drive the person's terminal.
func clean(s string) string {
	if !strings.ContainsFunc(s, isControl) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if isControl(r) {
			return -1
		}
		return r
	}, s)
}

func isControl(r rune) bool {
	return (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r < 0xa0)
}

// firstLine returns the first non-empty line of s and whether s holds more.
func firstLine(s string) (string, bool) {
	s = strings.TrimLeft(s, "\n")
	i := strings.IndexByte(s, '\n')
	if i < 0 {
		return s, false
	}
	return strings.TrimRight(s[:i], "\r"), strings.TrimSpace(s[i+1:]) != ""
}

// lineCount counts the lines of s; a final newline does not start one.
func lineCount(s string) int {
	if s == "" {
		return 0
	}
	n := strings.Count(s, "\n")
	if !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

func byteSize(n int) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1000*1000:
		return fmt.Sprintf("%.1f KB", float64(n)/1000)
	default:
		return fmt.Sprintf("%.1f MB", float64(n)/1000/1000)
	}
}

// sizeNote is the "(3 lines, 1.2 KB)" of an abbreviated text.
func sizeNote(s string) string {
	n := lineCount(s)
	if n <= 1 {
		return byteSize(len(s))
	}
	return fmt.Sprintf("%d lines, %s", n, byteSize(len(s)))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

func duration(ms float64) string {
	switch {
	case ms < 1000:
		return fmt.Sprintf("%dms", int64(ms))
	case ms < 60*1000:
		return fmt.Sprintf("%.1fs", ms/1000)
	default:
		s := int64(ms / 1000)
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	}
}

func cost(usd float64) string {
	switch {
	case usd == 0:
		return "$0"
	case usd < 1:
		return fmt.Sprintf("$%.4f", usd)
	default:
		return fmt.Sprintf("$%.2f", usd)
	}
}
