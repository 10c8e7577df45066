// Package replay plays recordings back: to stdout (replay), as a fake
// agent that checks what its client sends (replay --as-agent), with
// injected faults, and against the agent installed now to see whether
// its output drifted (replay --check).
package replay

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/recording"
)

// PlayOptions configure Play.
type PlayOptions struct {
	// Speed 0 writes as fast as possible; 1 keeps the recorded timing; 2
	// plays twice as fast.
	Speed float64
	// IdleLimit caps every recorded pause (0: no cap).
	IdleLimit time.Duration
	// AfterSeq skips entries up to and including this sequence number.
	AfterSeq int64
	// Stderr, if set, receives the agent's recorded stderr lines.
	Stderr io.Writer
	// Faults to inject.
	Faults []Fault
	// Warn receives warnings (a truncated last line).
	Warn func(error)
	// Lenient reads a damaged recording as far as it goes
	// (recording.Lines.Lenient).
	Lenient bool
	// Sleep waits d or until ctx ends; nil is a real timer. Tests fake it.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now is the clock that goes with Sleep; nil is time.Now.
	Now func() time.Time
}

func (o *PlayOptions) defaults() {
	if o.Sleep == nil {
		o.Sleep = sleepCtx
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// pacer turns recorded times into waits.
type pacer struct {
	speed   float64
	idle    time.Duration
	started bool
	lastMS  float64
	virtual time.Duration // recorded time played so far, after the idle cap
	start   time.Time
}

// wait returns how long to wait before an entry recorded at ms.
func (p *pacer) wait(now time.Time, ms float64) time.Duration {
	if p.speed <= 0 {
		return 0
	}
	if !p.started {
		p.started, p.lastMS, p.start = true, ms, now
		return 0
	}
	gap := time.Duration((ms - p.lastMS) * float64(time.Millisecond))
	p.lastMS = ms
	if gap < 0 {
		gap = 0
	}
	if p.idle > 0 && gap > p.idle {
		gap = p.idle
	}
	p.virtual += gap
	due := p.start.Add(time.Duration(float64(p.virtual) / p.speed))
	return due.Sub(now)
}

// Play writes a recording's agent output (direction out) to w byte for
// byte, one line each, optionally paced by the recorded times. name names
// the recording in errors (FILE:LINE).
func Play(ctx context.Context, r io.Reader, name string, w io.Writer, opts PlayOptions) error {
	opts.defaults()
	rr, _, err := recording.NewReader(r, name)
	if err != nil {
		return err
	}
	rr.SetWarn(opts.Warn)
	rr.Lines.Lenient = opts.Lenient
	bw := bufio.NewWriterSize(w, 256<<10)
	out := &emitter{w: bw, faults: opts.Faults, sleep: opts.Sleep}
	p := pacer{speed: opts.Speed, idle: opts.IdleLimit}
	paced := opts.Speed > 0 || len(opts.Faults) > 0
	for {
		ln, err := rr.Lines.Next()
		e := ln.Entry // aliases the reader's buffer until the next line
		if err == io.EOF {
			break
		}
		if err != nil {
			_ = bw.Flush()
			return err
		}
		if e.Seq <= opts.AfterSeq || (e.Dir != protocol.DirOut && (e.Dir != protocol.DirErr || opts.Stderr == nil)) {
			continue
		}
		if paced {
			if d := p.wait(opts.Now(), e.MS); d > 0 {
				if err := bw.Flush(); err != nil {
					return err
				}
				if err := opts.Sleep(ctx, d); err != nil {
					return err
				}
			}
		}
		if e.Dir == protocol.DirErr {
			if err := bw.Flush(); err != nil {
				return err
			}
			if _, err := io.WriteString(opts.Stderr, e.Text+"\n"); err != nil {
				return err
			}
		} else if err := out.write(ctx, e); err != nil {
			_ = bw.Flush()
			return err
		}
		if paced {
			if err := bw.Flush(); err != nil {
				return err
			}
		}
	}
	return bw.Flush()
}

// emitter writes agent lines, injecting faults.
type emitter struct {
	w      *bufio.Writer
	faults []Fault
	sleep  func(context.Context, time.Duration) error
	flush  bool // flush after every line (a live client is reading)
}

// write writes e's payload and a newline. rewrite, when set, may change
// the payload (request_id rewriting).
func (em *emitter) write(ctx context.Context, e recording.Entry) error {
	return em.writeLine(ctx, e, nil)
}

func (em *emitter) writeLine(ctx context.Context, e recording.Entry, payload []byte) error {
	if payload == nil {
		payload = e.Msg
		if payload == nil {
			payload = []byte(e.Text)
		}
	}
	var err error
	if len(em.faults) > 0 {
		for _, f := range faultsFor(em.faults, e) {
			switch f.Kind {
			case FaultDelay:
				if err := em.w.Flush(); err != nil {
					return err
				}
				if err := em.sleep(ctx, f.Delay); err != nil {
					return err
				}
			case FaultGarbage:
				_, err = em.w.WriteString("this is not JSON {\"type\":\n")
			case FaultOversize:
				err = writeOversize(em.w, f.Size)
			case FaultTruncate:
				payload = payload[:len(payload)/2]
			case FaultDrop:
				return nil
			case FaultExit:
				_ = em.w.Flush()
				return &ExitError{Code: f.Code, Reason: fmt.Sprintf("injected exit %d before seq %d", f.Code, e.Seq)}
			}
			if err != nil {
				return err
			}
		}
	}
	if _, err := em.w.Write(payload); err != nil {
		return err
	}
	if err := em.w.WriteByte('\n'); err != nil {
		return err
	}
	if em.flush {
		return em.w.Flush()
	}
	return nil
}

func writeOversize(w *bufio.Writer, size int) error {
	const head = `{"type":"agentjq_injected_oversize","padding":"`
	if _, err := w.WriteString(head); err != nil {
		return err
	}
	chunk := strings.Repeat("x", 64<<10)
	for n := max(size-len(head)-3, 0); n > 0; {
		k := min(n, len(chunk))
		if _, err := w.WriteString(chunk[:k]); err != nil {
			return err
		}
		n -= k
	}
	_, err := w.WriteString("\"}\n")
	return err
}
