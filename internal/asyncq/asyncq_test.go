package asyncq

import (
	"bytes"
	"errors"
	"sync"
	"testing"
	"time"
)

// collect is a sink that keeps every piece it is handed, in order, and
// can be held until released.
type collect struct {
	mu     sync.Mutex
	got    bytes.Buffer
	drops  int64
	ended  int
	hold   chan struct{}
	failAt int // fail once this many bytes are written (0: never)
}

func (c *collect) sink(_ *Queue[int], b Batch[int]) error {
	if c.hold != nil {
		<-c.hold
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.drops += b.Dropped
	if b.Ended {
		c.ended++
	}
	for _, it := range b.Items {
		c.got.Write(it.B)
		if c.failAt > 0 && c.got.Len() >= c.failAt {
			return errors.New("reader gone")
		}
	}
	return nil
}

func (c *collect) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.got.String()
}

// TestCopyOrderAndReuse: with Copy the caller may reuse its buffer at
// once; every piece arrives in order; End hands a last Ended batch.
func TestCopyOrderAndReuse(t *testing.T) {
	c := &collect{}
	q := New(Options[int]{Limit: 64, Copy: true}, c.sink)
	var want bytes.Buffer
	buf := make([]byte, 0, 16)
	for i := range 500 {
		buf = append(buf[:0], byte('a'+i%26), byte('0'+i%10), '\n')
		want.Write(buf)
		if !q.WaitRoom(len(buf), 0, nil) || !q.Put(i, buf) {
			t.Fatalf("put %d refused", i)
		}
	}
	q.End()
	<-q.Done()
	if c.String() != want.String() {
		t.Errorf("got %d bytes, not the %d put, in order", len(c.String()), want.Len())
	}
	if c.ended != 1 {
		t.Errorf("%d Ended batches, want 1", c.ended)
	}
	if q.Put(0, []byte("late")) {
		t.Error("a put after End was taken")
	}
}

// TestOfferDropsPastTheLimit: while the sink holds 5 bytes, Offer takes
// pieces up to the limit of 10 and counts the rest as dropped, handing the
// count on; nothing is lost silently.
func TestOfferDropsPastTheLimit(t *testing.T) {
	c := &collect{hold: make(chan struct{})}
	var released int
	q := New(Options[int]{Limit: 10, Release: func(Item[int]) { released++ }}, c.sink)
	q.Offer(0, []byte("12345")) // counts until the held sink is done with it
	taken := 0
	for range 10 {
		if q.Offer(0, []byte("abcde")) {
			taken++
		}
	}
	close(c.hold)
	q.Flushed(time.Time{})
	q.End()
	<-q.Done()
	if taken != 1 || c.drops != 45 || released != 9 {
		t.Errorf("taken %d, dropped %d bytes, released %d", taken, c.drops, released)
	}
	if len(c.String()) != 5+5*taken {
		t.Errorf("written %q", c.String())
	}
}

// TestDrainGivesUpOnAStalledSink: Drain waits while the sink moves, and
// abandons one that takes nothing, reporting the bytes lost; a waiting
// WaitRoom is released.
func TestDrainGivesUpOnAStalledSink(t *testing.T) {
	c := &collect{hold: make(chan struct{})}
	defer close(c.hold)
	q := New(Options[int]{Limit: 8}, c.sink)
	q.Put(0, []byte("stuck...")) // the sink holds it
	q.Put(0, []byte("queued"))
	waited := make(chan bool)
	go func() { waited <- q.WaitRoom(4, 0, nil) }()
	if lost := q.Drain(50*time.Millisecond, 50*time.Millisecond); lost != 14 {
		t.Errorf("Drain lost %d bytes, want 14", lost)
	}
	if <-waited {
		t.Error("WaitRoom reported room on an abandoned stream")
	}
	if !q.IsClosed() {
		t.Error("not closed after Drain gave up")
	}
}

// TestSinkErrorCloses: a failed write closes the stream; later puts are
// refused and released.
func TestSinkErrorCloses(t *testing.T) {
	c := &collect{failAt: 1}
	released := 0
	q := New(Options[int]{Limit: 1 << 10, Release: func(Item[int]) { released++ }}, c.sink)
	q.Put(0, []byte("x"))
	<-q.Closed()
	if q.Put(0, []byte("y")) || released != 1 {
		t.Errorf("a put after the failure: released %d", released)
	}
	<-q.Done()
}
