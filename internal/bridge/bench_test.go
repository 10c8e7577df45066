package bridge

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentjq/agentjq/internal/testkit/fakeagent"
	"github.com/agentjq/agentjq/internal/testkit/streamgen"
)

// BenchmarkPassThrough measures spawn's hot path: a fake agent writes a
// realistic stream (no control requests) and the bridge copies it out.
func BenchmarkPassThrough(b *testing.B) {
	dir := b.TempDir()
	stream := filepath.Join(dir, "stream.ndjson")
	f, err := os.Create(stream)
	if err != nil {
		b.Fatal(err)
	}
	g, err := streamgen.New(1)
	if err != nil {
		b.Fatal(err)
	}
	g.NoControl = true
	size, err := g.WriteTo(f, 64<<20)
	f.Close()
	if err != nil {
		b.Fatal(err)
	}
	agent := filepath.Join(dir, "agent.sh")
	os.WriteFile(agent, []byte("#!/bin/sh\ncat >/dev/null &\nexec cat \"$0.ndjson\"\n"), 0o755)
	os.Rename(stream, agent+".ndjson")
	b.SetBytes(size)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rep, err := Run(context.Background(), Options{
			Profile: Profiles["claude"], Path: agent, Env: os.Environ(),
			HasPrompt: true, Prompt: "x", Stdout: io.Discard, Stderr: io.Discard,
			Grace: 5 * time.Second,
		})
		if err != nil || rep.AgentExit != 0 {
			b.Fatalf("run: %v %+v", err, rep)
		}
	}
}

// stampWriter records, for each line written through spawn, how long ago
// the fake agent stamped it.
type stampWriter struct {
	mu   sync.Mutex
	lags []time.Duration
}

func (w *stampWriter) Write(p []byte) (int, error) {
	now := time.Now().UnixNano()
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, line := range bytes.Split(p, []byte("\n")) {
		i := bytes.Index(line, []byte(`"t":`))
		if i < 0 {
			continue
		}
		rest := line[i+4:]
		j := bytes.IndexByte(rest, ',')
		if t, err := strconv.ParseInt(string(rest[:j]), 10, 64); err == nil {
			w.lags = append(w.lags, time.Duration(now-t))
		}
	}
	return len(p), nil
}

// BenchmarkLineLatency reports the median time from the agent writing a
// line to spawn writing it out (pipe transfer included), at a few hundred
// lines a second, as a live session produces them.
func BenchmarkLineLatency(b *testing.B) {
	for i := 0; i < b.N; i++ {
		var w stampWriter
		rep, err := Run(context.Background(), Options{
			Profile: Profiles["claude"], Path: os.Args[0],
			Env:       append(os.Environ(), fakeagent.Scenario+"=ticker:2000:500us"),
			HasPrompt: true, Prompt: "x", Stdout: &w, Stderr: io.Discard,
		})
		if err != nil || rep.AgentExit != 0 {
			b.Fatalf("run: %v %+v", err, rep)
		}
		sort.Slice(w.lags, func(i, j int) bool { return w.lags[i] < w.lags[j] })
		if len(w.lags) < 2000 {
			b.Fatalf("saw %d lines", len(w.lags))
		}
		b.ReportMetric(float64(w.lags[len(w.lags)/2].Microseconds()), "median-µs")
		b.ReportMetric(float64(w.lags[len(w.lags)*99/100].Microseconds()), "p99-µs")
	}
}

// BenchmarkPipeLatency is the baseline for BenchmarkLineLatency: the same
// fake agent read straight from its pipe, without spawn.
func BenchmarkPipeLatency(b *testing.B) {
	for i := 0; i < b.N; i++ {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), fakeagent.Scenario+"=ticker:2000:500us")
		cmd.Stdin = strings.NewReader("go\n")
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		var w stampWriter
		br := bufio.NewReader(out)
		for {
			line, err := br.ReadBytes('\n')
			w.Write(line)
			if err != nil {
				break
			}
		}
		cmd.Wait()
		sort.Slice(w.lags, func(i, j int) bool { return w.lags[i] < w.lags[j] })
		b.ReportMetric(float64(w.lags[len(w.lags)/2].Microseconds()), "median-µs")
		b.ReportMetric(float64(w.lags[len(w.lags)*99/100].Microseconds()), "p99-µs")
	}
}
