// Package man holds agentjq's manual pages, generated into this directory
// by `make man` (internal/tools/genman) and embedded in the binary for
// `agentjq man`. Never edit the pages by hand: a test fails when they
// differ from what the code generates.
package man

import (
	"embed"
	"sort"
	"strings"
)

//go:embed agentjq*
var files embed.FS

// Page returns a page by file name (agentjq-spawn.1).
func Page(file string) ([]byte, bool) {
	b, err := files.ReadFile(file)
	return b, err == nil
}

// Files lists the embedded page file names, sorted.
func Files() []string {
	ents, _ := files.ReadDir(".")
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out
}

// Aliases maps each subcommand without a page of its own to the page that
// documents it: serve, attach and call are the daemon's, agentjq(1) has
// the rest.
var Aliases = map[string]string{
	"serve":      "agentjq-daemon.7",
	"attach":     "agentjq-daemon.7",
	"call":       "agentjq-daemon.7",
	"man":        "agentjq.1",
	"completion": "agentjq.1",
	"version":    "agentjq.1",
}

// Names maps each short name a person types (spawn, policy, protocol,
// agentjq, and the Aliases) to its page file, for `agentjq man NAME` and
// completion.
func Names() map[string]string {
	m := map[string]string{}
	for a, f := range Aliases {
		m[a] = f
	}
	for _, f := range Files() {
		base := f[:strings.LastIndexByte(f, '.')]
		m[base] = f
		m[f] = f
		if short, ok := strings.CutPrefix(base, "agentjq-"); ok {
			m[short] = f
		}
	}
	return m
}

// ShortNames lists the names completion offers: agentjq and the part of
// each page name after "agentjq-".
func ShortNames() []string {
	var out []string
	for _, f := range Files() {
		base := f[:strings.LastIndexByte(f, '.')]
		if short, ok := strings.CutPrefix(base, "agentjq-"); ok {
			out = append(out, short)
		} else {
			out = append(out, base)
		}
	}
	sort.Strings(out)
	return out
}

// Resolve finds the page file for name: a short name (spawn), a page name
// with or without its section (agentjq-spawn, agentjq-spawn.1,
// agentjq-spawn(1)), or "" for agentjq(1).
func Resolve(name string) (string, bool) {
	name = strings.TrimSpace(name)
	if name == "" {
		name = "agentjq"
	}
	if i := strings.IndexByte(name, '('); i > 0 && strings.HasSuffix(name, ")") {
		name = name[:i] + "." + name[i+1:len(name)-1]
	}
	f, ok := Names()[name]
	return f, ok
}
