package apistub

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"unicode/utf8"
)

// Token counts reported for every message: the same as in the captures, so
// that costs and usage in regenerated captures match.
const (
	inputTokens  = 12
	outputTokens = 7
)

// jsonChunk is the size of the input_json_delta pieces a big tool input is
// streamed in.
const jsonChunk = 256 << 10

// fullMessage is the non-streaming answer.
func fullMessage(id, model string, t Turn) map[string]any {
	return map[string]any{
		"id":            id,
		"type":          "message",
		"role":          "assistant",
		"model":         model,
		"content":       finalBlocks(t.Blocks),
		"stop_reason":   t.StopReason(),
		"stop_sequence": nil,
		"usage":         usage(t, outputTokens),
	}
}

// usage is a message's usage with output tokens out: the fixed input
// count and, for a turn with Cache, the cache tokens.
func usage(t Turn, out int) map[string]any {
	u := map[string]any{"input_tokens": inputTokens, "output_tokens": out}
	if c := t.Cache; c != nil {
		u["cache_creation_input_tokens"] = c.Write5m + c.Write1h
		u["cache_read_input_tokens"] = c.Read
		u["cache_creation"] = map[string]int{"ephemeral_5m_input_tokens": c.Write5m, "ephemeral_1h_input_tokens": c.Write1h}
	}
	return u
}

// finalBlocks renders blocks as a complete message holds them.
func finalBlocks(blocks []Block) []map[string]any {
	out := make([]map[string]any, 0, len(blocks))
	for _, b := range blocks {
		switch b.Type {
		case "text":
			out = append(out, map[string]any{"type": "text", "text": b.Text})
		case "thinking":
			out = append(out, map[string]any{"type": "thinking", "thinking": b.Thinking, "signature": b.Signature})
		case "tool_use":
			out = append(out, map[string]any{"type": "tool_use", "id": b.ID, "name": b.Name, "input": b.Input})
		}
	}
	return out
}

// writeStream answers as Server-Sent Events, the way the Messages API
// streams: message_start, per block content_block_start / _delta... /
// _stop, message_delta with the stop reason, message_stop.
func writeStream(ctx context.Context, w http.ResponseWriter, id, model string, t Turn) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("request-id", "req_apistub")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	send := func(event string, data any) bool {
		if ctx.Err() != nil {
			return false
		}
		b, err := json.Marshal(data)
		if err != nil {
			return false
		}
		if _, err := w.Write([]byte("event: " + event + "\ndata: ")); err != nil {
			return false
		}
		if _, err := w.Write(b); err != nil {
			return false
		}
		if _, err := w.Write([]byte("\n\n")); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return true
	}
	type obj = map[string]any
	if !send("message_start", obj{"type": "message_start", "message": obj{
		"id": id, "type": "message", "role": "assistant", "model": model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": usage(t, 1),
	}}) {
		return
	}
	for i, b := range t.Blocks {
		var start obj
		var deltas []obj
		switch b.Type {
		case "text":
			start = obj{"type": "text", "text": ""}
			for _, piece := range words(b.Text) {
				deltas = append(deltas, obj{"type": "text_delta", "text": piece})
			}
		case "thinking":
			start = obj{"type": "thinking", "thinking": "", "signature": ""}
			for _, piece := range words(b.Thinking) {
				deltas = append(deltas, obj{"type": "thinking_delta", "thinking": piece})
			}
			deltas = append(deltas, obj{"type": "signature_delta", "signature": b.Signature})
		case "tool_use":
			start = obj{"type": "tool_use", "id": b.ID, "name": b.Name, "input": obj{}}
			for _, piece := range chunks(string(b.Input), jsonChunk) {
				deltas = append(deltas, obj{"type": "input_json_delta", "partial_json": piece})
			}
		default:
			continue
		}
		if !send("content_block_start", obj{"type": "content_block_start", "index": i, "content_block": start}) {
			return
		}
		for _, d := range deltas {
			if !send("content_block_delta", obj{"type": "content_block_delta", "index": i, "delta": d}) {
				return
			}
		}
		if !send("content_block_stop", obj{"type": "content_block_stop", "index": i}) {
			return
		}
	}
	if !send("message_delta", obj{"type": "message_delta",
		"delta": obj{"stop_reason": t.StopReason(), "stop_sequence": nil},
		"usage": obj{"output_tokens": outputTokens}}) {
		return
	}
	send("message_stop", obj{"type": "message_stop"})
}

// words splits text before each space, as the captures' deltas are:
// "Hello", " from", " the"...
func words(s string) []string {
	if s == "" {
		return nil
	}
	var out []string
	for {
		i := strings.IndexByte(s[1:], ' ')
		if i < 0 {
			return append(out, s)
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
}

// chunks cuts s into pieces of at most n bytes, on rune boundaries.
func chunks(s string, n int) []string {
	var out []string
	for len(s) > n {
		k := n
		for k > 0 && !utf8.RuneStart(s[k]) {
			k--
		}
		if k == 0 {
			k = n
		}
		out = append(out, s[:k])
		s = s[k:]
	}
	return append(out, s)
}
