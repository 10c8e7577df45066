package bridge

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/internal/syncio"
)

// rttAgent is set in the environment of the test binary run as the
// round-trip agent: it sends that many can_use_tool requests one after the
// other, times each until its answer arrives, writes the median in
// nanoseconds to $AGENTJQ_RTT_OUT, then a result, and waits for EOF.
const rttAgent = "AGENTJQ_RTT_AGENT"

func init() {
	n, err := strconv.Atoi(os.Getenv(rttAgent))
	if err != nil {
		return
	}
	in := bufio.NewReader(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	rtts := make([]time.Duration, 0, n)
	for i := range n {
		start := time.Now()
		fmt.Fprintf(out, `{"type":"control_request","request_id":"r%d","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"echo %d"},"tool_use_id":"t%d"}}`+"\n", i, i, i)
		out.Flush()
		if _, err := in.ReadBytes('\n'); err != nil {
			os.Exit(1)
		}
		rtts = append(rtts, time.Since(start))
	}
	slices.Sort(rtts)
	os.WriteFile(os.Getenv("AGENTJQ_RTT_OUT"), []byte(strconv.FormatInt(int64(rtts[len(rtts)/2]), 10)), 0o644)
	fmt.Fprintln(out, `{"type":"result","subtype":"success","is_error":false,"result":"ok","num_turns":1}`)
	out.Flush()
	io.Copy(io.Discard, in)
	os.Exit(0)
}

const rttRequests = 2000

// BenchmarkProxyRoundTrip reports the median round trip of a permission
// request from the agent to a client that answers at once and back,
// through a proxied session (the approval chain decides nothing, so every
// request goes to the client).
func BenchmarkProxyRoundTrip(b *testing.B) {
	var medians []float64
	for range b.N {
		outFile := filepath.Join(b.TempDir(), "rtt")
		c := &fakeClient{answer: func(env protocol.Envelope) [][]byte { return [][]byte{allowAnswer(env)} }}
		pr, pw := io.Pipe()
		c.in, c.done = pw, make(chan struct{})
		go func() { <-c.done; pw.Close() }()
		var errb syncio.Buffer
		_, err := Run(context.Background(), Options{
			Path: os.Args[0], Env: append(os.Environ(), rttAgent+"="+strconv.Itoa(rttRequests), "AGENTJQ_RTT_OUT="+outFile),
			Stdin: pr, Stdout: c, Stderr: &errb, Grace: time.Second, Forward: &Forward{},
		})
		if err != nil {
			b.Fatal(err)
		}
		medians = append(medians, readMedian(b, outFile))
	}
	b.ReportMetric(median(medians)/1000, "µs/roundtrip")
}

// BenchmarkDirectRoundTrip is its baseline: the same agent and an
// equally quick client, with no agentjq between them.
func BenchmarkDirectRoundTrip(b *testing.B) {
	var medians []float64
	for range b.N {
		outFile := filepath.Join(b.TempDir(), "rtt")
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), rttAgent+"="+strconv.Itoa(rttRequests), "AGENTJQ_RTT_OUT="+outFile)
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		br := bufio.NewReader(stdout)
		for {
			line, err := br.ReadBytes('\n')
			if err != nil {
				b.Fatal(err)
			}
			env, err := protocol.DecodeEnvelope(line)
			if err != nil {
				b.Fatal(err)
			}
			if env.Type == protocol.TypeResult {
				break
			}
			stdin.Write(append(allowAnswer(env), '\n'))
		}
		stdin.Close()
		cmd.Wait()
		medians = append(medians, readMedian(b, outFile))
	}
	b.ReportMetric(median(medians)/1000, "µs/roundtrip")
}

func readMedian(b *testing.B, path string) float64 {
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	ns, _ := strconv.ParseFloat(string(data), 64)
	return ns
}

func median(v []float64) float64 {
	slices.Sort(v)
	return v[len(v)/2]
}

// BenchmarkProxyPassThrough is BenchmarkPassThrough for a proxied session
// with no tap: the lines only the client acts on are not scanned.
func BenchmarkProxyPassThrough(b *testing.B) {
	agent := filepath.Join(b.TempDir(), "agent.sh")
	stream, err := os.Open(os.Getenv("AGENTJQ_BENCH_STREAM"))
	if err != nil {
		b.Skip("set AGENTJQ_BENCH_STREAM to a stream file (go run ./internal/tools/streamgen -size 256MiB -control=false)")
	}
	st, _ := stream.Stat()
	stream.Close()
	os.WriteFile(agent, []byte("#!/bin/sh\ncat >/dev/null &\nexec cat \""+stream.Name()+"\"\n"), 0o755)
	b.SetBytes(st.Size())
	for range b.N {
		pr, pw := io.Pipe()
		pw.Close()
		rep, err := Run(context.Background(), Options{
			Path: agent, Env: os.Environ(), Stdin: pr, Stdout: io.Discard, Stderr: io.Discard,
			Grace: 5 * time.Second, Forward: &Forward{},
		})
		if err != nil || rep.AgentExit != 0 {
			b.Fatalf("run: %v %+v", err, rep)
		}
	}
}
