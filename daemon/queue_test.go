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
	t    *testing.T
	conn net.Conn
	done chan struct{}

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

func connectCounting(t *testing.T, srv *Server) *countingClient {
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

func queueServer(t *testing.T, scenario string, opts Options) *Server {
	if testing.Short() {
		t.Skip("-short")
	}
	self, _ := os.Executable()
	opts.AgentBin, opts.Env = self, append(os.Environ(), fakeagent.Scenario+"="+scenario)
	return offlineServer(t, opts)
}

func startSubscribed(t *testing.T, srv *Server, clients []*countingClient) string {
	t.Helper()
	var cr CreateResult
	clients[0].call("session.create", CreateParams{Workdir: t.TempDir()}, &cr)
	zero := int64(0)
	for _, c := range clients {
		c.call("session.subscribe", SubscribeParams{SessionID: cr.SessionID, AfterSeq: &zero}, nil)
	}
	return cr.SessionID
}

// TestBurstKeepsReadingSubscribers: 50 subscribers that read through a
// 3,000-line burst (about 6,000 events to each: more than the old queue
// of 4,096 messages held) all get every event, none is dropped.
func TestBurstKeepsReadingSubscribers(t *testing.T) {
	srv := queueServer(t, "burst-exit:3000:100", Options{})
	clients := make([]*countingClient, 50)
	for i := range clients {
		clients[i] = connectCounting(t, srv)
	}
	sid := startSubscribed(t, srv, clients)
	clients[0].call("session.prompt", PromptParams{SessionID: sid, Text: "go"}, nil)
	s, _ := srv.session(sid)
	deadline := time.Now().Add(120 * time.Second)
	for i, c := range clients {
		for {
			c.mu.Lock()
			ended, dropped, n := c.ended, c.disconnect != nil, c.n
			c.mu.Unlock()
			if ended || dropped {
				break
			}
			select {
			case <-c.done:
				t.Fatalf("client %d was disconnected after %d events", i, n)
			case <-time.After(20 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				t.Fatalf("client %d has %d events of %d, no end", i, n, s.lastSeq())
			}
		}
		c.mu.Lock()
		if c.disconnect != nil || c.gap || int64(c.n) != s.lastSeq() {
			t.Errorf("client %d: %d events of %d, gap %v, dropped: %s", i, c.n, s.lastSeq(), c.gap, c.disconnect)
		}
		c.mu.Unlock()
	}
	t.Logf("%d events to each of %d subscribers, none dropped", s.lastSeq(), len(clients))
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
