// Package proctest finds processes a test left behind: every process
// whose command line or environment carries a marker the test put there.
// It is for tests only.
package proctest

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Marker is a fresh marker: put it in a command line or as the value of
// an environment variable, then assert None.
func Marker(tb testing.TB) string {
	tb.Helper()
	return "agentjq-leak-" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
}

// Find lists "pid cmdline" of every live process (zombies are gone
// already) whose cmdline or environment holds marker.
func Find(marker string) []string {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	m := []byte(marker)
	var out []string
	for _, name := range names {
		if _, err := strconv.Atoi(name); err != nil || name == strconv.Itoa(os.Getpid()) {
			continue
		}
		if stat, err := os.ReadFile("/proc/" + name + "/stat"); err != nil || zombie(stat) {
			continue
		}
		cmdline, _ := os.ReadFile("/proc/" + name + "/cmdline")
		environ, _ := os.ReadFile("/proc/" + name + "/environ")
		if bytes.Contains(cmdline, m) || bytes.Contains(environ, m) {
			out = append(out, name+" "+strings.ReplaceAll(string(bytes.TrimRight(cmdline, "\x00")), "\x00", " "))
		}
	}
	return out
}

func zombie(stat []byte) bool {
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && len(stat) > i+2 && stat[i+2] == 'Z'
}

// None fails tb unless no process carries marker within wait (the
// kernel takes a moment to deliver a SIGKILL), then kills the leftovers
// so that one failure does not leak into the next test.
func None(tb testing.TB, marker string, wait time.Duration) {
	tb.Helper()
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		tb.Skip("needs /proc")
	}
	deadline := time.Now().Add(wait)
	left := Find(marker)
	for len(left) > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		left = Find(marker)
	}
	if len(left) > 0 {
		tb.Errorf("%d process(es) outlived the test:\n%s", len(left), strings.Join(left, "\n"))
		for _, l := range left {
			pid, _ := strconv.Atoi(strings.Fields(l)[0])
			if p, err := os.FindProcess(pid); err == nil {
				_ = p.Kill()
			}
		}
	}
}
