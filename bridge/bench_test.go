package bridge

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentjq/agentjq/fixtures"
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
	size, err := fixtures.WriteStream(f, 64<<20, false)
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
