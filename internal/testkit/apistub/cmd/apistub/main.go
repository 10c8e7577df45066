// Command apistub serves the scripted Messages API stand-in for manual runs
// of the claude CLI:
//
//	go run ./internal/testkit/apistub/cmd/apistub -addr 127.0.0.1:8765 -log
//	ANTHROPIC_BASE_URL=http://127.0.0.1:8765 ANTHROPIC_API_KEY=x claude ...
//
// scripts/tour.sh (make tour) runs it for the README's tour with -addr
// 127.0.0.1:0 and -exit-on-eof, so that it ends with the script however
// the script ends.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/agentjq/agentjq/internal/testkit/apistub"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8765", "loopback address to listen on")
	logReq := flag.Bool("log", false, "print each request's method, path and size on stderr")
	dump := flag.String("dump", "", "write each request body to DIR/NNN.json")
	exitOnEOF := flag.Bool("exit-on-eof", false, "exit when stdin reaches its end (the process that started it holds the other end)")
	flag.Parse()
	s, err := apistub.Listen(*addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Fprintln(os.Stderr, "apistub: serving on", s.URL())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *exitOnEOF {
		go func() {
			_, _ = io.Copy(io.Discard, os.Stdin)
			stop()
		}()
	}
	seen := 0
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			_ = s.Close()
			return
		case <-tick.C:
			reqs := s.Requests()
			for i, r := range reqs[seen:] {
				if *logReq {
					fmt.Fprintf(os.Stderr, "%s %s?%s %d bytes -> %d\n", r.Method, r.Path, r.Query, len(r.Body), r.Status)
				}
				if *dump != "" {
					name := filepath.Join(*dump, fmt.Sprintf("%03d.json", seen+i))
					if err := os.WriteFile(name, r.Body, 0o644); err != nil {
						fmt.Fprintln(os.Stderr, err)
					}
				}
			}
			seen = len(reqs)
		}
	}
}
