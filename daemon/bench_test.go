package daemon

import (
	"encoding/json"
	"os"
	"runtime"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/agentjq/agentjq/internal/testkit/fakeagent"
)

// tickerServer runs the fake agent's ticker scenario: N time-stamped
// assistant lines EVERY apart.
func tickerServer(t *testing.T, scenario string) *Server {
	if testing.Short() {
		t.Skip("-short")
	}
	self, _ := os.Executable()
	return offlineServer(t, Options{AgentBin: self, Env: append(os.Environ(), fakeagent.Scenario+"="+scenario)})
}

// Event delivery latency, from the agent writing a line to a client
// holding its agent.line event (through the bridge, the recording's
// synchronous write, and the socket): the median must stay under 2 ms.
func TestDeliveryLatency(t *testing.T) {
	const n = 2000
	srv := tickerServer(t, "ticker:2000:500us")
	c := connectWith(t, srv, true, &traffic{off: true})
	c.hello(srv.Token())
	var mu sync.Mutex
	var lat []time.Duration
	done := make(chan struct{})
	wd := t.TempDir()
	var cr CreateResult
	c.must("session.create", CreateParams{Workdir: wd}, &cr)
	zero := int64(0)
	c.must("session.subscribe", SubscribeParams{SessionID: cr.SessionID, AfterSeq: &zero, Kinds: []string{"agent.line", "turn.done"}}, nil)
	go func() {
		for {
			c.waitFor("events", 60*time.Second, func() bool { return hasKind(c.events[cr.SessionID], "turn.done", 1) })
			close(done)
			return
		}
	}()
	c.must("session.prompt", PromptParams{SessionID: cr.SessionID, Text: "go"}, nil)
	<-done
	c.mu.Lock()
	for _, e := range c.events[cr.SessionID] {
		if e.Kind != "agent.line" {
			continue
		}
		var p struct {
			Line struct {
				T int64 `json:"t"`
			} `json:"line"`
		}
		if json.Unmarshal(e.Payload, &p) == nil && p.Line.T > 0 {
			lat = append(lat, e.receivedAt.Sub(time.Unix(0, p.Line.T)))
		}
	}
	c.mu.Unlock()
	mu.Lock()
	defer mu.Unlock()
	if len(lat) != n {
		t.Fatalf("%d stamped lines received, want %d", len(lat), n)
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	med, p99 := lat[len(lat)/2], lat[len(lat)*99/100]
	t.Logf("agent line -> client: median %v, p99 %v, max %v (%d lines)", med, p99, lat[len(lat)-1], len(lat))
	if med > 2*time.Millisecond {
		t.Errorf("median delivery latency %v, want under 2ms", med)
	}
}

// 1,000 agent lines a second (2,000 events: agent.line and message.done)
// to 10 clients for 8 s: every client gets every event, and the daemon's
// heap stays flat (no growth with the number of events sent).
func TestTenClientsFlatMemory(t *testing.T) {
	srv := tickerServer(t, "ticker:8000:1ms")
	clients := make([]*testClient, 10)
	for i := range clients {
		clients[i] = connectWith(t, srv, true, &traffic{off: true})
		clients[i].hello(srv.Token())
	}
	wd := t.TempDir()
	var cr CreateResult
	clients[0].must("session.create", CreateParams{Workdir: wd}, &cr)
	sid := cr.SessionID
	zero := int64(0)
	for _, c := range clients {
		c.must("session.subscribe", SubscribeParams{SessionID: sid, AfterSeq: &zero}, nil)
	}
	clients[0].must("session.prompt", PromptParams{SessionID: sid, Text: "go"}, nil)
	var heaps []uint64
	start := time.Now()
	for !hasKindLocked(clients[0], sid, "turn.done") {
		time.Sleep(time.Second)
		// The test clients keep every event (in this process), so measure
		// the daemon's side only: drop what the clients hold first.
		for _, c := range clients {
			c.mu.Lock()
			n := len(c.events[sid])
			c.counts += n
			if n > 0 {
				c.lastSeq = c.events[sid][n-1].Seq
			}
			c.events[sid] = c.events[sid][:0:0]
			c.mu.Unlock()
		}
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		heaps = append(heaps, ms.HeapInuse)
		if time.Since(start) > 60*time.Second {
			t.Fatal("the ticker did not finish")
		}
	}
	elapsed := time.Since(start)
	s, _ := srv.session(sid)
	for i, c := range clients {
		c.waitFor("all events", 10*time.Second, func() bool {
			n := len(c.events[sid])
			return (n > 0 && c.events[sid][n-1].Seq >= s.lastSeq()) || c.lastSeq >= s.lastSeq()
		})
		c.mu.Lock()
		total := c.counts + len(c.events[sid])
		c.mu.Unlock()
		if int64(total) != s.lastSeq() {
			t.Errorf("client %d got %d events, the session has %d", i, total, s.lastSeq())
		}
	}
	// Once every client has every event (and the test has dropped its
	// own copies), what the daemon holds must be what it held at the
	// start: a leak keeps what it sent. During the run the heap may rise:
	// a client that falls behind on a busy machine (the race detector,
	// other packages' tests beside this one) fills its bounded queue,
	// which drains again.
	for _, c := range clients {
		c.mu.Lock()
		c.events[sid] = c.events[sid][:0:0]
		c.mu.Unlock()
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("%d events in %v to 10 clients (%.0f events/s per client); heap in use each second (MiB): %v, after: %d",
		s.lastSeq(), elapsed.Round(time.Millisecond), float64(s.lastSeq())/elapsed.Seconds(), mib(heaps), ms.HeapInuse>>20)
	if len(heaps) >= 2 {
		if early := slices.Min(heaps[:2]); ms.HeapInuse > early+16<<20 {
			t.Errorf("heap grew from %d MiB to %d MiB once every client had every event", early>>20, ms.HeapInuse>>20)
		}
	}
}

func mib(h []uint64) []uint64 {
	out := make([]uint64, len(h))
	for i, v := range h {
		out[i] = v >> 20
	}
	return out
}

func hasKindLocked(c *testClient, sid, kind string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sawTurnDone || hasKind(c.events[sid], kind, 1)
}
