package recording

import (
	"bytes"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
)

// TestSuspectFiltersCoverHints: every hint of every built-in pattern holds
// a filter, in every case the pattern accepts.
func TestSuspectFiltersCoverHints(t *testing.T) {
	for _, p := range builtinPatterns {
		fold := strings.HasPrefix(p.re.String(), "(?i)")
		for _, h := range p.hints {
			forms := []string{h}
			if fold {
				forms = append(forms, strings.ToUpper(h), strings.ToUpper(h[:1])+h[1:], mixedCase(h))
			}
			for _, f := range forms {
				b := []byte(f)
				hit := false
				for q := range b {
					hit = hit || suspectAt(b, q)
				}
				if !hit {
					t.Errorf("%s: no filter fires on hint %q", p.kind, f)
				}
			}
		}
	}
	// The hint set knows, for every hint, a filter that fires in it.
	r, _ := NewRedactor(RedactSpec{Builtin: true}, nil)
	for _, p := range builtinPatterns {
		for _, h := range p.hints {
			found := false
			for _, fhs := range r.hints.byFilter {
				for _, fh := range fhs {
					found = found || fh.ah.hint == h
				}
			}
			if !found {
				t.Errorf("%s: no filter stands for hint %q", p.kind, h)
			}
		}
	}
	for _, esc := range []string{`\u0073`, `\/`} {
		if !suspectAt([]byte(esc), 0) {
			t.Errorf("no filter fires on the escape %s", esc)
		}
	}
}

func mixedCase(s string) string {
	b := []byte(s)
	for i := range b {
		if i%2 == 1 {
			b[i] = upper(b[i])
		}
	}
	return string(b)
}

// blocksRef is the answer of a block function (suspectBlocks,
// suspectBlocks64) computed position by position with at: the first block
// of width positions (from 0, while width+2 bytes remain) where at fires,
// and the positions that fired.
func blocksRef(b []byte, width int, at func([]byte, int) bool) (int, uint64) {
	p := 0
	for ; p+width+2 <= len(b); p += width {
		var m uint64
		for i := range width {
			if at(b, p+i) {
				m |= 1 << i
			}
		}
		if m != 0 {
			return p, m
		}
	}
	return p, 0
}

// suspectRef is suspectBlocks' answer computed with suspectAt.
func suspectRef(b []byte) (int, uint32) {
	p, m := blocksRef(b, 32, suspectAt)
	return p, uint32(m)
}

// filterNeedles are the bytes of each filter, in the cases it takes.
func filterNeedles() []string {
	var needles []string
	for _, f := range suspectFilters {
		s := []byte{f.c[0], f.c[1], f.c[2]}
		if s[1] == 0 {
			s[1] = '.'
		}
		if s[2] == 0 {
			s = s[:2]
		}
		needles = append(needles, string(s))
		if f.fold {
			needles = append(needles, strings.ToUpper(string(s)), mixedCase(string(s)))
			// 0x20 set on a non-letter: '@'|0x20 is '`', and so on.
			needles = append(needles, string(bytes.Map(func(r rune) rune { return r &^ 0x20 }, s)))
		}
	}
	return needles
}

func checkSuspectBlocks(t *testing.T, b []byte) {
	t.Helper()
	if !haveSuspectBlocks {
		t.Skip("no AVX2 here")
	}
	gp, gm := suspectBlocks(b)
	wp, wm := suspectRef(b)
	if gp != wp || gm != wm {
		t.Fatalf("%q: suspectBlocks %d %032b, reference %d %032b", b, gp, gm, wp, wm)
	}
}

// TestSuspectBlocks: the assembly agrees with the table at every offset
// and length, for each filter's bytes in every case.
func TestSuspectBlocks(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	needles := filterNeedles()
	for n := 0; n < 140; n++ {
		for _, nd := range needles {
			for at := 0; at+len(nd) <= n; at += 1 + at/7 {
				b := bytes.Repeat([]byte{'.'}, n)
				copy(b[at:], nd)
				checkSuspectBlocks(t, b)
			}
		}
	}
	for range 2000 {
		b := make([]byte, rng.IntN(300))
		for i := range b {
			b[i] = "kIAzh_bxoreyuth\\/-. KEYRUTH"[rng.IntN(27)]
		}
		checkSuspectBlocks(t, b)
	}
}

func FuzzSuspectBlocks(f *testing.F) {
	f.Add([]byte(`{"a":"text with sk-ant-key and Bearer tok and \u0041KIA in it, long enough"}`))
	f.Add(bytes.Repeat([]byte("authtoken "), 9))
	f.Fuzz(func(t *testing.T, b []byte) {
		checkSuspectBlocks(t, b)
	})
}

// TestSuspectFindsEveryHint: where the hint set finds a hint, suspect
// says so, and occurrences lists what hints.occurrences lists.
func TestSuspectFindsEveryHint(t *testing.T) {
	if !haveSuspectBlocks {
		t.Skip("no AVX2 here")
	}
	// Both scans: AVX2, and AVX-512 VBMI where there is one.
	vbmi := haveSuspectBlocks64
	defer setSuspectBlocks64(vbmi)
	for _, on := range []bool{false, vbmi} {
		setSuspectBlocks64(on)
		checkSuspectFindsEveryHint(t)
	}
}

func checkSuspectFindsEveryHint(t *testing.T) {
	r, _ := NewRedactor(RedactSpec{Builtin: true}, nil)
	rng := rand.New(rand.NewPCG(3, 4))
	words := []string{"sk-", "sk-ant-", "AKIA", "ASIA", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "xox", "AIza",
		"bearer", "BEARER", "Bearer", "api_key", "API-KEY", "ApiKey", "auth_token", "Auth-Token", "AUTHTOKEN", "x-api-key",
		`\u0041`, `\/`, `\\u`, "lorem", "ipsum", " ", `"`, "k", "e", "y", "_", "-", "{", "}", "0123456789"}
	for range 3000 {
		var sb strings.Builder
		for range rng.IntN(40) {
			sb.WriteString(words[rng.IntN(len(words))])
		}
		b := []byte(sb.String())
		want := r.hints.match(b) != 0 || hasHidingEscape(b)
		if got := r.suspect(b); got != want && !(got && bytes.Contains(b, []byte(`\\`))) {
			t.Fatalf("%q: suspect %v, hints and escapes %v", b, got, want)
		}
		got, wantOcc := r.occurrences(b), r.hints.occurrences(b)
		// The same occurrences; at one position, in any order.
		sort.Slice(wantOcc, func(i, j int) bool {
			if wantOcc[i].pos != wantOcc[j].pos {
				return wantOcc[i].pos < wantOcc[j].pos
			}
			if wantOcc[i].end != wantOcc[j].end {
				return wantOcc[i].end < wantOcc[j].end
			}
			return wantOcc[i].pattern < wantOcc[j].pattern
		})
		if len(got) != len(wantOcc) {
			t.Fatalf("%q: occurrences %v, want %v", b, got, wantOcc)
		}
		for i := range got {
			if got[i] != wantOcc[i] {
				t.Fatalf("%q: occurrences %v, want %v", b, got, wantOcc)
			}
		}
	}
}
