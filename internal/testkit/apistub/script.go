package apistub

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Turn is the scripted answer to one Messages API request.
type Turn struct {
	// Delay is waited before answering (ends early when the client goes
	// away or the server closes).
	Delay time.Duration
	// Status, when not 0 or 200, makes the answer an API error with the
	// Anthropic error body built from ErrorType and ErrorMessage.
	Status       int
	ErrorType    string
	ErrorMessage string
	// Blocks are the content blocks of the assistant message: text,
	// thinking (with Signature) and tool_use (ID, Name, Input).
	Blocks []Block
	// Cache, when set, adds prompt-cache tokens to the message's usage.
	Cache *CacheUsage
}

// CacheUsage is the prompt-cache part of a message's usage: tokens
// written to the cache (5-minute and 1-hour lifetimes) and read from it.
type CacheUsage struct {
	Write5m, Write1h, Read int
}

// StopReason is "tool_use" when the turn calls a tool, else "end_turn".
func (t Turn) StopReason() string {
	for _, b := range t.Blocks {
		if b.Type == "tool_use" {
			return "tool_use"
		}
	}
	return "end_turn"
}

// Conversation is what a script sees of a request.
type Conversation struct {
	// Prompt is the user text that picked the script (system reminders
	// removed).
	Prompt string
	// Step counts the model's messages since that prompt: 0 for the first
	// answer, 1 after the first tool round, and so on.
	Step int
	// Cwd is the working directory the CLI names in its system prompt, or
	// "" when none was found.
	Cwd string
	// Results are the tool results received since the prompt, in order.
	Results []NamedResult
	// taken holds the tool_use ids already in the conversation.
	taken map[string]bool
}

// NamedResult is a tool result paired with the name of the tool called.
type NamedResult struct {
	Name string
	ToolResult
}

// Trigger is one row of the scenario table.
type Trigger struct {
	// Word is matched as a whole, case-sensitive word of the prompt.
	Word string
	// Doc says what the model does, for the package documentation.
	Doc string
	run func(c *Conversation, args []string) Turn
}

// Triggers is the scenario table, in matching order: the first word found
// in the prompt wins. Generic TOOL/SAY/DELAY lines (see Reply) are checked
// before any of these.
var Triggers = []Trigger{
	{"HELLO", `text "Hello from the scripted model."`, func(*Conversation, []string) Turn { return say("Hello from the scripted model.") }},
	{"BIGWRITE", `Write <cwd>/big.txt with N MiB of "x" ("BIGWRITE 5"; default 3, at most 64), then "Big file written."`, bigWrite},
	{"WRITE", `text "I will write the file." + Write <cwd>/NAME.txt "NAME\n" ("WRITE apple"; default banana), then "The file is written."`, write},
	{"BASH", `Bash "echo hello-from-bash" (read-only: runs without asking), then "Bash ran."`, bash("toolu_b1", "echo hello-from-bash", "Print a greeting", "Bash ran.")},
	{"RMRF", `Bash "rm -rf /tmp/definitely-not-here" (asks), then "Tried to remove."`, bash("toolu_r1", "rm -rf /tmp/definitely-not-here", "Remove a folder", "Tried to remove.")},
	{"SLEEP", `Bash "sleep 20" (asks; for interrupt tests), then "Slept."`, bash("toolu_s1", "sleep 20", "Wait a while", "Slept.")},
	{"TOUCH", `Bash "touch <cwd>/touched.txt" (asks), then "Touched."`, touch},
	{"CHAIN", `Bash "echo one", Write <cwd>/two.txt "two\n", Read it, then "Chain complete."`, chain},
	{"LOOP", `Bash "echo loop-N" every round, forever (50 rounds at most; for max-turns)`, loop},
	{"ASKMULTI", `AskUserQuestion, one multi-select question (Apples/Pears/Plums), then "Noted your choices: <tool result>"`, askMulti},
	{"ASK", `AskUserQuestion "Do you prefer cats or dogs?" (Cats/Dogs), then "Noted your choice."`, ask},
	{"THINK", `thinking "Let me think about it." (signature "c2lnbmF0dXJl") + text "Thought it through."`, think},
	{"CACHED", `text "Hello from the cache." with 100 tokens written to the cache (5-minute), 50 (1-hour) and 200 read from it, besides the usual 12 in and 7 out`, cached},
	{"FAIL", `"FAIL400" (any 3-digit code): HTTP error with an Anthropic error body, message "scripted bad request"`, nil},
	{"PING", `mcp__probe__ping {"note":"hi"}, then "Ping answered."`, ping},
	{"AGENT", `Task (general-purpose, prompt "HELLO from the parent"), then "The helper finished."`, agent},
}

// maxLoop bounds the LOOP scenario so that a run without --max-turns ends.
const maxLoop = 50

// Reply picks the scripted answer for a request.
//
// The prompt is the latest user message with text that holds a directive
// or a trigger word; the script runs from there, one model message per
// request. Directives, one per line, anywhere in the prompt:
//
//	TOOL <Name> <json input>  one tool_use per model round, in order
//	SAY <text>                the final text (default "Done.")
//	DELAY <duration>          wait before every answer (Go duration: 500ms, 2s)
//
// "{{cwd}}" in a TOOL input is replaced by the session's working
// directory. After the last tool round the final text is the SAY text
// followed by one line per tool result received:
// "[N] <Name> ok|error: <result text, cut at 500 bytes>".
// Without directives the first trigger word of Triggers found in the
// prompt picks a fixed scenario; with neither the answer is "OK.".
func Reply(req *MessagesBody) Turn {
	c := analyse(req)
	if c == nil {
		return say("OK.")
	}
	if g, ok := parseGeneric(c.Prompt); ok {
		t := g.turn(c)
		t.Delay = g.delay
		return t
	}
	words := promptWords(c.Prompt)
	for _, tr := range Triggers {
		for i, w := range words {
			if tr.Word == "FAIL" {
				if code, ok := failCode(w); ok {
					return failTurn(code)
				}
				continue
			}
			if w == tr.Word {
				return tr.run(c, words[i+1:])
			}
		}
	}
	return say("OK.")
}

// analyse finds the prompt, the step and the tool results of a request.
func analyse(req *MessagesBody) *Conversation {
	anchor := -1
	var prompt string
	for i := len(req.Messages) - 1; i >= 0; i-- {
		m := req.Messages[i]
		if m.Role != "user" {
			continue
		}
		text := userText(m)
		if text == "" {
			continue
		}
		if _, ok := parseGeneric(text); ok || hasTrigger(text) {
			anchor, prompt = i, text
			break
		}
		if anchor < 0 && i == len(req.Messages)-1 {
			// A plain new prompt with no trigger: answer it as such,
			// unless it is a notification the CLI injected (a task
			// finishing), which continues the earlier script.
			if !strings.HasPrefix(strings.TrimSpace(text), "<") {
				return nil
			}
		}
	}
	if anchor < 0 {
		return nil
	}
	c := &Conversation{Prompt: prompt, Cwd: requestCwd(req), taken: map[string]bool{}}
	names := map[string]string{}
	for i, m := range req.Messages {
		for _, b := range m.Content {
			if b.Type == "tool_use" {
				c.taken[b.ID] = true
				names[b.ID] = b.Name
			}
			if i > anchor && b.Type == "tool_result" {
				c.Results = append(c.Results, NamedResult{Name: names[b.ToolUseID], ToolResult: b.toolResult()})
			}
		}
		if i > anchor && m.Role == "assistant" {
			c.Step++
		}
	}
	return c
}

var reminderRE = regexp.MustCompile(`(?s)<system-reminder>.*?</system-reminder>`)

// userText is the text of a user message's text blocks, without the
// system reminders the CLI adds.
func userText(m Message) string {
	var parts []string
	for _, b := range m.Content {
		if b.Type != "text" {
			continue
		}
		t := strings.TrimSpace(reminderRE.ReplaceAllString(b.Text, ""))
		if t != "" {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, "\n")
}

func promptWords(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-' || r == '.' || r == '/')
	})
}

func hasTrigger(s string) bool {
	for _, w := range promptWords(s) {
		if _, ok := failCode(w); ok {
			return true
		}
		for _, tr := range Triggers {
			if w == tr.Word {
				return true
			}
		}
	}
	return false
}

func failCode(w string) (int, bool) {
	if len(w) != 7 || !strings.HasPrefix(w, "FAIL") {
		return 0, false
	}
	n, err := strconv.Atoi(w[4:])
	if err != nil || n < 400 || n > 599 {
		return 0, false
	}
	return n, true
}

func failTurn(code int) Turn {
	text := strings.ToLower(http.StatusText(code))
	if code == 529 {
		text = "overloaded"
	}
	if text == "" {
		text = "error"
	}
	return Turn{Status: code, ErrorType: errorTypeFor(code), ErrorMessage: "scripted " + text}
}

var cwdRE = regexp.MustCompile(`(?m)^\s*(?:-\s*)?(?:Primary )?[Ww]orking directory:\s*(\S[^\n]*?)\s*$`)

// requestCwd finds the working directory in the system prompt or, as
// 2.1.328 sends it, in a "system" message of the conversation.
func requestCwd(req *MessagesBody) string {
	if cwd := findCwd(req.SystemText()); cwd != "" {
		return cwd
	}
	for _, m := range req.Messages {
		if m.Role == "assistant" {
			continue
		}
		for _, b := range m.Content {
			if b.Type == "text" && strings.Contains(b.Text, "orking directory:") {
				if cwd := findCwd(b.Text); cwd != "" {
					return cwd
				}
			}
		}
	}
	return ""
}

// findCwd reads the working directory the CLI states in its system prompt.
func findCwd(system string) string {
	if m := cwdRE.FindStringSubmatch(system); m != nil {
		return m[1]
	}
	return ""
}

// inCwd joins name to the conversation's cwd ("." when unknown, which the
// CLI's tools reject: a prompt can always name an absolute path).
func (c *Conversation) inCwd(name string) string {
	if filepath.IsAbs(name) || c.Cwd == "" {
		return name
	}
	return filepath.Join(c.Cwd, name)
}

// id returns base, or base_2, base_3... when base is already used in the
// conversation, so that repeated scenarios keep tool_use ids unique.
func (c *Conversation) id(base string) string {
	id := base
	for n := 2; c.taken[id]; n++ {
		id = fmt.Sprintf("%s_%d", base, n)
	}
	return id
}

func say(text string) Turn { return Turn{Blocks: []Block{{Type: "text", Text: text}}} }

func toolUse(id, name string, input json.RawMessage) Block {
	return Block{Type: "tool_use", ID: id, Name: name, Input: input}
}

// object builds a JSON object keeping the keys in the order given.
func object(kv ...any) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(kv[i])
		v, err := json.Marshal(kv[i+1])
		if raw, ok := kv[i+1].(json.RawMessage); ok {
			v, err = raw, nil
		}
		if err != nil {
			v = []byte("null")
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes()
}

func write(c *Conversation, args []string) Turn {
	name := "banana"
	if len(args) > 0 && args[0] != "" {
		name = args[0]
	}
	stem := strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))
	if filepath.Ext(name) == "" {
		name += ".txt"
	}
	if c.Step > 0 {
		return say("The file is written.")
	}
	in := object("file_path", c.inCwd(name), "content", stem+"\n")
	return Turn{Blocks: []Block{
		{Type: "text", Text: "I will write the file."},
		toolUse(c.id("toolu_w1"), "Write", in),
	}}
}

func bigWrite(c *Conversation, args []string) Turn {
	if c.Step > 0 {
		return say("Big file written.")
	}
	mib := 3
	if len(args) > 0 {
		if n, err := strconv.Atoi(args[0]); err == nil && n > 0 && n <= 64 {
			mib = n
		}
	}
	in := object("file_path", c.inCwd("big.txt"), "content", strings.Repeat("x", mib<<20))
	return Turn{Blocks: []Block{toolUse(c.id("toolu_w1"), "Write", in)}}
}

func bash(id, command, desc, final string) func(*Conversation, []string) Turn {
	return func(c *Conversation, _ []string) Turn {
		if c.Step > 0 {
			return say(final)
		}
		return Turn{Blocks: []Block{toolUse(c.id(id), "Bash", object("command", command, "description", desc))}}
	}
}

func touch(c *Conversation, args []string) Turn {
	return bash("toolu_h1", "touch "+c.inCwd("touched.txt"), "Touch a file", "Touched.")(c, args)
}

func chain(c *Conversation, _ []string) Turn {
	two := c.inCwd("two.txt")
	switch c.Step {
	case 0:
		return Turn{Blocks: []Block{toolUse(c.id("toolu_c1"), "Bash", object("command", "echo one", "description", "one"))}}
	case 1:
		return Turn{Blocks: []Block{toolUse(c.id("toolu_c2"), "Write", object("file_path", two, "content", "two\n"))}}
	case 2:
		return Turn{Blocks: []Block{toolUse(c.id("toolu_c3"), "Read", object("file_path", two))}}
	default:
		return say("Chain complete.")
	}
}

func loop(c *Conversation, _ []string) Turn {
	if c.Step >= maxLoop {
		return say("Loop gave up.")
	}
	n := c.Step + 1
	in := object("command", fmt.Sprintf("echo loop-%d", n), "description", "Loop")
	return Turn{Blocks: []Block{toolUse(c.id(fmt.Sprintf("toolu_l%d", n)), "Bash", in)}}
}

type option struct {
	Label       string `json:"label"`
	Description string `json:"description"`
}

func question(q, header string, multi bool, opts ...option) json.RawMessage {
	o, _ := json.Marshal(opts)
	return object("questions", []json.RawMessage{object("question", q, "header", header, "options", json.RawMessage(o), "multiSelect", multi)})
}

func ask(c *Conversation, _ []string) Turn {
	if c.Step > 0 {
		return say("Noted your choice.")
	}
	in := question("Do you prefer cats or dogs?", "Pet", false,
		option{"Cats", "Independent"}, option{"Dogs", "Loyal"})
	return Turn{Blocks: []Block{toolUse(c.id("toolu_a1"), "AskUserQuestion", in)}}
}

func askMulti(c *Conversation, _ []string) Turn {
	if c.Step > 0 {
		got := ""
		if len(c.Results) > 0 {
			got = cut(c.Results[len(c.Results)-1].Text, 500)
		}
		return say("Noted your choices: " + got)
	}
	in := question("Which fruits do you like?", "Fruit", true,
		option{"Apples", "Crisp"}, option{"Pears", "Soft"}, option{"Plums", "Tart"})
	return Turn{Blocks: []Block{toolUse(c.id("toolu_m1"), "AskUserQuestion", in)}}
}

func cached(*Conversation, []string) Turn {
	t := say("Hello from the cache.")
	t.Cache = &CacheUsage{Write5m: 100, Write1h: 50, Read: 200}
	return t
}

func think(*Conversation, []string) Turn {
	return Turn{Blocks: []Block{
		{Type: "thinking", Thinking: "Let me think about it.", Signature: "c2lnbmF0dXJl"},
		{Type: "text", Text: "Thought it through."},
	}}
}

func ping(c *Conversation, _ []string) Turn {
	if c.Step > 0 {
		return say("Ping answered.")
	}
	return Turn{Blocks: []Block{toolUse(c.id("toolu_p1"), "mcp__probe__ping", object("note", "hi"))}}
}

func agent(c *Conversation, _ []string) Turn {
	if c.Step > 0 {
		return say("The helper finished.")
	}
	in := object("description", "Say hello", "prompt", "HELLO from the parent", "subagent_type", "general-purpose")
	return Turn{Blocks: []Block{toolUse(c.id("toolu_t1"), "Task", in)}}
}

// generic is a script written in the prompt itself.
type generic struct {
	tools []struct {
		name  string
		input string
	}
	say    string
	hasSay bool
	delay  time.Duration
}

// parseGeneric reads TOOL/SAY/DELAY lines; ok is false when there are none.
func parseGeneric(prompt string) (generic, bool) {
	var g generic
	ok := false
	for _, line := range strings.Split(prompt, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "TOOL "):
			rest := strings.TrimSpace(line[len("TOOL "):])
			name, input, _ := strings.Cut(rest, " ")
			input = strings.TrimSpace(input)
			if input == "" {
				input = "{}"
			}
			g.tools = append(g.tools, struct{ name, input string }{name, input})
			ok = true
		case strings.HasPrefix(line, "SAY "):
			if g.hasSay {
				g.say += "\n"
			}
			g.say += strings.TrimSpace(line[len("SAY "):])
			g.hasSay, ok = true, true
		case strings.HasPrefix(line, "DELAY "):
			if d, err := time.ParseDuration(strings.TrimSpace(line[len("DELAY "):])); err == nil {
				g.delay = d
				ok = true
			}
		}
	}
	return g, ok
}

func (g generic) turn(c *Conversation) Turn {
	if c.Step < len(g.tools) {
		t := g.tools[c.Step]
		in := strings.ReplaceAll(t.input, "{{cwd}}", jsonStringBody(c.Cwd))
		if !json.Valid([]byte(in)) {
			return say(fmt.Sprintf("apistub: TOOL %s input is not valid JSON: %s", t.name, cut(in, 200)))
		}
		var compact bytes.Buffer
		_ = json.Compact(&compact, []byte(in))
		return Turn{Blocks: []Block{toolUse(c.id(fmt.Sprintf("toolu_g%d", c.Step+1)), t.name, compact.Bytes())}}
	}
	text := "Done."
	if g.hasSay {
		text = g.say
	}
	for i, r := range c.Results {
		status := "ok"
		if r.IsError {
			status = "error"
		}
		text += fmt.Sprintf("\n[%d] %s %s: %s", i+1, r.Name, status, cut(r.Text, 500))
	}
	return say(text)
}

// jsonStringBody is s encoded as a JSON string, without the quotes.
func jsonStringBody(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// cut shortens s to at most n bytes on a rune boundary, marking the cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
