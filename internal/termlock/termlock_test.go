package termlock

import (
	"context"
	"io"
	"os"
	"testing"
	"time"

	"github.com/creack/pty"
)

// TestWriterWaitsForHold: a write to a terminal whose lock a prompt holds
// (through another open of the same terminal) reaches the terminal only
// after the release; a Hold that cannot get the lock gives up after its
// bound; without a terminal the lock is no hindrance.
func TestWriterWaitsForHold(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	other, err := os.OpenFile(tty.Name(), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()

	ctx := context.Background()
	w := NewWriter(ctx, other)
	if _, ok := w.(*Writer); !ok {
		t.Fatalf("NewWriter on %s did not lock: %T", tty.Name(), w)
	}
	release := Hold(ctx, tty, time.Second)
	wrote := make(chan struct{})
	go func() {
		w.Write([]byte("late\n"))
		close(wrote)
	}()
	select {
	case <-wrote:
		t.Fatal("the write did not wait for the held terminal")
	case <-time.After(200 * time.Millisecond):
	}
	// A second prompt (another process) cannot take the lock: it gives up.
	start := time.Now()
	gaveUp := make(chan time.Duration)
	go func() {
		Hold(ctx, other, 100*time.Millisecond)()
		gaveUp <- time.Since(start)
	}()
	select {
	case d := <-gaveUp:
		if d < 100*time.Millisecond {
			t.Errorf("a Hold of a held terminal gave up after %s, before its 100ms", d)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a Hold of a held terminal did not give up")
	}
	release()
	select {
	case <-wrote:
	case <-time.After(2 * time.Second):
		t.Fatal("the write did not go on after the release")
	}
	buf := make([]byte, 64)
	n, _ := ptmx.Read(buf)
	if got := string(buf[:n]); got != "late\r\n" {
		t.Errorf("the terminal shows %q", got)
	}

	// A cancelled context stops the wait: the write goes ahead.
	release = Hold(ctx, tty, time.Second)
	cctx, cancel := context.WithCancel(ctx)
	cw := NewWriter(cctx, other)
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	if _, err := cw.Write([]byte("x")); err != nil {
		t.Errorf("write after cancel: %v", err)
	}
	release()

	// Not a terminal: nothing to lock.
	r, pw, _ := os.Pipe()
	defer r.Close()
	defer pw.Close()
	if NewWriter(ctx, pw) != io.Writer(pw) {
		t.Error("NewWriter wrapped a pipe")
	}
	Hold(ctx, pw, time.Second)()
}
