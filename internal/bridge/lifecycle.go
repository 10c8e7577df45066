package bridge

import (
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/agentjq/agentjq/internal/asyncq"
)

// The lifecycle every front end shares.
//
// A session's end is staged in its loop (session.go): interrupt the turn,
// close the agent's stdin, SIGTERM, SIGKILL, each stage given a grace
// before the next, and every signal SIGINT, SIGTERM or SIGHUP the session
// gets moves it on: the first ends it gracefully (an interrupt, or the
// agent's stdin closed when no turn runs), the second escalates (SIGTERM),
// the third kills the tree (escalation below). A front end with one
// session (spawn, record, proxy) passes its signals to it as they are; a
// front end with many (acp, serve) passes each signal to every session
// through a Lifecycle, so that each ends as spawn's would, and bounds its
// own end by Lifecycle.Bound. What a front end writes to its own client
// goes through a PeerWriter: a client that stops reading is abandoned
// after a grace, never waited for.

// escalation counts the signals that end a session. SIGINT, SIGTERM and
// SIGHUP all count; a SIGINT more than escalationReset after the last
// signal starts the count again (a second Ctrl-C long after the first is
// a new first one).
type escalation struct {
	n    int
	last time.Time
}

const escalationReset = 5 * time.Second

// next counts sig and returns the stage it asks for.
func (e *escalation) next(sig os.Signal, now time.Time) int {
	if sig == syscall.SIGINT && now.Sub(e.last) > escalationReset {
		e.n = 0
	}
	e.n++
	e.last = now
	switch e.n {
	case 1:
		return stageInterrupt
	case 2:
		return stageTerm
	default:
		return stageKill
	}
}

// ShutdownStages is how many graces a session's staged shutdown takes at
// most once it starts: interrupt, close stdin, SIGTERM, SIGKILL, and the
// grace of the agent's output after it exits.
const ShutdownStages = 5

// Lifecycle passes a front end's signals to every session it runs, and
// says when the front end is ending.
type Lifecycle struct {
	grace time.Duration

	mu       sync.Mutex
	sessions map[chan os.Signal]struct{}
	signals  int
	ending   chan struct{}
}

// NewLifecycle is a Lifecycle whose sessions' stages each wait grace
// (0: the bridge's default, 5s).
func NewLifecycle(grace time.Duration) *Lifecycle {
	if grace <= 0 {
		grace = 5 * time.Second
	}
	return &Lifecycle{grace: grace, sessions: map[chan os.Signal]struct{}{}, ending: make(chan struct{})}
}

// Grace is each stage's wait.
func (l *Lifecycle) Grace() time.Duration { return l.grace }

// Bound is the longest the front end's sessions may take to end once the
// first signal came (or its client's input ended): every stage of the
// staged shutdown, plus a grace for the front end's own output.
func (l *Lifecycle) Bound() time.Duration { return (ShutdownStages + 1) * l.grace }

// Attach passes the front end's signals to ch, a session's Signals, until
// detach is called. A session attached after signals came gets as many at
// once.
func (l *Lifecycle) Attach(ch chan os.Signal) (detach func()) {
	l.mu.Lock()
	l.sessions[ch] = struct{}{}
	for range min(l.signals, 3) {
		select {
		case ch <- syscall.SIGTERM:
		default:
		}
	}
	l.mu.Unlock()
	return func() {
		l.mu.Lock()
		delete(l.sessions, ch)
		l.mu.Unlock()
	}
}

// Signal passes sig to every session; the first closes Ending.
func (l *Lifecycle) Signal(sig os.Signal) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.signals++
	if l.signals == 1 {
		close(l.ending)
	}
	for ch := range l.sessions {
		select {
		case ch <- sig:
		default:
			// Three are queued already: the session is being killed.
		}
	}
}

// Ending is closed by the first signal.
func (l *Lifecycle) Ending() <-chan struct{} { return l.ending }

// Signals is how many signals came.
func (l *Lifecycle) Signals() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.signals
}

// Notify routes SIGINT, SIGTERM and SIGHUP to Signal until stop is
// called. SIGPIPE is handled too, and dropped: a client that closed the
// front end's stdout makes a write fail (the front end then ends as for
// a client gone), rather than killing agentjq under its sessions. (It is
// handled, not ignored: an ignored SIGPIPE would stay ignored in the
// agents.)
func (l *Lifecycle) Notify() (stop func()) {
	ch := make(chan os.Signal, 4)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGPIPE)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case sig := <-ch:
				if sig != syscall.SIGPIPE {
					l.Signal(sig)
				}
			case <-done:
				return
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			signal.Stop(ch)
			close(done)
		})
	}
}

// WaitBounded waits for done, at most d; it reports whether done came.
func WaitBounded(done <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}

// PeerWriter is a front end's own output to its client (acp's stdout,
// serve --stdio's): a Write waits for room while the client reads, so a
// fast producer is held back by a slow reader, but a client that takes
// nothing for a grace is abandoned: the Write fails, and so does every
// later one. Close writes out what is queued, as long as the client keeps
// reading, and abandons it after a grace without progress.
type PeerWriter struct {
	q     *asyncq.Writer
	grace time.Duration
}

// peerQueue is how much a PeerWriter holds before a Write waits.
const peerQueue = 4 << 20

// NewPeerWriter writes to w, abandoning a reader stalled for grace.
func NewPeerWriter(w io.Writer, grace time.Duration) *PeerWriter {
	if grace <= 0 {
		grace = 5 * time.Second
	}
	return &PeerWriter{q: asyncq.NewWriter(w, asyncq.WriterOptions{Limit: peerQueue}), grace: grace}
}

// Write queues a copy of b.
func (p *PeerWriter) Write(b []byte) (int, error) {
	if !p.q.WaitRoom(len(b), p.grace, nil) || !p.q.Put(nil, append([]byte(nil), b...)) {
		return 0, io.ErrClosedPipe
	}
	return len(b), nil
}

// Abandoned reports whether the reader was given up on (or went away).
func (p *PeerWriter) Abandoned() bool { return p.q.IsClosed() }

// Close writes out what is queued and stops; it reports the bytes given
// up on.
func (p *PeerWriter) Close() int { return p.q.Drain(p.grace, p.grace) }
