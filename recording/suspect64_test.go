package recording

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// checkSuspect64 compares the assembly with its reference, the reference
// with the filters (it must find every position they fire at), and
// suspectScan64 with the filters.
func checkSuspect64(t *testing.T, b []byte) {
	t.Helper()
	for p := range len(b) {
		if suspectAt(b, p) && !suspect64At(b, p) {
			t.Fatalf("%q: a filter fires at %d, the buckets do not", b, p)
		}
	}
	var want, got []int
	for p := range len(b) {
		if suspectAt(b, p) {
			want = append(want, p)
		}
	}
	if !haveSuspectBlocks64 {
		return
	}
	gp, gm := suspectBlocks64(b, suspect64Tables)
	wp, wm := blocksRef(b, 64, suspect64At)
	if gp != wp || gm != wm {
		t.Fatalf("%q: suspectBlocks64 %d %064b, reference %d %064b", b, gp, gm, wp, wm)
	}
	suspectScan(b, func(q int) bool {
		if suspectAt(b, q) {
			got = append(got, q)
		}
		return false
	})
	if len(got) != len(want) {
		t.Fatalf("%q: the scan found filters firing at %v, want %v", b, got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%q: the scan found filters firing at %v, want %v", b, got, want)
		}
	}
}

func TestSuspectBlocks64(t *testing.T) {
	if !haveSuspectBlocks64 {
		t.Log("no AVX-512 VBMI here: only the reference is checked")
	}
	var needles []string
	for _, nd := range filterNeedles() {
		// The same bytes before a non-ASCII letter, whose bytes the
		// lookup sees by their low 7 bits.
		needles = append(needles, nd, nd+"\xc3\xa9")
	}
	for n := 0; n < 200; n += 1 + n/40 {
		for _, nd := range needles {
			for at := 0; at+len(nd) <= n; at += 1 + at/9 {
				b := bytes.Repeat([]byte{'.'}, n)
				copy(b[at:], nd)
				checkSuspect64(t, b)
			}
		}
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 2000 {
		b := make([]byte, rng.IntN(400))
		for i := range b {
			b[i] = "kIAzh_bxoreyuth\\/-. KEYRUTH\xeb\xc9\xdf"[rng.IntN(30)]
		}
		checkSuspect64(t, b)
	}
}

func FuzzSuspectBlocks64(f *testing.F) {
	f.Add([]byte(`{"a":"text with sk-ant-key and Bearer tok and \u0041KIA in it, long enough to fill a block of sixty-four"}`))
	f.Add(bytes.Repeat([]byte("authtoken "), 20))
	f.Fuzz(func(t *testing.T, b []byte) {
		checkSuspect64(t, b)
	})
}

// BenchmarkCheck: the redaction pre-filter the bridge's workers run on
// every agent line, with AVX-512 VBMI (vbmi) and with AVX2 (avx2).
func BenchmarkCheck(b *testing.B) {
	lines, n := streamLines(b)
	red, _ := NewRedactor(RedactSpec{Builtin: true}, nil)
	for _, vbmi := range []bool{true, false} {
		name := "avx2"
		if vbmi {
			name = "vbmi"
			if !haveSuspectBlocks64 {
				continue
			}
		}
		b.Run(name, func(b *testing.B) {
			defer func(old bool) { setSuspectBlocks64(old) }(haveSuspectBlocks64)
			setSuspectBlocks64(vbmi)
			b.SetBytes(n)
			for range b.N {
				for _, l := range lines {
					red.Check(l)
				}
			}
		})
	}
}

// TestCheckAllocatesNothing: the pre-filter runs on every agent line; a
// buffer escaping to the heap there (as a function value would make the
// tail copy) costs an allocation a line and the GC that follows.
func TestCheckAllocatesNothing(t *testing.T) {
	red, _ := NewRedactor(RedactSpec{Builtin: true}, nil)
	line := []byte(`{"type":"assistant","message":{"content":[{"type":"text","text":"a line of some length, long enough for a block or two of the scan, and a tail"}]}}`)
	for _, n := range []int{len(line), 70, 40, 10} {
		if a := testing.AllocsPerRun(100, func() { red.Check(line[:n]) }); a != 0 {
			t.Errorf("Check of %d bytes: %v allocations", n, a)
		}
	}
}
