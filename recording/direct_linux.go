package recording

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"
	"unsafe"
)

// A recording of a busy session is gigabytes written once and seldom read
// back soon. Through the page cache, every byte costs a copy into a page
// the kernel must first find (on a VM that hands free memory back to its
// host, a page fault on the host too): as much CPU as the rest of the
// session on a small machine. So the Async Writer writes its big batches
// with O_DIRECT, straight from its own buffer to the device, and only what
// is left over, the part of a batch past the last whole block, through
// the page cache. Small batches (a live session writing a line now and
// then) go through the page cache as before, so each line is in the file
// as soon as it is written. The file is the same either way: the next
// direct write starts at the block where the page cache's part began and
// writes that part again, and the kernel keeps the two views coherent.

const (
	// dioAlign is the alignment O_DIRECT asks of offsets, lengths and
	// memory: 4096 covers 512-byte and 4 KiB block devices.
	dioAlign = 4096
	// directMin is the smallest batch written with O_DIRECT.
	directMin = 256 << 10
	// directBatch is the Writer's batch size with O_DIRECT.
	directBatch = 4 << 20
)

// directFile writes a recording's batches at the end of a regular file.
type directFile struct {
	f    *os.File // the recording as the caller opened it
	d    *os.File // the same file opened with O_DIRECT; nil: off
	off  int64    // the file's size: where the next batch goes
	tail []byte   // the file's bytes from its last block boundary to off
	// held: tail is not in the file yet (the next batch was at hand).
	held  bool
	stage []byte // a dioAlign-aligned staging buffer for direct writes
	// direct counts the bytes written with O_DIRECT, inPlace those
	// written from the Writer's own buffer (tests).
	direct, inPlace int64

	// Which way a big batch goes is measured, not assumed: the device
	// may be slower than the page cache (a small VM disk, with memory to
	// spare) or faster (an NVMe disk, or a VM whose every new page-cache
	// page costs a fault on its host). cost holds each way's wall time
	// per byte, smoothed (0: not measured yet); every tryEvery-th big
	// batch goes the other way, to measure it again.
	cost [2]float64
	big  int
	// force, when not -1, is the way every big batch goes (tests).
	force int
}

// The ways a big batch can go.
const (
	viaDirect = iota
	viaCache
	tryEvery = 16
)

// newDirectFile returns a directFile for w when w is a regular file opened
// for writing without O_APPEND, holding exactly written (the header) and
// nothing else, and O_DIRECT can be had on it; otherwise nil.
func newDirectFile(w io.Writer, written []byte) *directFile {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("AGENTJQ_NO_DIRECT_IO") != "" {
		return nil
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() != int64(len(written)) {
		return nil
	}
	if pos, err := f.Seek(0, io.SeekCurrent); err != nil || pos != int64(len(written)) {
		return nil
	}
	fl, err := fcntlGetfl(f)
	if err != nil || fl&syscall.O_APPEND != 0 {
		return nil
	}
	var fs syscall.Statfs_t
	if syscall.Fstatfs(int(f.Fd()), &fs) != nil || !directFS[int64(fs.Type)] {
		return nil
	}
	// The same file, a second open file description, with O_DIRECT
	// (refused by file systems without it, tmpfs for one).
	d, err := os.OpenFile(fmt.Sprintf("/proc/self/fd/%d", f.Fd()), os.O_WRONLY|syscall.O_DIRECT, 0)
	if err != nil {
		return nil
	}
	df := &directFile{f: f, d: d, off: int64(len(written)), force: -1}
	df.tail = append(df.tail, written[len(written)-int(df.off%dioAlign):]...)
	return df
}

// directFS are the local, block-device file systems O_DIRECT is used on.
// Elsewhere it may be refused (tmpfs), ignored, or make every write wait
// for a server (NFS).
var directFS = map[int64]bool{
	0xef53:     true, // ext2, ext3, ext4
	0x58465342: true, // xfs
	0x9123683e: true, // btrfs
	0xf2f52010: true, // f2fs
}

func fcntlGetfl(f *os.File) (int, error) {
	r, _, e := syscall.Syscall(syscall.SYS_FCNTL, f.Fd(), syscall.F_GETFL, 0)
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

// Write appends b, a batch of whole lines.
func (df *directFile) Write(b []byte) (int, error) {
	if err := df.write(b, 0, false); err != nil {
		return 0, err
	}
	return len(b), nil
}

// write appends b[pre:]; b[:pre] is room it may use. With more (the next
// batch is at hand), the last partial block may stay in memory to go with
// the next batch rather than through the page cache now; without,
// everything is in the file when write returns.
func (df *directFile) write(b []byte, pre int, more bool) error {
	if df.d != nil && len(b)-pre >= directMin {
		way := df.way()
		start := time.Now()
		var err error
		if way == viaDirect {
			err = df.writeDirect(b, pre, more)
		} else {
			err = df.writeCached(b[pre:])
		}
		if err == nil {
			df.measured(way, time.Since(start), len(b)-pre)
			return nil
		}
		if way == viaCache || !errors.Is(err, syscall.EINVAL) {
			return err
		}
		// O_DIRECT refused after all: the page cache from now on.
		df.d.Close()
		df.d = nil
	}
	return df.writeCached(b[pre:])
}

// way says how the next big batch goes.
func (df *directFile) way() int {
	if df.force >= 0 {
		return df.force
	}
	df.big++
	for w := range df.cost {
		if df.cost[w] == 0 {
			return w // measure it first
		}
	}
	best := viaDirect
	if df.cost[viaCache] < df.cost[viaDirect] {
		best = viaCache
	}
	if df.big%tryEvery == 0 {
		return 1 - best
	}
	return best
}

// measured notes that n bytes went way in d.
func (df *directFile) measured(way int, d time.Duration, n int) {
	c := float64(d.Nanoseconds()) / float64(n)
	if c <= 0 {
		c = 1e-3
	}
	if df.cost[way] == 0 {
		df.cost[way] = c
	} else {
		df.cost[way] = 0.75*df.cost[way] + 0.25*c
	}
}

// writeCached writes b through the page cache.
func (df *directFile) writeCached(b []byte) error {
	if err := df.flushTail(); err != nil {
		return err
	}
	if _, err := df.f.WriteAt(b, df.off); err != nil {
		return err
	}
	df.advance(b)
	return nil
}

// flushTail writes a held tail through the page cache.
func (df *directFile) flushTail() error {
	if !df.held {
		return nil
	}
	if _, err := df.f.WriteAt(df.tail, df.off-int64(len(df.tail))); err != nil {
		return err
	}
	df.held = false
	return nil
}

// writeDirect writes the file's tail and b from the tail's block on: the
// whole blocks with O_DIRECT, the rest through the page cache unless more
// is coming.
func (df *directFile) writeDirect(b []byte, pre int, more bool) error {
	data := b[pre:]
	t := len(df.tail)
	base := df.off - int64(t)
	total := t + len(data)
	whole := total &^ (dioAlign - 1)
	var out []byte
	if pre >= t && uintptr(unsafe.Pointer(&b[pre-t]))&(dioAlign-1) == 0 {
		// The Writer left room for the tail, in an aligned buffer: the
		// batch goes to the device from where it lies.
		out = b[pre-t : pre-t+whole]
		copy(out, df.tail)
		df.inPlace += int64(whole)
	} else {
		out = df.staging(whole)
		copy(out, df.tail)
		copy(out[t:], data)
	}
	if _, err := df.d.WriteAt(out, base); err != nil {
		return err
	}
	df.direct += int64(whole)
	rest := data[whole-t:]
	df.off = base + int64(total)
	df.tail = append(df.tail[:0], rest...)
	df.held = len(rest) > 0
	if !more {
		return df.flushTail()
	}
	return nil
}

// advance notes b written at off through the page cache.
func (df *directFile) advance(b []byte) {
	end := df.off + int64(len(b))
	keep := int(end % dioAlign)
	if keep <= len(b) {
		df.tail = append(df.tail[:0], b[len(b)-keep:]...)
	} else {
		df.tail = append(df.tail, b...)
		df.tail = append(df.tail[:0], df.tail[len(df.tail)-keep:]...)
	}
	df.off = end
}

// staging returns an aligned buffer of n bytes.
func (df *directFile) staging(n int) []byte {
	if cap(df.stage) < n {
		df.stage = alignedBuffer(n)
	}
	return df.stage[:n]
}

// close leaves the caller's file offset at the end, as plain writes would
// have, and closes the O_DIRECT descriptor.
func (df *directFile) close() {
	df.flushTail() // only after an error: the last batch is written whole
	df.f.Seek(df.off, io.SeekStart)
	if df.d != nil {
		df.d.Close()
	}
}
