package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentjq/agentjq/jsonrpc"
)

// Dial connects to the daemon of home over its Unix socket and says hello
// with its token. handler receives the daemon's notifications and requests.
func Dial(ctx context.Context, home, clientName string, handler jsonrpc.Handler) (*jsonrpc.Conn, error) {
	b, err := os.ReadFile(filepath.Join(home, "daemon.json"))
	if err != nil {
		return nil, fmt.Errorf("no daemon on %s (start agentjq serve): %w", home, err)
	}
	var f DaemonFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(home, "daemon.json"), err)
	}
	tok, err := os.ReadFile(f.TokenFile)
	if err != nil {
		return nil, err
	}
	var d net.Dialer
	nc, err := d.DialContext(ctx, "unix", f.Socket)
	if err != nil {
		return nil, fmt.Errorf("daemon socket %s: %w", f.Socket, err)
	}
	c := jsonrpc.NewConn(jsonrpc.NewLineStream(nc, nc, nc), jsonrpc.Options{Handler: handler, Logf: func(string, ...any) {}})
	go c.Run(context.Background())
	if err := c.Call(ctx, "system.hello", HelloParams{Token: strings.TrimSpace(string(tok)), ClientVersion: f.ServerVersion,
		ProtocolVersion: ProtocolVersion, ClientName: clientName}, nil); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}
