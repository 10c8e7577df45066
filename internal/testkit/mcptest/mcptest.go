// Package mcptest is a small stdio MCP server for tests: newline-delimited
// JSON-RPC on stdin and stdout, with three tools (ping, echo, sleep). A
// test binary calls Main from TestMain when Env is set, and names itself
// (os.Args[0] with Env=1) as the server command.
//
// When PIDFile names a file, the server writes its pid there, and with
// Child=1 it also starts a `sleep 300` child and appends that pid, so a
// test can check that nothing outlives the session.
package mcptest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"time"
)

// Environment variables.
const (
	Env     = "AGENTJQ_MCPTEST"
	PIDFile = "AGENTJQ_MCPTEST_PIDFILE"
	Child   = "AGENTJQ_MCPTEST_CHILD"
)

// Main serves on the process's stdio and returns the exit code.
func Main() int {
	if f := os.Getenv(PIDFile); f != "" {
		pids := strconv.Itoa(os.Getpid()) + "\n"
		if os.Getenv(Child) == "1" {
			c := exec.Command("sleep", "300")
			if err := c.Start(); err == nil {
				pids += strconv.Itoa(c.Process.Pid) + "\n"
			}
		}
		if err := os.WriteFile(f, []byte(pids), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	fmt.Fprintln(os.Stderr, "mcptest: serving")
	if err := Serve(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "mcptest:", err)
		return 1
	}
	return 0
}

// Serve answers requests until in ends.
func Serve(in io.Reader, out io.Writer) error {
	br := bufio.NewReader(in)
	var mu sync.Mutex
	write := func(v any) {
		b, _ := json.Marshal(v)
		mu.Lock()
		defer mu.Unlock()
		out.Write(append(b, '\n'))
	}
	for {
		line, err := br.ReadBytes('\n')
		if t := bytes.TrimSpace(line); len(t) > 0 {
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Params struct {
					Name      string         `json:"name"`
					Arguments map[string]any `json:"arguments"`
				} `json:"params"`
			}
			if json.Unmarshal(t, &m) != nil {
				write(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": -32700, "message": "parse error"}})
				continue
			}
			if m.ID == nil {
				continue // a notification
			}
			result := func(r any) { write(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": r}) }
			text := func(s string) map[string]any {
				return map[string]any{"content": []any{map[string]string{"type": "text", "text": s}}}
			}
			switch m.Method {
			case "initialize":
				result(map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{"tools": map[string]any{"listChanged": false}},
					"serverInfo": map[string]string{"name": "probe", "version": "0.0.1"}})
			case "tools/list":
				result(map[string]any{"tools": []any{
					map[string]any{"name": "ping", "description": "Answers pong", "inputSchema": map[string]any{"type": "object", "properties": map[string]any{"note": map[string]string{"type": "string"}}}},
					map[string]any{"name": "echo", "description": "Echoes its arguments as JSON", "inputSchema": map[string]any{"type": "object"}},
					map[string]any{"name": "sleep", "description": "Sleeps ms milliseconds", "inputSchema": map[string]any{"type": "object", "properties": map[string]any{"ms": map[string]string{"type": "number"}}}},
				}})
			case "tools/call":
				// On stderr, for tests that wait until a call has arrived.
				fmt.Fprintf(os.Stderr, "mcptest: call %s %s\n", m.Params.Name, m.ID)
				// Noise the relay must drop: a notification and a
				// request of the server's own.
				write(map[string]any{"jsonrpc": "2.0", "method": "notifications/message", "params": map[string]any{"level": "info", "data": "calling " + m.Params.Name}})
				write(map[string]any{"jsonrpc": "2.0", "id": "srv-1", "method": "roots/list"})
				switch m.Params.Name {
				case "ping":
					r := text("pong-from-probe")
					r["isError"] = false
					result(r)
				case "echo":
					b, _ := json.Marshal(m.Params.Arguments)
					result(text(string(b)))
				case "sleep":
					ms, _ := m.Params.Arguments["ms"].(float64)
					go func(id json.RawMessage) {
						time.Sleep(time.Duration(ms) * time.Millisecond)
						write(map[string]any{"jsonrpc": "2.0", "id": id, "result": text("slept")})
					}(m.ID)
				default:
					write(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32602, "message": "unknown tool"}})
				}
			default:
				write(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "method not found"}})
			}
		}
		if err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
}
