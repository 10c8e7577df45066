package bridge

import (
	"sync"
	"time"
)

// OutputGate holds agentjq's stdout while a person answers a prompt on the
// terminal that stdout may be showing (spawn | filter --view): a line
// drawn by the viewer would land in the middle of the prompt. The prompter
// calls Hold before it draws and the release after the answer; the lines
// that come meanwhile wait in the stdout queue (and, when it is full, the
// agent waits).
type OutputGate struct {
	mu    sync.Mutex
	held  int
	open  chan struct{} // closed while not held
	flush func(deadline time.Time)
}

// NewOutputGate returns an open gate; pass it as Options.Gate.
func NewOutputGate() *OutputGate {
	g := &OutputGate{open: make(chan struct{})}
	close(g.open)
	return g
}

// gateSettle is how long Hold lets a viewer draw what stdout has written
// before the prompt is drawn.
const gateSettle = 50 * time.Millisecond

// Hold waits a moment for what stdout was already given to be written and
// shown, then holds further output until release is called.
func (g *OutputGate) Hold() (release func()) {
	g.mu.Lock()
	flush := g.flush
	g.mu.Unlock()
	if flush != nil {
		flush(time.Now().Add(200 * time.Millisecond))
		time.Sleep(gateSettle)
	}
	g.mu.Lock()
	if g.held == 0 {
		g.open = make(chan struct{})
	}
	g.held++
	g.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			g.mu.Lock()
			g.held--
			if g.held == 0 {
				close(g.open)
			}
			g.mu.Unlock()
		})
	}
}

// wait returns once the gate is open, or stop is closed.
func (g *OutputGate) wait(stop <-chan struct{}) {
	if g == nil {
		return
	}
	g.mu.Lock()
	open := g.open
	g.mu.Unlock()
	select {
	case <-open:
	case <-stop:
	}
}
