package approve

import (
	"errors"
	"os"
	"path"
	"path/filepath"
	"strings"
	"unicode"
)

// pathPattern is a gitignore-style glob from a Read/Edit/Write rule.
//
//	//abs/path   from the filesystem root
//	~/p          from the home directory
//	/p, ./p, a/b from the session's cwd (anchored: the pattern has a slash)
//	name, *.env  at any depth below the session's cwd (no slash)
//
// `*` and `?` stay within one path segment, `**` spans segments, [..] is a
// class. A pattern that matches a directory matches everything below it.
//
// A deny or ask pattern (fold) also matches a path in another case:
// .ENV is .env on a case-insensitive filesystem (macOS's and Windows'
// defaults), so a deny rule that took it for another file would be
// bypassed. An allow pattern matches the case as written: a name in
// another case is not covered by it.
type pathPattern struct {
	raw      string
	bases    []string // absolute anchors (raw and symlink-resolved); nil: the cwd
	segs     []string
	floating bool // no slash: matches a segment at any depth below the cwd
	dirOnly  bool
	fold     bool // match in any case as well (deny and ask rules)
}

var errEmptyPath = errors.New("empty path pattern")

func compilePathPattern(spec, home string) (*pathPattern, error) {
	p := &pathPattern{raw: spec}
	if spec == "" {
		return nil, errEmptyPath
	}
	if strings.HasSuffix(spec, ":*") {
		return nil, errors.New(`":*" is only for Bash rules; use a glob such as "dir/**"`)
	}
	s := spec
	switch {
	case strings.HasPrefix(s, "//"):
		p.bases = []string{"/"}
		s = s[2:]
	case s == "~" || strings.HasPrefix(s, "~/"):
		if home == "" {
			return nil, errors.New(`"~/" needs HOME, which is not set`)
		}
		p.bases = []string{filepath.Clean(home)}
		s = strings.TrimPrefix(strings.TrimPrefix(s, "~"), "/")
	case strings.HasPrefix(s, "/"):
		s = s[1:] // relative to the session's root, which is its cwd
	case strings.HasPrefix(s, "./"):
		s = s[2:]
	default:
		if !strings.Contains(strings.TrimSuffix(s, "/"), "/") {
			p.floating = true
		}
	}
	if strings.HasSuffix(s, "/") {
		p.dirOnly = true
		s = strings.TrimRight(s, "/")
	}
	for _, seg := range strings.Split(s, "/") {
		if seg == "" || seg == "." {
			continue
		}
		if seg == ".." {
			return nil, errors.New(`".." is not allowed in a path pattern`)
		}
		if _, err := path.Match(seg, ""); err != nil {
			return nil, errors.New("bad glob " + seg)
		}
		p.segs = append(p.segs, seg)
	}
	if len(p.segs) == 0 && p.bases == nil {
		p.segs = []string{"**"}
		p.floating = false
	}
	if p.bases != nil {
		if r, ok := resolvePath(p.bases[0]); ok && r != p.bases[0] {
			p.bases = append(p.bases, r)
		}
	}
	return p, nil
}

// target is one file path a tool call touches, in every reading that
// matters: as written (cleaned) and resolved through symlinks, each with
// the cwd it is relative to.
type target struct {
	readings []reading
	unknown  bool // empty, NUL, or dynamic: no allow, every deny
}

type reading struct {
	abs string
	cwd string
}

// resolveTargetFrom resolves p against base; the readings are anchored at
// anchor (the session's directory, where relative path rules start).
func resolveTargetFrom(p, base, anchor, home string) target {
	if p == "" || strings.ContainsRune(p, 0) || base == "" && !filepath.IsAbs(p) || edgeSpace(p) {
		return target{unknown: true}
	}
	var t target
	add := func(raw string) {
		abs := filepath.Clean(raw)
		t.readings = append(t.readings, reading{abs: abs, cwd: filepath.Clean(anchor)})
		// The lexical reading (what claude's file tools use) and the
		// physical ones (what the kernel does with links and ..).
		for _, p := range []string{abs, raw} {
			r, ok := resolvePath(p)
			if !ok {
				t = target{unknown: true}
				return
			}
			if r != abs {
				t.readings = append(t.readings, reading{abs: r, cwd: resolveDir(filepath.Clean(anchor))})
			}
		}
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home == "" {
			return target{unknown: true}
		}
		add(home + "/" + p[1:])
		return t
	}
	if filepath.IsAbs(p) {
		add(p)
	} else {
		add(base + "/" + p)
	}
	for _, r := range t.readings {
		if hardLinked(r.abs) || processPath(r.abs) {
			return target{unknown: true}
		}
	}
	return t
}

// edgeSpace reports a path with white space at either end. claude trims
// a file tool's path (JavaScript's trim) before it opens it, so " /etc/x"
// is /etc/x to the tool, while read as written it is a name in the
// working directory; and ".env " is .env. Such a path is unknown.
func edgeSpace(p string) bool {
	return strings.TrimFunc(p, func(r rune) bool { return unicode.IsSpace(r) || r == '\uFEFF' }) != p
}

// processPath reports a path under /proc or /dev/fd: its links (cwd,
// root, fd/N) lead wherever the process that opens them is, which is the
// agent, not agentjq, so agentjq cannot resolve them.
func processPath(abs string) bool {
	return abs == "/proc" || strings.HasPrefix(abs, "/proc/") || abs == "/dev/fd" || strings.HasPrefix(abs, "/dev/fd/")
}

// sameNameIn returns the entry of dir that a case-insensitive filesystem
// takes name for (foldLower), or "".
func sameNameIn(dir, name string) string {
	f, err := os.Open(dir)
	if err != nil {
		return ""
	}
	defer f.Close()
	want := foldLower(name)
	for {
		names, err := f.Readdirnames(1024)
		for _, n := range names {
			if n != name && foldLower(n) == want {
				return n
			}
		}
		if err != nil {
			return ""
		}
	}
}

func resolveDir(d string) string {
	if r, ok := resolvePath(d); ok {
		return r
	}
	return d
}

// resolvePath returns where a write to abs would land: every symlink along
// it is followed, dangling ones included (a link to a file that does not
// exist yet is where the write creates it). ok is false for a loop.
func resolvePath(abs string) (string, bool) {
	todo := splitPath(abs)
	done := "/"
	for hops := 0; len(todo) > 0; {
		seg := todo[0]
		todo = todo[1:]
		switch seg {
		case ".":
			continue
		case "..":
			done = filepath.Dir(done)
			continue
		}
		next := filepath.Join(done, seg)
		fi, err := os.Lstat(next)
		if err != nil {
			// A case-insensitive filesystem (macOS's) opens docs/CLAUDE
			// as the docs/Claude that is there: follow that one.
			if alt := sameNameIn(done, seg); alt != "" {
				next = filepath.Join(done, alt)
				fi, err = os.Lstat(next)
			}
		}
		if err != nil {
			// Nothing exists here, so nothing below it is a link.
			return filepath.Join(append([]string{next}, todo...)...), true
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			done = next
			continue
		}
		if hops++; hops > 40 {
			return "", false
		}
		to, err := os.Readlink(next)
		if err != nil {
			return "", false
		}
		if !filepath.IsAbs(to) {
			to = filepath.Join(done, to)
		}
		todo = append(splitPath(to), todo...)
		done = "/"
	}
	return done, true
}

// matchReading reports whether the pattern matches one reading of a path.
func (p *pathPattern) matchReading(r reading) bool {
	segs := splitPath(r.abs)
	if p.bases != nil {
		for _, b := range p.bases {
			bs := splitPath(b)
			if p.hasPrefix(segs, bs) && p.matchRel(segs[len(bs):], r.abs) {
				return true
			}
		}
		return false
	}
	cs := splitPath(r.cwd)
	if !p.hasPrefix(segs, cs) {
		return false // outside the session's directory
	}
	return p.matchRel(segs[len(cs):], r.abs)
}

// matchRel matches the segments below the anchor: the path itself or any
// directory above it.
func (p *pathPattern) matchRel(rel []string, abs string) bool {
	if p.floating {
		for i, s := range rel {
			if p.matchSeg(p.segs[0], s) {
				if p.dirOnly && i == len(rel)-1 && !isDir(abs) {
					continue
				}
				return true
			}
		}
		return false
	}
	for n := len(rel); n >= 0; n-- {
		if p.dirOnly && n == len(rel) && !isDir(abs) {
			continue
		}
		if p.matchSegs(p.segs, rel[:n]) {
			return true
		}
	}
	return false
}

func isDir(abs string) bool {
	fi, err := os.Stat(abs)
	return err == nil && fi.IsDir()
}

func splitPath(p string) []string {
	var out []string
	for _, s := range strings.Split(p, "/") {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

func hasPrefixSegs(s, prefix []string) bool {
	if len(prefix) > len(s) {
		return false
	}
	for i := range prefix {
		if s[i] != prefix[i] {
			return false
		}
	}
	return true
}

// hasPrefix is hasPrefixSegs, in any case as well for a folding pattern.
func (p *pathPattern) hasPrefix(s, prefix []string) bool {
	if hasPrefixSegs(s, prefix) {
		return true
	}
	if !p.fold || len(prefix) > len(s) {
		return false
	}
	return sameNames(s[:len(prefix)], prefix)
}

// sameNames reports whether two paths' segments name the same entries on
// a case-insensitive filesystem (foldLower).
func sameNames(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] && foldLower(a[i]) != foldLower(b[i]) {
			return false
		}
	}
	return true
}

// matchSeg matches one glob segment against one path segment; a folding
// pattern also matches when both are taken in lower case.
func (p *pathPattern) matchSeg(pat, seg string) bool {
	if ok, _ := path.Match(pat, seg); ok {
		return true
	}
	if !p.fold {
		return false
	}
	ok, _ := path.Match(foldLower(pat), foldLower(seg))
	return ok
}

// matchSegs matches glob segments against path segments; "**" matches any
// number of segments (zero included).
func (p *pathPattern) matchSegs(pat, segs []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for len(pat) > 0 && pat[0] == "**" {
				pat = pat[1:]
			}
			if len(pat) == 0 {
				return true
			}
			for i := 0; i <= len(segs); i++ {
				if p.matchSegs(pat, segs[i:]) {
					return true
				}
			}
			return false
		}
		if len(segs) == 0 {
			return false
		}
		if !p.matchSeg(pat[0], segs[0]) {
			return false
		}
		pat, segs = pat[1:], segs[1:]
	}
	return len(segs) == 0
}

// maxBelow bounds how many entries below a directory a recursive read is
// checked against one by one; past it, the patterns decide alone.
const maxBelow = 20000

type belowList struct {
	files    []reading
	overflow bool
	links    []reading // directories reached through a symlink
}

// readsBelow reports whether a recursive read of the directory rd reads a
// file the pattern matches: the files there now, each in every reading
// (symlinks resolved); a directory too large to list, or a link to a
// directory, is judged by whether the pattern may match below it.
func (u *unit) readsBelow(p *pathPattern, rd reading) bool {
	fi, err := os.Stat(rd.abs)
	if err != nil || !fi.IsDir() {
		return false
	}
	if u.below == nil {
		u.below = map[string]*belowList{}
	}
	l := u.below[rd.abs]
	if l == nil {
		l = listBelow(rd)
		u.below[rd.abs] = l
	}
	if l.overflow {
		return p.matchesBelow(rd)
	}
	for _, f := range l.files {
		if p.matchReading(f) {
			return true
		}
	}
	for _, d := range l.links {
		if p.matchReading(d) || p.matchesBelow(d) {
			return true
		}
	}
	return false
}

func listBelow(rd reading) *belowList {
	l := &belowList{}
	n := 0
	_ = filepath.WalkDir(rd.abs, func(p string, d os.DirEntry, err error) error {
		if err != nil || p == rd.abs {
			return nil
		}
		if n++; n > maxBelow {
			l.overflow = true
			return filepath.SkipAll
		}
		if !d.IsDir() {
			l.files = append(l.files, reading{abs: p, cwd: rd.cwd})
		}
		if d.Type()&os.ModeSymlink != 0 {
			if r, ok := resolvePath(p); ok {
				to := reading{abs: r, cwd: resolveDir(rd.cwd)}
				l.files = append(l.files, to)
				if isDir(r) {
					l.links = append(l.links, to)
				}
			} else {
				l.overflow = true
				return filepath.SkipAll
			}
		}
		return nil
	})
	return l
}

// matchesBelow reports whether the pattern may match a path below the
// directory rd names.
func (p *pathPattern) matchesBelow(rd reading) bool {
	segs := splitPath(rd.abs)
	if p.floating {
		return p.hasPrefix(segs, splitPath(rd.cwd)) || p.hasPrefix(splitPath(rd.cwd), segs)
	}
	bases := p.bases
	if bases == nil {
		bases = []string{rd.cwd}
	}
	for _, b := range bases {
		bs := splitPath(b)
		switch {
		case p.hasPrefix(bs, segs):
			return true // the pattern's anchor is inside the directory
		case p.hasPrefix(segs, bs) && p.extendsBelow(p.segs, segs[len(bs):]):
			return true
		}
	}
	return false
}

// extendsBelow reports whether glob segments may match rel followed by at
// least one more segment.
func (p *pathPattern) extendsBelow(pat, rel []string) bool {
	for {
		if len(pat) == 0 {
			return false
		}
		if pat[0] == "**" || len(rel) == 0 {
			return true
		}
		if !p.matchSeg(pat[0], rel[0]) {
			return false
		}
		pat, rel = pat[1:], rel[1:]
	}
}
