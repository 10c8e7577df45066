package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/agentjq/agentjq/internal/testkit/fakeagent"
	"github.com/agentjq/agentjq/jsonrpc"
)

// countingClient keeps only what the queue tests judge: how many events
// it got, in order, and whether it was told it was dropped. It reads its
// connection itself, as fast as it can unless its gate is closed (a
// jsonrpc.Conn would queue what its handler has not taken, and drop the
// daemon itself past 4,096 messages on a busy machine).
type countingClient struct {
	t     testing.TB
	conn  net.Conn
	done  chan struct{}
	pause time.Duration // before each message read: a slow reader

	gateMu sync.Mutex
	gate   chan struct{} // closed while reading

	mu         sync.Mutex
	nextID     int
	waiting    map[string]chan jsonrpc.Message
	n          int
	last       int64
	gap        bool
	ended      bool // session.ended
	turnDone   bool
	disconnect json.RawMessage
}

func connectCounting(t testing.TB, srv *Server) *countingClient {
	t.Helper()
	x, y := net.Pipe()
	go srv.ServeStream(context.Background(), jsonrpc.NewLineStream(x, x, x), true)
	cc := &countingClient{t: t, conn: y, done: make(chan struct{}), gate: make(chan struct{}), waiting: map[string]chan jsonrpc.Message{}}
	close(cc.gate)
	go cc.read()
	t.Cleanup(func() { y.Close() })
	cc.call("system.hello", HelloParams{Token: srv.Token(), ProtocolVersion: ProtocolVersion}, nil)
	return cc
}

func (cc *countingClient) read() {
	defer close(cc.done)
	r := jsonrpc.NewLineStream(cc.conn, nil, nil)
	for {
		cc.gateMu.Lock()
		gate := cc.gate
		cc.gateMu.Unlock()
		<-gate
		if cc.pause > 0 {
			time.Sleep(cc.pause)
		}
		b, err := r.Read(context.Background())
		if err != nil {
			return
		}
		var m jsonrpc.Message
		if json.Unmarshal(b, &m) != nil {
			continue
		}
		cc.mu.Lock()
		switch m.Method {
		case "session.event":
			var ev Event
			if json.Unmarshal(m.Params, &ev) == nil {
				cc.gap = cc.gap || ev.Seq != cc.last+1
				cc.n++
				cc.last = ev.Seq
				cc.ended = cc.ended || ev.Kind == "session.ended"
				cc.turnDone = cc.turnDone || ev.Kind == "turn.done"
			}
		case "system.disconnect":
			cc.disconnect = append(json.RawMessage(nil), m.Params...)
		case "":
			if ch := cc.waiting[m.ID.String()]; ch != nil {
				ch <- m
			}
		}
		cc.mu.Unlock()
	}
}

func (cc *countingClient) call(method string, params, result any) {
	cc.t.Helper()
	cc.mu.Lock()
	cc.nextID++
	id := jsonrpc.ID(fmt.Sprint(cc.nextID))
	ch := make(chan jsonrpc.Message, 1)
	cc.waiting[id.String()] = ch
	cc.mu.Unlock()
	p, _ := json.Marshal(params)
	b, _ := json.Marshal(jsonrpc.Message{JSONRPC: jsonrpc.Version, ID: id, Method: method, Params: p})
	if _, err := cc.conn.Write(append(b, '\n')); err != nil {
		cc.t.Fatalf("%s: %v", method, err)
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			cc.t.Fatalf("%s: %v", method, m.Error)
		}
		if result != nil {
			json.Unmarshal(m.Result, result)
		}
	case <-time.After(60 * time.Second):
		cc.t.Fatalf("%s: no response", method)
	}
}

func (cc *countingClient) stop() {
	cc.gateMu.Lock()
	cc.gate = make(chan struct{})
	cc.gateMu.Unlock()
}

func (cc *countingClient) resume() {
	cc.gateMu.Lock()
	close(cc.gate)
	cc.gateMu.Unlock()
}

func queueServer(t testing.TB, scenario string, opts Options) *Server {
	if testing.Short() {
		t.Skip("-short")
	}
	self, _ := os.Executable()
	opts.AgentBin, opts.Env = self, append(os.Environ(), fakeagent.Scenario+"="+scenario)
	return offlineServer(t, opts)
}

func startSubscribed(t testing.TB, srv *Server, clients []*countingClient) string {
	t.Helper()
	var cr CreateResult
	clients[0].call("session.create", CreateParams{Workdir: t.TempDir()}, &cr)
	zero := int64(0)
	for _, c := range clients {
		c.call("session.subscribe", SubscribeParams{SessionID: cr.SessionID, AfterSeq: &zero}, nil)
	}
	return cr.SessionID
}

// TestBurstKeepsReadingSubscribers: subscribers of a 3,000-line burst
// (about 6,000 events to each: more than the old queue of 4,096 messages
// held) all get every event, in order, and none is dropped; the session
// reads its agent to the end while half of them take nothing (it never
// waits for a subscriber). Nothing here depends on the machine's speed:
// the stall bound is out of the way, and the waits end on progress.
func TestBurstKeepsReadingSubscribers(t *testing.T) {
	srv := queueServer(t, "burst-exit:3000:100", Options{StallTimeout: time.Hour})
	clients := make([]*countingClient, 8)
	for i := range clients {
		clients[i] = connectCounting(t, srv)
	}
	sid := startSubscribed(t, srv, clients)
	paused := clients[len(clients)/2:]
	for _, c := range paused {
		c.stop()
	}
	clients[0].call("session.prompt", PromptParams{SessionID: sid, Text: "go"}, nil)
	s, _ := srv.session(sid)
	waitProgress(t, "the session's end", func() (int64, bool) {
		return s.lastSeq(), s.ended()
	})
	for _, c := range paused {
		c.resume()
	}
	for i, c := range clients {
		waitProgress(t, fmt.Sprintf("client %d's events", i), func() (int64, bool) {
			c.mu.Lock()
			defer c.mu.Unlock()
			select {
			case <-c.done:
				t.Fatalf("client %d was disconnected after %d events", i, c.n)
			default:
			}
			return int64(c.n), c.ended || c.disconnect != nil
		})
		c.mu.Lock()
		if c.disconnect != nil || c.gap || int64(c.n) != s.lastSeq() {
			t.Errorf("client %d: %d events of %d, gap %v, dropped: %s", i, c.n, s.lastSeq(), c.gap, c.disconnect)
		}
		c.mu.Unlock()
	}
	t.Logf("%d events to each of %d subscribers, none dropped", s.lastSeq(), len(clients))
}

// waitProgress polls state until it is done. Its bound is the test
// binary's own (-timeout): it fails, saying how far it got, only when
// that is near. A slow machine makes it wait longer, never fail.
func waitProgress(t *testing.T, what string, state func() (progress int64, done bool)) {
	t.Helper()
	deadline, bounded := t.Deadline()
	for {
		p, done := state()
		if done {
			return
		}
		if bounded && time.Until(deadline) < 30*time.Second {
			t.Fatalf("%s: not done as the test run's time runs out (at %d)", what, p)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestStalledSubscriberDropped: a subscriber that stops reading is dropped
// once it has taken nothing for the stall bound, with system.disconnect
// (code overloaded, the last seq it was sent); one that reads on beside
// it keeps every event, and the session never waits for either.
func TestStalledSubscriberDropped(t *testing.T) {
	srv := queueServer(t, "ticker:2000:1ms", Options{StallTimeout: 300 * time.Millisecond})
	srv.noticeWait = time.Minute // the stalled client reads again only once it is dropped
	reading, stalled := connectCounting(t, srv), connectCounting(t, srv)
	sid := startSubscribed(t, srv, []*countingClient{reading, stalled})
	stalled.stop()
	reading.call("session.prompt", PromptParams{SessionID: sid, Text: "go"}, nil)
	dropped := func() bool {
		srv.mu.Lock()
		defer srv.mu.Unlock()
		for c := range srv.clients {
			if c.dropped.Load() {
				return true
			}
		}
		return false
	}
	for deadline := time.Now().Add(60 * time.Second); !dropped(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the stalled subscriber was never dropped")
		}
	}
	stalled.resume()
	select {
	case <-stalled.done:
	case <-time.After(60 * time.Second):
		t.Fatal("the dropped subscriber's connection was not closed")
	}
	stalled.mu.Lock()
	var d DisconnectParams
	// lastSeq is the last event written in full when it was dropped:
	// never one the client did not get.
	if err := json.Unmarshal(stalled.disconnect, &d); err != nil || d.Code != CodeOverloaded || d.LastSeq[sid] > stalled.last {
		t.Errorf("the stalled subscriber's notice: %s (err %v), want code %s and lastSeq at most %d", stalled.disconnect, err, CodeOverloaded, stalled.last)
	}
	stalled.mu.Unlock()
	s, _ := srv.session(sid)
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		reading.mu.Lock()
		done := reading.turnDone
		reading.mu.Unlock()
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the turn did not end")
		}
	}
	reading.mu.Lock()
	defer reading.mu.Unlock()
	if reading.disconnect != nil || reading.gap || int64(reading.n) != s.lastSeq() {
		t.Errorf("the reading subscriber: %d events of %d, gap %v, dropped: %s", reading.n, s.lastSeq(), reading.gap, reading.disconnect)
	}
}

// BenchmarkQueueReaders measures the queues with three subscribers of one
// session of 12,000 agent lines written 500µs apart (at least; 24,000
// events): one pausing 400µs before each message it reads, one 600µs (it
// falls behind while the agent writes), and one that stops reading at
// once. The two readers must keep every event (dropped 0); the stalled
// one must be dropped after the stall bound (10 s), and get its notice
// once it reads again. Reported per subscriber: events received, dropped
// (1 or 0), the most its queue held, and for the stalled one the notice
// (1 or 0) and the seconds from the prompt until it was dropped.
func BenchmarkQueueReaders(b *testing.B) {
	for range b.N {
		srv := queueServer(b, "ticker:12000:500us", Options{})
		// The stalled client reads again once dropped: it then gets the
		// notice (a client that never reads again is closed after 2s).
		srv.noticeWait = time.Minute
		fast, slow, stalled := connectCounting(b, srv), connectCounting(b, srv), connectCounting(b, srv)
		fast.pause, slow.pause = 400*time.Microsecond, 600*time.Microsecond
		sid := startSubscribed(b, srv, []*countingClient{fast, slow, stalled})
		stalled.stop()
		server := func(i int) *client { // the daemon's side of client i, by creation order
			srv.mu.Lock()
			defer srv.mu.Unlock()
			for c := range srv.clients {
				if c.id == fmt.Sprintf("client-%d", i) {
					return c
				}
			}
			return nil
		}
		srv.mu.Lock()
		first := srv.nextCli - 2 // fast, slow, stalled were the last three
		srv.mu.Unlock()
		start := time.Now()
		fast.call("session.prompt", PromptParams{SessionID: sid, Text: "go"}, nil)
		maxq := [3]int{}
		var droppedAt time.Duration
		for {
			done := true
			for i, cc := range []*countingClient{fast, slow} {
				cc.mu.Lock()
				done = done && (cc.turnDone || cc.disconnect != nil)
				cc.mu.Unlock()
				if c := server(first + i); c != nil {
					maxq[i] = max(maxq[i], c.queued())
				}
			}
			if c := server(first + 2); c != nil {
				maxq[2] = max(maxq[2], c.queued())
				if droppedAt == 0 && c.dropped.Load() {
					droppedAt = time.Since(start)
					stalled.resume()
				}
			}
			if done || time.Since(start) > 120*time.Second {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		if droppedAt == 0 {
			b.Error("the stalled subscriber was not dropped")
			stalled.resume()
		}
		<-stalled.done
		s, _ := srv.session(sid)
		for i, cc := range []*countingClient{fast, slow, stalled} {
			name := []string{"reader400us", "reader600us", "stalled"}[i]
			cc.mu.Lock()
			dropped, notice := 0.0, 0.0
			if cc.disconnect != nil {
				dropped, notice = 1, 1
			}
			if i == 2 && droppedAt > 0 {
				dropped = 1
			}
			b.ReportMetric(float64(cc.n), name+"-events")
			b.ReportMetric(dropped, name+"-dropped")
			if i == 2 {
				b.ReportMetric(notice, name+"-notice")
			}
			b.ReportMetric(float64(maxq[i])/(1<<20), name+"-max-queued-MiB")
			cc.mu.Unlock()
		}
		b.ReportMetric(droppedAt.Seconds(), "stalled-dropped-after-s")
		b.ReportMetric(float64(s.lastSeq()), "session-events")
	}
}
