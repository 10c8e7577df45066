// Package termlock lets the programs of one pipeline take turns on the
// terminal they share: spawn's permission prompt holds the terminal's
// lock from its first line to the answer, and filter --view takes it for
// each write, so that a view that lags behind (a slow terminal, a busy
// machine) never draws into the middle of a prompt. The lock is an
// advisory flock(2) on the terminal's device node (/dev/pts/N), which
// every process showing on that terminal can open; the kernel drops it
// when its holder exits, so a killed prompt never blocks the view. Where
// the node cannot be found or locked (not Linux, a terminal whose node
// is not found, no permission) the lock is a no-op: the prompt is then
// kept clear only by spawn holding its stdout.
package termlock

import (
	"context"
	"io"
	"os"
	"time"
)

// poll is how often a waiter tries again: short next to a person's
// reaction, long next to a syscall.
const poll = 10 * time.Millisecond

// Hold takes the lock of the terminal that tty shows (tty may be
// /dev/tty), waiting while another process holds it, at most max or until
// ctx is done; after that the caller goes on without it (a viewer stuck
// in a write to a stopped terminal must not hold a prompt back for ever).
// release gives the lock up; it is never nil.
func Hold(ctx context.Context, tty *os.File, max time.Duration) (release func()) {
	node := openNode(tty)
	if node == nil {
		return func() {}
	}
	deadline := time.Now().Add(max)
	for !tryLock(node) {
		if time.Now().After(deadline) || ctx.Err() != nil {
			node.Close()
			return func() {}
		}
		select {
		case <-ctx.Done():
		case <-time.After(poll):
		}
	}
	return func() {
		unlock(node)
		node.Close()
	}
}

// Writer is a terminal whose every Write holds the terminal's lock: it
// waits while a prompt is open.
type Writer struct {
	f    *os.File
	node *os.File
	ctx  context.Context
}

// NewWriter returns w with each Write taking the lock of the terminal w
// is, or w itself when w is not a terminal whose lock can be taken.
// Writes stop waiting when ctx is done.
func NewWriter(ctx context.Context, w io.Writer) io.Writer {
	f, ok := w.(*os.File)
	if !ok {
		return w
	}
	node := openNode(f)
	if node == nil {
		return w
	}
	return &Writer{f: f, node: node, ctx: ctx}
}

func (w *Writer) Write(p []byte) (int, error) {
	for !tryLock(w.node) {
		if w.ctx.Err() != nil {
			break // write anyway: the person is leaving
		}
		select {
		case <-w.ctx.Done():
		case <-time.After(poll):
		}
	}
	n, err := w.f.Write(p)
	unlock(w.node)
	return n, err
}
