package recording

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// directDir is a directory on a file system that takes O_DIRECT: the
// test's temporary directory, else one beside the package (tmpfs, often
// /tmp, refuses it).
func directDir(t *testing.T) string {
	t.Helper()
	for _, dir := range []string{t.TempDir(), ""} {
		if dir == "" {
			d, err := os.MkdirTemp(".", "direct-test-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(d) })
			dir = d
		}
		probe, err := os.Create(filepath.Join(dir, "probe"))
		if err != nil {
			t.Fatal(err)
		}
		df := newDirectFile(probe, nil)
		probe.Close()
		if df != nil {
			df.close()
			return dir
		}
	}
	t.Skip("no file system here takes O_DIRECT")
	return ""
}

// TestDirectFile: batches big and small, written through O_DIRECT and the
// page cache in turn, leave the file holding exactly what was written,
// after every batch, not only at the end.
func TestDirectFile(t *testing.T) {
	dir := directDir(t)
	path := filepath.Join(dir, "rec")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	header := []byte(`{"agentjq_recording":1}` + "\n")
	f.Write(header)
	df := newDirectFile(f, header)
	if df == nil {
		t.Fatal("no O_DIRECT on a file system that took it")
	}
	df.force = viaDirect
	want := append([]byte(nil), header...)
	r := rand.New(rand.NewPCG(3, 4))
	sizes := []int{10, directMin, directMin + 1, 4095, 1 << 20, 1, 3*dioAlign + 7, 2 << 20, 100}
	for range 12 {
		sizes = append(sizes, r.IntN(3<<19))
	}
	for i, n := range sizes {
		b := make([]byte, n)
		for j := range b {
			b[j] = byte('a' + (i+j)%26)
		}
		if n > 0 {
			b[n-1] = '\n'
		}
		// Every third batch says more is coming: its last partial block
		// may wait for the next one.
		more := i%3 == 1 && i != len(sizes)-1
		if err := df.write(b, 0, more); err != nil {
			t.Fatalf("batch %d (%d bytes): %v", i, n, err)
		}
		want = append(want, b...)
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case !more && !bytes.Equal(got, want):
			t.Fatalf("after batch %d (%d bytes) the file differs from what was written (%d bytes, want %d)", i, n, len(got), len(want))
		case more && (!bytes.HasPrefix(want, got) || len(want)-len(got) >= dioAlign):
			t.Fatalf("after batch %d (%d bytes, more to come) the file is not what was written less a partial block (%d bytes, want %d)", i, n, len(got), len(want))
		}
	}
	if df.direct == 0 {
		t.Error("nothing went through O_DIRECT")
	}
	df.close()
	if pos, _ := f.Seek(0, 1); pos != int64(len(want)) {
		t.Errorf("file offset %d after close, want the end, %d", pos, len(want))
	}
}

// TestDirectWriterMatchesBuffered: an Async Writer on a real file makes
// the same recording with O_DIRECT as without.
func TestDirectWriterMatchesBuffered(t *testing.T) {
	dir := directDir(t)
	c, _ := captureBytes(t, "chain")
	lines := splitLines(c.out)
	red, _ := NewRedactor(RedactSpec{Builtin: true}, nil)
	record := func(name string, direct bool) ([]byte, [2]int64) {
		if !direct {
			t.Setenv("AGENTJQ_NO_DIRECT_IO", "1")
		}
		path := filepath.Join(dir, name)
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		w, err := NewWriter(f, Header{Agent: "claude"}, WriterOptions{Now: func() time.Time { return time.Unix(100, 0) }, Redactor: red, Async: true, ValidOut: true})
		if err != nil {
			t.Fatal(err)
		}
		for range 600 { // about 12 MiB: batches of 4 MiB, each after a partial block
			for _, l := range lines {
				w.Tap(Out, l)
			}
		}
		var n [2]int64
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if w.direct != nil {
			n = [2]int64{w.direct.direct, w.direct.inPlace}
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return b, n
	}
	direct, n := record("direct.rec", true)
	buffered, _ := record("buffered.rec", false)
	if !bytes.Equal(direct, buffered) {
		t.Fatalf("the O_DIRECT recording differs (%d bytes, buffered %d)", len(direct), len(buffered))
	}
	if n[0] == 0 || n[1] == 0 {
		t.Errorf("%d bytes went through O_DIRECT, %d of them from the Writer's buffer", n[0], n[1])
	}
	if _, _, err := ReadAll(bytes.NewReader(direct), nil); err != nil {
		t.Fatal(err)
	}
}

// TestDirectFileWay: a big batch goes the way measured cheaper, each way
// is measured first, and every tryEvery-th batch tries the other way.
func TestDirectFileWay(t *testing.T) {
	df := &directFile{force: -1}
	if w := df.way(); w != viaDirect {
		t.Fatalf("first way %d, want direct (unmeasured)", w)
	}
	df.measured(viaDirect, 4*time.Millisecond, 4<<20)
	if w := df.way(); w != viaCache {
		t.Fatalf("second way %d, want the page cache (unmeasured)", w)
	}
	df.measured(viaCache, time.Millisecond, 4<<20)
	counts := [2]int{}
	for range 4 * tryEvery {
		counts[df.way()]++
	}
	if counts[viaCache] != 4*tryEvery-4 || counts[viaDirect] != 4 {
		t.Errorf("ways %v: want the page cache but every %dth batch", counts, tryEvery)
	}
	// The page cache gets slow (a VM's host faulting pages in): after a
	// few slow batches, direct wins.
	for range 8 {
		df.measured(viaCache, 12*time.Millisecond, 4<<20)
	}
	if w := df.way(); w != viaDirect && df.big%tryEvery != 0 {
		t.Errorf("way %d after the page cache got slow, want direct", w)
	}
}
