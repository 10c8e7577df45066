package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// Unavailable says why the sandbox cannot run here and what to install.
// agentjq then starts no agent: it exits with the "not found" status.
type Unavailable struct{ Why, Fix string }

func (u *Unavailable) Error() string {
	return fmt.Sprintf("the sandbox cannot run: %s; %s, or run with --no-sandbox (file, read and network limits are then not enforced)", u.Why, u.Fix)
}

// Check reports why Claude Code's sandbox cannot run on goos with the
// agent's PATH (lookPath), or nil. On Linux it needs bubblewrap and socat,
// and a bubblewrap that can make a sandbox here (user namespaces may be
// refused, as in some containers): one bwrap run, within probeBound, tells.
// On macOS it needs sandbox-exec (Seatbelt). Elsewhere there is none.
// The answer is kept for the process.
func Check(goos string, lookPath func(string) (string, error)) error {
	checkMu.Lock()
	defer checkMu.Unlock()
	key := goos
	for _, b := range []string{"bwrap", "socat", "sandbox-exec"} {
		p, _ := lookPath(b)
		key += "\x00" + p
	}
	if err, ok := checked[key]; ok {
		return err
	}
	err := check(goos, lookPath)
	checked[key] = err
	return err
}

var (
	checkMu sync.Mutex
	checked = map[string]error{}
)

const probeBound = 10 * time.Second

func check(goos string, lookPath func(string) (string, error)) error {
	switch goos {
	case "linux":
		var missing []string
		bwrap, err := lookPath("bwrap")
		if err != nil {
			missing = append(missing, "bubblewrap (bwrap)")
		}
		if _, err := lookPath("socat"); err != nil {
			missing = append(missing, "socat")
		}
		if len(missing) > 0 {
			return &Unavailable{Why: strings.Join(missing, " and ") + " not found on PATH",
				Fix: "install them (Debian, Ubuntu: apt-get install bubblewrap socat; Fedora: dnf install bubblewrap socat)"}
		}
		ctx, cancel := context.WithTimeout(context.Background(), probeBound)
		defer cancel()
		cmd := exec.CommandContext(ctx, bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-net", "--unshare-pid", "--", "true")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		cmd.WaitDelay = time.Second
		if err := cmd.Run(); err != nil {
			msg := strings.TrimSpace(stderr.String())
			if msg == "" {
				msg = err.Error()
			}
			return &Unavailable{Why: "bubblewrap cannot make a sandbox here (" + msg + ")",
				Fix: "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, or the container's seccomp and AppArmor profile)"}
		}
		return nil
	case "darwin":
		if _, err := lookPath("sandbox-exec"); err != nil {
			return &Unavailable{Why: "sandbox-exec (Seatbelt) not found on PATH", Fix: "put /usr/bin on the agent's PATH"}
		}
		return nil
	}
	return &Unavailable{Why: "Claude Code's sandbox does not run on " + goos, Fix: "run agentjq on Linux (or WSL2) or macOS"}
}
