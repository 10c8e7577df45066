package bridge

import (
	"bytes"
	"os"
	"syscall"
	"testing"
	"time"
)

// TestEscalationCountsEverySignal: SIGINT, SIGTERM and SIGHUP are presses
// of the same button: the first ends gracefully, the second escalates,
// the third kills; a SIGINT long after the last starts again.
func TestEscalationCountsEverySignal(t *testing.T) {
	now := time.Now()
	for _, seq := range [][]os.Signal{
		{syscall.SIGTERM, syscall.SIGTERM, syscall.SIGTERM},
		{syscall.SIGINT, syscall.SIGINT, syscall.SIGINT},
		{syscall.SIGHUP, syscall.SIGINT, syscall.SIGTERM},
	} {
		var e escalation
		var got []int
		for i, sig := range seq {
			got = append(got, e.next(sig, now.Add(time.Duration(i)*100*time.Millisecond)))
		}
		if want := []int{stageInterrupt, stageTerm, stageKill}; !equalInts(got, want) {
			t.Errorf("%v: stages %v, want %v", seq, got, want)
		}
	}
	var e escalation
	e.next(syscall.SIGINT, now)
	if got := e.next(syscall.SIGINT, now.Add(escalationReset+time.Second)); got != stageInterrupt {
		t.Errorf("a SIGINT %s after the last: stage %d, want the interrupt again", escalationReset+time.Second, got)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestLifecyclePassesSignalsToEverySession: each signal reaches every
// attached session, a session attached late gets those it missed, and
// the first closes Ending.
func TestLifecyclePassesSignalsToEverySession(t *testing.T) {
	l := NewLifecycle(time.Second)
	a, b := make(chan os.Signal, 4), make(chan os.Signal, 4)
	detachA := l.Attach(a)
	l.Attach(b)
	select {
	case <-l.Ending():
		t.Fatal("ending before any signal")
	default:
	}
	l.Signal(syscall.SIGINT)
	detachA()
	l.Signal(syscall.SIGTERM)
	if len(a) != 1 || len(b) != 2 {
		t.Errorf("signals queued: %d for the detached session (want 1), %d for the other (want 2)", len(a), len(b))
	}
	late := make(chan os.Signal, 4)
	l.Attach(late)
	if len(late) != 2 {
		t.Errorf("a session attached after 2 signals got %d", len(late))
	}
	if !WaitBounded(l.Ending(), time.Second) {
		t.Error("Ending not closed by the first signal")
	}
	if l.Bound() != (ShutdownStages+1)*time.Second {
		t.Errorf("bound %s", l.Bound())
	}
}

// TestPeerWriterAbandonsAStalledReader: a client that takes nothing is
// given up on after the grace: the write that waited for room fails, and
// so does every later one, and Close reports what was lost; a reader
// that reads gets every byte.
func TestPeerWriterAbandonsAStalledReader(t *testing.T) {
	w := newStalledWriter(t)
	p := NewPeerWriter(w, 200*time.Millisecond)
	chunk := bytes.Repeat([]byte("x"), 1<<20)
	var err error
	for i := 0; i < 64 && err == nil; i++ { // 64 MiB: far more than it queues
		_, err = p.Write(chunk)
	}
	if err == nil || !p.Abandoned() {
		t.Fatalf("writes to a reader that takes nothing kept succeeding (err %v)", err)
	}
	if _, err := p.Write([]byte("late\n")); err == nil {
		t.Error("a write after the abandon succeeded")
	}
	if lost := p.Close(); lost == 0 {
		t.Error("Close reports nothing lost")
	}

	r := &slowReader{pause: time.Millisecond}
	p = NewPeerWriter(r, 5*time.Second) // a loaded machine may pause the reader; it still reads
	for range 16 {
		if _, err := p.Write(chunk); err != nil {
			t.Fatalf("a reader that reads was given up on: %v", err)
		}
	}
	if lost := p.Close(); lost != 0 {
		t.Errorf("Close gave up on %d bytes of a reader that reads", lost)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.n != 16<<20 {
		t.Errorf("the reader got %d bytes, want %d", r.n, 16<<20)
	}
}
