package roff

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Text renders a page written by this package as plain text, width
// columns wide (80 when width < 40), laid out like man(1) without
// fonts: sections at the margin, text indented 7, tags of .TP items on
// their own line when they do not fit. Requests it does not know are
// skipped; unknown escapes are dropped.
func Text(src string, width int) string {
	if width < 40 {
		width = 80
	}
	r := &textRenderer{width: width, indent: 7, cur: 7}
	for _, line := range strings.Split(src, "\n") {
		r.line(line)
	}
	r.flush()
	return strings.TrimRight(r.out.String(), "\n") + "\n"
}

type textRenderer struct {
	out       strings.Builder
	width     int
	indent    int   // current left margin of body text
	cur       int   // the margin set by the innermost .RS (7 outside)
	rs        []int // saved margins of .RS
	words     []string
	nofill    bool
	tag       string // a .TP tag waiting for its body
	wantTag   bool   // the next text line is a .TP tag
	needSpace bool   // a blank line goes before the next output
	afterHead bool   // a heading was just written: no blank line after it
	tagW      int    // the width of the pending tag's column
}

const tagWidth = 7

func (r *textRenderer) line(l string) {
	if strings.HasPrefix(l, ".") || strings.HasPrefix(l, "'") {
		r.request(l)
		return
	}
	text := plain(l)
	if r.wantTag {
		r.wantTag = false
		r.tag = text
		return
	}
	if r.nofill {
		r.space()
		r.out.WriteString(strings.Repeat(" ", r.indent) + text + "\n")
		return
	}
	r.words = append(r.words, strings.Fields(text)...)
}

func (r *textRenderer) request(l string) {
	name, args := l[1:], ""
	if i := strings.IndexAny(name, " \t"); i >= 0 {
		name, args = name[:i], strings.TrimSpace(name[i+1:])
	}
	switch name {
	case "TH":
		a := macroArgs(args)
		if len(a) >= 2 {
			head := a[0] + "(" + a[1] + ")"
			mid := ""
			if len(a) >= 5 {
				mid = a[4]
			}
			pad := r.width - 2*len(head) - len(mid)
			if pad < 2 {
				pad = 2
			}
			left := pad / 2
			r.out.WriteString(head + strings.Repeat(" ", left) + mid + strings.Repeat(" ", pad-left) + head + "\n")
			r.needSpace = true
		}
	case "SH":
		r.flush()
		r.rs = nil
		r.indent, r.cur = 7, 7
		r.blank()
		r.out.WriteString(strings.Join(macroArgs(args), " ") + "\n")
		r.needSpace, r.afterHead = false, true
	case "SS":
		r.flush()
		r.rs = nil
		r.indent, r.cur = 7, 7
		r.blank()
		r.out.WriteString("   " + strings.Join(macroArgs(args), " ") + "\n")
		r.needSpace, r.afterHead = false, true
	case "PP", "P", "LP":
		r.flush()
		r.indent = r.cur
		r.needSpace = true
	case "TP":
		r.flush()
		r.tagW = tagWidth
		r.indent = r.cur
		r.needSpace = true
		r.wantTag = true
	case "IP":
		r.flush()
		r.indent = r.cur
		r.needSpace = true
		a := macroArgs(args)
		if len(a) > 0 {
			r.tag = a[0]
		}
		if len(a) > 1 {
			if n, err := strconv.Atoi(a[1]); err == nil && n > 0 {
				r.tagW = n
			}
		}
	case "RS":
		r.flush()
		n := 7
		if args != "" {
			if v, err := strconv.Atoi(args); err == nil {
				n = v
			}
		}
		r.rs = append(r.rs, r.cur)
		r.cur += n
		r.indent = r.cur
	case "RE":
		r.flush()
		if len(r.rs) > 0 {
			r.cur = r.rs[len(r.rs)-1]
			r.rs = r.rs[:len(r.rs)-1]
		}
		r.indent = r.cur
	case "nf":
		r.flush()
		r.nofill = true
	case "fi":
		r.nofill = false
	case "br":
		r.flush()
	case "sp":
		r.flush()
		if r.nofill {
			r.out.WriteString("\n")
		} else {
			r.needSpace = true
		}
	case "B", "I":
		r.line(strings.Join(macroArgs(args), " "))
	}
}

func (r *textRenderer) blank() {
	if r.out.Len() > 0 {
		r.out.WriteString("\n")
	}
}

func (r *textRenderer) space() {
	if r.afterHead {
		r.needSpace, r.afterHead = false, false
		return
	}
	if r.needSpace {
		r.blank()
		r.needSpace = false
	}
}

// flush fills the pending words (and a pending tag) into lines.
func (r *textRenderer) flush() {
	if r.tag == "" && len(r.words) == 0 {
		return
	}
	r.space()
	margin := r.indent
	if r.tag != "" {
		tw := r.tagW
		if tw <= 0 {
			tw = tagWidth
		}
		margin = r.indent + tw
		pad := strings.Repeat(" ", r.indent)
		if utf8.RuneCountInString(r.tag)+1 <= tw && len(r.words) > 0 {
			r.out.WriteString(pad + r.tag + strings.Repeat(" ", tw-utf8.RuneCountInString(r.tag)))
			r.fill(margin, true)
		} else {
			r.out.WriteString(pad + r.tag + "\n")
			r.fill(margin, false)
		}
		r.tag, r.tagW = "", tagWidth
		r.words = nil
		return
	}
	r.fill(margin, false)
	r.words = nil
}

// fill writes r.words at margin; started: the first line's margin is
// already written.
func (r *textRenderer) fill(margin int, started bool) {
	col := 0
	if started {
		col = margin
	}
	for _, w := range r.words {
		n := utf8.RuneCountInString(w)
		switch {
		case col == 0:
			r.out.WriteString(strings.Repeat(" ", margin) + w)
			col = margin + n
		case col == margin:
			r.out.WriteString(w)
			col += n
		case col+1+n > r.width:
			r.out.WriteString("\n" + strings.Repeat(" ", margin) + w)
			col = margin + n
		default:
			r.out.WriteString(" " + w)
			col += 1 + n
		}
	}
	if col > 0 {
		r.out.WriteString("\n")
	}
}

// macroArgs splits macro arguments, honouring double quotes.
func macroArgs(s string) []string {
	var out []string
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		if s[0] == '"' {
			end := strings.IndexByte(s[1:], '"')
			if end < 0 {
				out = append(out, plain(s[1:]))
				break
			}
			out = append(out, plain(s[1:1+end]))
			s = s[2+end:]
			continue
		}
		end := strings.IndexAny(s, " \t")
		if end < 0 {
			out = append(out, plain(s))
			break
		}
		out = append(out, plain(s[:end]))
		s = s[end:]
	}
	return out
}

var specialChars = map[string]string{
	"aq": "'", "dq": `"`, "ga": "`", "ti": "~", "ha": "^", "em": "—", "en": "–",
	"bu": "•", "lq": "“", "rq": "”", "oq": "‘", "cq": "’", "mi": "-", "hy": "-",
}

// plain removes roff escapes from a text line.
func plain(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 'e', '\\':
			b.WriteByte('\\')
		case '-':
			b.WriteByte('-')
		case '&', ':', '/', ',', '%':
		case ' ', '~':
			b.WriteByte(' ')
		case 'f':
			if i+1 < len(s) {
				if s[i+1] == '(' && i+3 < len(s) {
					i += 3
				} else if s[i+1] == '[' {
					if end := strings.IndexByte(s[i+1:], ']'); end >= 0 {
						i += 1 + end
					}
				} else {
					i++
				}
			}
		case '(':
			if i+2 < len(s) {
				name := s[i+1 : i+3]
				b.WriteString(specialChars[name])
				i += 2
			}
		case '[':
			if end := strings.IndexByte(s[i:], ']'); end >= 0 {
				b.WriteString(specialChars[s[i+1:i+end]])
				i += end
			}
		case '"': // comment: the rest of the line
			return b.String()
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}
