package roff

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestInline(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain - text", `plain \- text`},
		{"**bold** and `code`", `\fBbold\fR and \fBcode\fR`},
		{"**git diff:*** rest", `\fBgit diff:*\fR rest`},
		{"**Bash(**_pattern_**)**", `\fBBash(\fR\fIpattern\fR\fB)\fR`},
		{"snake_case_name stays", `snake_case_name stays`},
		{`a \*.sh star`, `a *.sh star`},
		{"back\\slash 'q'", `back\eslash \(aqq\(aq`},
		{"unclosed **bold", `unclosed **bold`},
	}
	for _, tt := range tests {
		if got := Inline(tt.in); got != tt.want {
			t.Errorf("Inline(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestPageAndText(t *testing.T) {
	p := NewPage("demo", "1", "src", "the manual")
	p.Section("name")
	p.Roff(`demo \- a demo`)
	p.Section("options")
	p.Item(Bold("-x")+", "+Bold("--extra")+"="+Italic("N"), "Do something extra, N times, which takes a long explanation that has to wrap onto a second line.")
	p.Item(Bold("-q"), "Quiet.")
	p.Para(".leading dot and 'quote")
	p.Code("echo '{\"a\":1}' | demo", "")
	src := p.String()
	for _, want := range []string{".TH DEMO 1 \"\" src \"the manual\"\n", ".SH NAME\n", `\fB\-x\fR, \fB\-\-extra\fR=\fIN\fR`, "\\&.leading dot and \\(aqquote\n"} {
		if !strings.Contains(src, want) {
			t.Errorf("roff lacks %q:\n%s", want, src)
		}
	}
	got := Text(src, 60)
	want := `DEMO(1)                  the manual                  DEMO(1)

NAME
       demo - a demo

OPTIONS
       -x, --extra=N
              Do something extra, N times, which takes a
              long explanation that has to wrap onto a
              second line.

       -q     Quiet.

       .leading dot and 'quote

           echo '{"a":1}' | demo
`
	if got != want {
		t.Errorf("Text:\n%s\nwant:\n%s", got, want)
	}
}

func TestFromMarkdown(t *testing.T) {
	src := "% demo(5) src | Formats\n\n# NAME\n\ndemo - a format\n\n# KEYS\n\n**seq**\n:   the sequence\n    number.\n\n1. first\n2. second\n\n    code line\n\nText with **bold**.\n"
	p, err := FromMarkdown(src)
	if err != nil {
		t.Fatal(err)
	}
	got := Text(p.String(), 80)
	for _, want := range []string{"DEMO(5)", "\nKEYS\n", "       seq    the sequence number.\n", "       1.  first\n", "           code line\n", "Text with bold."} {
		if !strings.Contains(got, want) {
			t.Errorf("text lacks %q:\n%s", want, got)
		}
	}
	if _, err := FromMarkdown("no title\n"); err == nil {
		t.Error("a page without a title line converted")
	}
}

// FuzzText: any input renders without panicking, and no roff font escape
// survives in the output of text this package escaped.
func FuzzText(f *testing.F) {
	f.Add(".TH A 1\n.SH X\n.TP\n\\fBx\\fR\nbody\n.RS 4\n.nf\ncode\n.fi\n.RE\n")
	f.Add("**a** `b` _c_ \\* \\")
	f.Fuzz(func(t *testing.T, s string) {
		Text(s, 80)
		if p, err := FromMarkdown("% x(1) s | m\n" + s); err == nil {
			Text(p.String(), 80)
		}
		// Text without markup comes back word for word.
		if !strings.ContainsAny(s, "\\*`_") && utf8.ValidString(s) {
			p := NewPage("x", "1", "s", "m")
			p.ParaMarkup(s)
			out := Text(p.String(), 80)
			out = out[strings.IndexByte(out, '\n'):]
			if got, want := strings.Join(strings.Fields(out), " "), strings.Join(strings.Fields(s), " "); got != want {
				t.Errorf("Text(Inline(%q)) = %q", s, got)
			}
		}
	})
}
