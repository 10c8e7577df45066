package roff

import (
	"fmt"
	"regexp"
	"strings"
)

var listItem = regexp.MustCompile(`^([0-9]+\.|-) `)

var titleLine = regexp.MustCompile(`^% ([A-Za-z0-9_.-]+)\(([0-9a-z]+)\) ([^|]*?)\s*\|\s*(.*)$`)

// FromMarkdown converts a page written in the pandoc-flavoured markdown
// subset the project uses to man(7):
//
//	% name(section) source | manual     the title line, first
//	# SECTION, ## Subsection
//	paragraphs separated by blank lines
//	    indented code blocks (4 spaces, after a blank line)
//	1. item, - item                     list items
//	**term**                            a definition list item
//	:   definition, continued by lines indented 4 spaces
//
// with **bold**, `code` and _italic_ inline. Anything else is text.
func FromMarkdown(src string) (*Page, error) {
	lines := strings.Split(strings.ReplaceAll(src, "\r\n", "\n"), "\n")
	if len(lines) == 0 {
		return nil, fmt.Errorf("markdown page: empty")
	}
	m := titleLine.FindStringSubmatch(lines[0])
	if m == nil {
		return nil, fmt.Errorf("markdown page: first line %q is not %% name(section) source | manual", lines[0])
	}
	p := NewPage(m[1], m[2], m[3], m[4])
	blank := true // the previous line was blank or a heading
	for i := 1; i < len(lines); {
		l := lines[i]
		switch {
		case strings.TrimSpace(l) == "":
			blank = true
			i++
			continue
		case strings.HasPrefix(l, "## "):
			p.Subsection(strings.TrimSpace(l[3:]))
			i++
			blank = true
			continue
		case strings.HasPrefix(l, "# "):
			p.Section(strings.TrimSpace(l[2:]))
			i++
			blank = true
			continue
		case blank && strings.HasPrefix(l, "    "):
			var code []string
			for i < len(lines) && (strings.HasPrefix(lines[i], "    ") || strings.TrimSpace(lines[i]) == "") {
				code = append(code, strings.TrimPrefix(lines[i], "    "))
				i++
			}
			for len(code) > 0 && strings.TrimSpace(code[len(code)-1]) == "" {
				code = code[:len(code)-1]
			}
			p.b.WriteString(".PP\n.RS 4\n.nf\n")
			for _, c := range code {
				if strings.TrimSpace(c) == "" {
					p.b.WriteString(".sp\n")
					continue
				}
				p.lines(Escape(c))
			}
			p.b.WriteString(".fi\n.RE\n")
		case i+1 < len(lines) && strings.HasPrefix(lines[i+1], ":   "):
			term := Inline(strings.TrimSpace(l))
			def := []string{strings.TrimSpace(lines[i+1][4:])}
			i += 2
			for i < len(lines) && strings.HasPrefix(lines[i], "    ") && strings.TrimSpace(lines[i]) != "" {
				def = append(def, strings.TrimSpace(lines[i]))
				i++
			}
			p.ItemRoff(term, Inline(strings.Join(def, "\n")))
		case listItem.MatchString(l):
			mark := listItem.FindString(l)
			item := []string{strings.TrimSpace(l[len(mark):])}
			i++
			for i < len(lines) && strings.TrimSpace(lines[i]) != "" && !listItem.MatchString(lines[i]) && !strings.HasPrefix(lines[i], "#") {
				item = append(item, strings.TrimSpace(lines[i]))
				i++
			}
			tag := strings.TrimSpace(mark)
			if tag == "-" {
				tag = `\(bu`
			}
			p.b.WriteString(".IP " + tag + " 4\n")
			p.lines(Inline(strings.Join(item, "\n")))
		default:
			var para []string
			for i < len(lines) && strings.TrimSpace(lines[i]) != "" && !strings.HasPrefix(lines[i], "#") && !listItem.MatchString(lines[i]) &&
				!(i+1 < len(lines) && strings.HasPrefix(lines[i+1], ":   ")) {
				para = append(para, strings.TrimSpace(lines[i]))
				i++
			}
			if len(para) == 0 { // a definition term follows at once
				para = append(para, strings.TrimSpace(lines[i]))
				i++
			}
			p.ParaMarkup(strings.Join(para, "\n"))
		}
		blank = false
	}
	return p, nil
}
