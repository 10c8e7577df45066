package protocol

import (
	"encoding/json"
	"strings"
)

// Message is the message of an assistant or user line: the Messages API's
// message as the CLI passes it on. Content stays raw because it is either
// a string (a prompt) or an array of blocks.
type Message struct {
	ID      string          `json:"id"`
	Role    string          `json:"role"`
	Model   string          `json:"model"`
	Content json.RawMessage `json:"content"`
}

// Block is one content block of a message (text, thinking, tool_use,
// tool_result, or a type agentjq only names). Fields another type does not
// use stay empty; a tool_result's Content is a string or an array of
// blocks, like a message's.
type Block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// StreamEvent is the event of a stream_event line (a partial message,
// with --include-partial-messages): message_start, content_block_start,
// content_block_delta, content_block_stop, message_stop.
type StreamEvent struct {
	Type    string `json:"type"`
	Index   int    `json:"index"`
	Message struct {
		ID string `json:"id"`
	} `json:"message"`
	ContentBlock Block `json:"content_block"`
	Delta        struct {
		Type     string `json:"type"` // text_delta, thinking_delta, input_json_delta
		Text     string `json:"text"`
		Thinking string `json:"thinking"`
	} `json:"delta"`
}

// ContentText flattens content (a message's or a tool result's): a string
// is itself, an array is the text of its text blocks joined with
// newlines. A block of another type (an image) is left out, or stands as
// "[type]" when marked is set, for a reader who should know it was there.
// A field of an unexpected type empties that field, not the whole text.
func ContentText(content json.RawMessage, marked bool) string {
	var s string
	if json.Unmarshal(content, &s) == nil {
		return s
	}
	var blocks []Block
	_ = json.Unmarshal(content, &blocks)
	var parts []string
	for _, b := range blocks {
		switch {
		case b.Type == "text":
			parts = append(parts, b.Text)
		case marked:
			parts = append(parts, "["+b.Type+"]")
		}
	}
	return strings.Join(parts, "\n")
}
