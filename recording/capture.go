package recording

import (
	"bytes"
	"time"

	"github.com/agentjq/agentjq/internal/protocol"
)

// FromCapture turns a raw capture (what a client wrote to the agent's
// stdin, what the agent wrote to stdout; no timing, no interleaving) into a
// recording, interleaving the two by protocol causality:
//   - a client initialize request goes first;
//   - another client control_request goes right before the agent's
//     control_response to it;
//   - a control_response goes right after the control_request it answers;
//   - the first user turn goes after the answers to the client's earlier
//     control requests (clients wait for initialize), the k-th after the
//     (k-1)-th result;
//
// and every inbound line keeps its order. Times are all zero.
func FromCapture(in, out []byte, h Header) []byte {
	ins, outs := splitLines(in), splitLines(out)
	outReq := map[string]int{}  // agent control_request id -> out index
	outResp := map[string]int{} // control_response id -> out index
	var results []int
	for i, l := range outs {
		env, err := protocol.DecodeEnvelope(l)
		if err != nil {
			continue
		}
		switch env.Type {
		case protocol.TypeControlRequest:
			outReq[env.RequestID] = i
		case protocol.TypeControlResp:
			outResp[env.ResponseID()] = i
		case protocol.TypeResult:
			results = append(results, i)
		}
	}
	if h.AgentVersion == "" {
		for _, l := range outs {
			if v := agentVersionOf(l); v != "" {
				h.AgentVersion = v
				break
			}
		}
	}
	if h.Agent == "" {
		h.Agent = "claude"
	}
	var buf bytes.Buffer
	zero := time.Unix(0, 0).UTC()
	if h.Started.IsZero() {
		h.Started = zero
	}
	w, _ := NewWriter(&buf, h, WriterOptions{Now: func() time.Time { return zero }})
	next := 0     // outs written so far
	prev := 0     // position of the previous inbound line
	turns := 0    // user turns placed so far
	answered := 0 // out position after the client's own requests were answered
	emitUpTo := func(n int) {
		for ; next < n && next < len(outs); next++ {
			w.Tap(protocol.DirOut, outs[next], 0)
		}
	}
	for _, l := range ins {
		pos := 0
		env, err := protocol.DecodeEnvelope(l)
		if err == nil {
			switch env.Type {
			case protocol.TypeControlResp:
				if i, ok := outReq[env.ResponseID()]; ok {
					pos = i + 1
				}
			case protocol.TypeControlRequest:
				if i, ok := outResp[env.RequestID]; ok {
					if env.ControlSubtype() != protocol.SubInitialize {
						pos = i
					}
					answered = max(answered, i+1)
				}
			case protocol.TypeUser:
				if turns == 0 {
					pos = answered
				} else if turns-1 < len(results) {
					pos = results[turns-1] + 1
				} else {
					pos = len(outs)
				}
				turns++
			}
		}
		pos = max(pos, prev)
		emitUpTo(pos)
		w.Tap(protocol.DirIn, l, 0)
		prev = pos
	}
	emitUpTo(len(outs))
	return buf.Bytes()
}

func splitLines(b []byte) [][]byte {
	var lines [][]byte
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		var l []byte
		if i < 0 {
			l, b = b, nil
		} else {
			l, b = b[:i], b[i+1:]
		}
		l = bytes.TrimRight(l, "\r")
		if len(bytes.TrimSpace(l)) > 0 {
			lines = append(lines, l)
		}
	}
	return lines
}
