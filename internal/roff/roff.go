// Package roff writes manual pages in the man(7) macro language, converts
// the small markdown dialect some pages are written in (recording.Manual),
// and renders such pages back to plain text for a reader without man(1).
//
// Only a fixed subset of man(7) is produced (TH, SH, SS, PP, TP, RS/RE,
// nf/fi, and the \fB \fI \fR font escapes), so Text can render every page
// this package writes without a real formatter.
package roff

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Page builds one manual page.
type Page struct {
	b strings.Builder
}

// NewPage starts a page: name is upper-cased in the title as man(7) pages
// do; the date is left empty so regenerating the page never changes it.
func NewPage(name, section, source, manual string) *Page {
	p := &Page{}
	fmt.Fprintf(&p.b, ".TH %s %s \"\" %s %s\n", quoteArg(strings.ToUpper(name)), section, quoteArg(source), quoteArg(manual))
	return p
}

// Bytes returns the page.
func (p *Page) Bytes() []byte { return []byte(p.b.String()) }

// String returns the page.
func (p *Page) String() string { return p.b.String() }

// Section starts a section (.SH); the title is upper-cased.
func (p *Page) Section(title string) {
	fmt.Fprintf(&p.b, ".SH %s\n", quoteArg(strings.ToUpper(title)))
}

// Subsection starts a subsection (.SS).
func (p *Page) Subsection(title string) {
	fmt.Fprintf(&p.b, ".SS %s\n", quoteArg(title))
}

// Para writes a paragraph of plain text (escaped; no markup).
func (p *Page) Para(text string) {
	p.b.WriteString(".PP\n")
	p.lines(Escape(text))
}

// ParaMarkup writes a paragraph of markdown-inline text (**bold**, `code`, _italic_).
func (p *Page) ParaMarkup(text string) {
	p.b.WriteString(".PP\n")
	p.lines(Inline(text))
}

// Item writes a tagged paragraph (.TP): tag is roff (use Bold, Escape),
// body is plain text.
func (p *Page) Item(tag, body string) {
	p.b.WriteString(".TP\n")
	p.lines(tag)
	p.lines(Escape(body))
}

// ItemRoff writes a tagged paragraph whose body is already roff.
func (p *Page) ItemRoff(tag, body string) {
	p.b.WriteString(".TP\n")
	p.lines(tag)
	p.lines(body)
}

// Code writes lines verbatim (no filling), indented.
func (p *Page) Code(lines ...string) {
	p.b.WriteString(".PP\n.RS 4\n.nf\n")
	for _, l := range lines {
		p.lines(Escape(l))
	}
	p.b.WriteString(".fi\n.RE\n")
}

// Roff appends raw roff text.
func (p *Page) Roff(s string) {
	p.b.WriteString(s)
	if !strings.HasSuffix(s, "\n") {
		p.b.WriteByte('\n')
	}
}

// lines writes s as text lines, protecting lines that would read as
// requests and dropping empty ones (a blank line in roff is a break).
func (p *Page) lines(s string) {
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if l[0] == '.' || l[0] == '\'' {
			p.b.WriteString(`\&`)
		}
		p.b.WriteString(l)
		p.b.WriteByte('\n')
	}
}

// Escape makes plain text safe as roff text: backslashes, hyphens (so
// options copy and paste as ASCII minus signs) and quotes that fonts
// would curl.
func Escape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '\\':
			b.WriteString(`\e`)
		case '-':
			b.WriteString(`\-`)
		case '\'':
			b.WriteString(`\(aq`)
		case '`':
			b.WriteString(`\(ga`)
		case '~':
			b.WriteString(`\(ti`)
		case '^':
			b.WriteString(`\(ha`)
		default:
			if r >= utf8.RuneSelf {
				// groff reads its input as Latin-1: name the character.
				fmt.Fprintf(&b, `\[u%04X]`, r)
				continue
			}
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Bold returns plain text s in bold.
func Bold(s string) string { return `\fB` + Escape(s) + `\fR` }

// Italic returns plain text s in italics.
func Italic(s string) string { return `\fI` + Escape(s) + `\fR` }

// Inline converts markdown inline markup to roff: **bold**, `code`
// (bold), _italic_ (not inside a word), \* for a literal star;
// everything else is escaped.
func Inline(s string) string {
	var b strings.Builder
	var prev byte = ' '
	text := func(t string) {
		b.WriteString(Escape(strings.ReplaceAll(t, `\*`, "*")))
		if t != "" {
			prev = t[len(t)-1]
		}
	}
	for len(s) > 0 {
		switch {
		case strings.HasPrefix(s, `\*`):
			text(s[:2])
			s = s[2:]
			continue
		case strings.HasPrefix(s, "**"):
			if end := closing(s[2:]); end > 0 {
				b.WriteString(`\fB`)
				text(s[2 : 2+end])
				b.WriteString(`\fR`)
				s = s[4+end:]
				continue
			}
		case s[0] == '`':
			if end := strings.IndexByte(s[1:], '`'); end > 0 {
				b.WriteString(Bold(s[1 : 1+end]))
				prev = '`'
				s = s[2+end:]
				continue
			}
		case s[0] == '_' && !isWordByte(prev):
			if end := strings.IndexByte(s[1:], '_'); end > 0 && !strings.ContainsAny(s[1:1+end], " \n") {
				b.WriteString(`\fI`)
				text(s[1 : 1+end])
				b.WriteString(`\fR`)
				s = s[2+end:]
				continue
			}
		}
		i := strings.IndexAny(s[1:], "*`_\\")
		if i < 0 {
			text(s)
			break
		}
		text(s[:1+i])
		s = s[1+i:]
	}
	return b.String()
}

// closing finds the "**" that closes a bold span in s; a run of stars
// closes at its last two, so **git:*** is bold "git:*".
func closing(s string) int {
	for i := 0; i+1 < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && s[i+1] == '*' {
			i++
			continue
		}
		if s[i] == '*' && s[i+1] == '*' && i > 0 {
			for i+2 < len(s) && s[i+2] == '*' {
				i++
			}
			return i
		}
	}
	return -1
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// quoteArg quotes a macro argument when it has spaces.
func quoteArg(s string) string {
	s = Escape(s)
	if strings.ContainsAny(s, " \t") || s == "" {
		return `"` + strings.ReplaceAll(s, `"`, `\(dq`) + `"`
	}
	return s
}
