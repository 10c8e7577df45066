package daemon

import "testing"

// TestShutdownIsAnswered: system.shutdown's caller gets its answer before
// the daemon closes the connection, however quick the shutdown (no
// sessions: nothing to wait for). The connection used to be closed by the
// shutdown while the answer was still being written.
func TestShutdownIsAnswered(t *testing.T) {
	t.Parallel()
	for i := range 50 {
		srv := offlineServer(t, Options{})
		c := connect(t, srv, false)
		if err := c.call("system.shutdown", nil, nil); err != nil {
			t.Fatalf("round %d: system.shutdown: %v", i, err)
		}
	}
}
