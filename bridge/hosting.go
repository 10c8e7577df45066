package bridge

import "time"

// stdinSettle is how long the agent must have been quiet before its stdin
// is closed at the end of a session that hosts hooks or MCP servers: the
// agent sends control requests right after a result or an initialize
// response (notifications/initialized, tools/list, Stop hooks), and one
// sent to a closed stdin is lost ("Stream closed").
const stdinSettle = 500 * time.Millisecond

// settledLocked reports whether stdin may close as far as KeepStdinOpen is
// concerned; when not yet, it arranges to be asked again. s.mu is held.
func (s *session) settledLocked() bool {
	if !s.opts.KeepStdinOpen {
		return true
	}
	wait := min(stdinSettle, s.opts.Grace) - time.Since(s.lastOutput)
	if wait <= 0 {
		return true
	}
	time.AfterFunc(wait+time.Millisecond, s.notify)
	return false
}

// runAtEnd runs Options.AtEnd once: hosted servers and their processes go
// before the exit event is written.
func (s *session) runAtEnd() {
	s.atEndOnce.Do(func() {
		for _, f := range s.opts.AtEnd {
			f()
		}
	})
}
