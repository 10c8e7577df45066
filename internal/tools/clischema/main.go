// Command clischema lists the control subtypes, and their request fields,
// that an installed claude CLI knows, read from the schema text embedded in
// its binary, against what internal/protocol/tables.go documents; with -base, what
// changed since another CLI binary. It is run by make cli-schema.
//
// What it can see: the CLI validates its control messages with zod schemas
// whose minified source stays readable inside the native binary, as
// {subtype:L("can_use_tool"),tool_name:r(),input:...}: an object literal
// whose first key is subtype with a literal value. Each such object is one
// request (or response) payload schema; its other top-level keys are the
// fields, a key whose value calls .optional() or .nullish() is optional.
//
// What it cannot see: which side sends a subtype (agent to client or
// client to agent), the types of fields, anything behind a schema not
// written in that form (a subtype handled without a schema, or a key
// spread in from another object), and whether the CLI ever sends a
// subtype in a headless stream-json session. The names are facts read from
// the binary; the rest is for a maintainer to read in the CLI's output.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/agentjq/agentjq/internal/protocol"
)

func main() {
	base := flag.String("base", "", "another claude binary (the previous version): also list what changed since it")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: clischema [-base OLD-CLAUDE] CLAUDE")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	cur, err := scanFile(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "clischema:", err)
		os.Exit(1)
	}
	if len(cur) == 0 {
		fmt.Fprintf(os.Stderr, "clischema: no {subtype:...} schema text in %s: the CLI's packaging changed, and this tool with it\n", flag.Arg(0))
		os.Exit(1)
	}
	var old map[string]fields
	if *base != "" {
		if old, err = scanFile(*base); err != nil {
			fmt.Fprintln(os.Stderr, "clischema:", err)
			os.Exit(1)
		}
	}
	report(os.Stdout, flag.Arg(0), *base, cur, old)
}

// fields maps a field name to whether it is optional (true when any
// schema of the subtype makes it optional).
type fields map[string]bool

// schemaStart finds an object literal whose first key is subtype with a
// literal value: {subtype:P("can_use_tool"), with any minified name for
// the literal function.
var schemaStart = regexp.MustCompile(`\{subtype:[A-Za-z_$][\w$]*\("([a-z][a-z0-9_]*)"\)`)

// maxSchema bounds one schema's text; a longer one is not read.
const maxSchema = 32 << 10

// scanFile reads the binary in chunks that overlap by maxSchema, so that
// every schema lies whole in some chunk, and returns the union of the
// fields of every schema of each subtype.
func scanFile(path string) (map[string]fields, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]fields{}
	r := bufio.NewReaderSize(f, 1<<20)
	buf := make([]byte, 0, 16<<20+maxSchema)
	for {
		n, err := io.ReadFull(r, buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		eof := err == io.EOF || err == io.ErrUnexpectedEOF
		if err != nil && !eof {
			return nil, err
		}
		// Schemas starting in the last maxSchema bytes wait for the next
		// chunk, unless this is the last.
		limit := len(buf) - maxSchema
		if eof {
			limit = len(buf)
		}
		for _, m := range schemaStart.FindAllSubmatchIndex(buf, -1) {
			if m[0] >= limit {
				break
			}
			name := string(buf[m[2]:m[3]])
			keys, ok := objectKeys(buf[m[1]:min(len(buf), m[1]+maxSchema)])
			if !ok {
				continue
			}
			if out[name] == nil {
				out[name] = fields{}
			}
			for k, opt := range keys {
				out[name][k] = out[name][k] || opt
			}
		}
		if eof {
			return out, nil
		}
		if limit < 0 {
			limit = 0
		}
		buf = append(buf[:0], buf[limit:]...)
	}
}

var keyAt = regexp.MustCompile(`^,\s*(?:([A-Za-z_$][\w$]*)|"([^"\\]+)")\s*:`)

// objectKeys reads the rest of an object literal (after its first key and
// value) up to its closing brace and returns its top-level keys, each with
// whether its value is optional. It fails when the object does not close.
func objectKeys(b []byte) (map[string]bool, bool) {
	keys := map[string]bool{}
	depth := 0
	cur := ""
	for i := 0; i < len(b); i++ {
		switch c := b[i]; c {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			if depth == 0 {
				return keys, c == '}'
			}
			depth--
		case '"', '\'', '`':
			for i++; i < len(b) && b[i] != c; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		case '.':
			if depth == 0 && cur != "" && (bytes.HasPrefix(b[i:], []byte(".optional(")) || bytes.HasPrefix(b[i:], []byte(".nullish("))) {
				keys[cur] = true
			}
		case ',':
			if depth == 0 {
				cur = ""
				if m := keyAt.FindSubmatch(b[i:]); m != nil {
					cur = string(m[1]) + string(m[2])
					keys[cur] = keys[cur] || false
				}
			}
		}
	}
	return nil, false
}

// documented are the subtypes internal/protocol/tables.go names, with the text
// that documents them (fields are looked for in it by name).
func documented() (control map[string]string, message map[string]bool) {
	control = map[string]string{}
	for _, list := range [][]protocol.SubtypeDoc{protocol.AgentRequests, protocol.ClientRequests} {
		for _, d := range list {
			if !strings.HasPrefix(d.Name, "(") {
				control[d.Name] += " " + d.Summary + " " + d.Answer
			}
		}
	}
	message = map[string]bool{}
	for _, t := range protocol.MessageTypes {
		for _, d := range t.Subtypes {
			message[d.Name] = true
		}
	}
	return control, message
}

var word = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)

func report(w io.Writer, bin, base string, cur, old map[string]fields) {
	control, message := documented()
	names := slices.Sorted(maps.Keys(cur))
	fmt.Fprintf(w, "%s: %d subtypes in the CLI's schema text ({subtype:\"...\",...} objects)\n", bin, len(names))

	if old != nil {
		fmt.Fprintf(w, "\nchanged since %s:\n", base)
		changed := false
		for _, n := range names {
			o, had := old[n]
			if !had {
				fmt.Fprintf(w, "  + %-28s %s\n", n, list(cur[n]))
				changed = true
				continue
			}
			var add, gone []string
			for _, k := range slices.Sorted(maps.Keys(cur[n])) {
				if _, ok := o[k]; !ok {
					add = append(add, "+"+k+opt(cur[n][k]))
				}
			}
			for _, k := range slices.Sorted(maps.Keys(o)) {
				if _, ok := cur[n][k]; !ok {
					gone = append(gone, "-"+k)
				}
			}
			if len(add)+len(gone) > 0 {
				fmt.Fprintf(w, "  ~ %-28s %s\n", n, strings.Join(append(add, gone...), " "))
				changed = true
			}
		}
		for _, n := range slices.Sorted(maps.Keys(old)) {
			if _, ok := cur[n]; !ok {
				fmt.Fprintf(w, "  - %s\n", n)
				changed = true
			}
		}
		if !changed {
			fmt.Fprintln(w, "  nothing")
		}
	}

	fmt.Fprintln(w, "\ncontrol subtypes internal/protocol/tables.go documents (fields the CLI knows; * not named in tables.go):")
	for _, n := range slices.Sorted(maps.Keys(control)) {
		f, ok := cur[n]
		if !ok {
			fmt.Fprintf(w, "  %-30s NOT SEEN in the binary\n", n)
			continue
		}
		named := map[string]bool{}
		for _, x := range word.FindAllString(control[n], -1) {
			named[x] = true
		}
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(f)) {
			mark := ""
			if !named[k] {
				mark = "*"
			}
			parts = append(parts, k+opt(f[k])+mark)
		}
		fmt.Fprintf(w, "  %-30s %s\n", n, strings.Join(parts, " "))
	}

	fmt.Fprintln(w, "\nsubtypes internal/protocol/tables.go does not document as control requests (? optional):")
	for _, n := range names {
		if _, ok := control[n]; ok {
			continue
		}
		note := ""
		if message[n] {
			note = "  (documented as a message subtype)"
		}
		fmt.Fprintf(w, "  %-30s %s%s\n", n, list(cur[n]), note)
	}
}

func opt(optional bool) string {
	if optional {
		return "?"
	}
	return ""
}

func list(f fields) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(f)) {
		parts = append(parts, k+opt(f[k]))
	}
	if len(parts) == 0 {
		return "(no fields)"
	}
	return strings.Join(parts, " ")
}
