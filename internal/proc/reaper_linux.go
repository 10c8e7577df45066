package proc

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// reaperName is the reaper's argv[0]: agentjq re-executed as
// `agentjq-reaper PATH ARGV...`, with the control pipe on fd 3 and the
// start report on fd 4.
const reaperName = "agentjq-reaper"

const prSetChildSubreaper = 36 // PR_SET_CHILD_SUBREAPER

// init turns this process into a reaper when it was started as one; it
// runs before anything else of agentjq (or of a test binary) does.
func init() {
	if len(os.Args) >= 3 && os.Args[0] == reaperName {
		os.Exit(reap(os.Args[1], os.Args[2:]))
	}
}

func setPdeathsig(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }

// reaperUsable: re-executing agentjq needs /proc/self/exe, and finding
// descendants needs /proc.
func reaperUsable() bool {
	_, err := os.Stat("/proc/self/exe")
	return err == nil
}

func (c *Cmd) start() error {
	if !reaperUsable() {
		return c.startGroup(true)
	}
	ctlR, ctlW, err := os.Pipe()
	if err != nil {
		return err
	}
	stR, stW, err := os.Pipe()
	if err != nil {
		ctlR.Close()
		ctlW.Close()
		return err
	}
	e := c.cmd
	e.Path = "/proc/self/exe"
	e.Args = append([]string{reaperName, c.Path}, c.Args...)
	e.ExtraFiles = []*os.File{ctlR, stW}
	// No Pdeathsig for the reaper: when agentjq dies it must live on long
	// enough to end the tree (the closed pipe tells it).
	e.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = e.Start()
	ctlR.Close()
	stW.Close()
	if err != nil {
		ctlW.Close()
		stR.Close()
		return err
	}
	c.group, c.ctl = e.Process.Pid, ctlW
	pid, err := readStart(stR, c.Path)
	stR.Close()
	if err != nil {
		c.closeCtl()
		_ = e.Wait()
		c.group = 0
		return err
	}
	c.pid = pid
	return nil
}

// kill lets go of the reaper, which then ends the whole tree. A signal to
// the group would kill the reaper first and orphan what the command
// started outside its group.
func (c *Cmd) kill() {
	if c.ctl == nil {
		c.killGroup()
		return
	}
	c.ctl.Close()
	c.ctl = nil
}

// readStart reads the reaper's report: "pid N" once the command runs, or
// "err ERRNO" when it could not be executed (reported as exec.Cmd would).
func readStart(r *os.File, path string) (int, error) {
	_ = r.SetReadDeadline(time.Now().Add(30 * time.Second))
	b, _ := io.ReadAll(io.LimitReader(r, 128))
	word, num, _ := strings.Cut(strings.TrimSpace(string(b)), " ")
	n, err := strconv.Atoi(num)
	switch {
	case err != nil:
		return 0, errNoReaper
	case word == "pid":
		return n, nil
	case word == "err":
		return 0, &os.PathError{Op: "fork/exec", Path: path, Err: syscall.Errno(n)}
	}
	return 0, errNoReaper
}

// reap is the reaper's main: start the command, wait for it to exit or
// for agentjq to let go, then end every descendant and exit as the
// command did.
func reap(path string, argv []string) int {
	ctl, report := os.NewFile(3, "control"), os.NewFile(4, "report")
	syscall.CloseOnExec(3)
	syscall.CloseOnExec(4)
	// SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to the command's group
	// reach the reaper too: they are the command's to handle. (Handled,
	// not ignored: an ignored signal would stay ignored in the command.)
	signal.Notify(make(chan os.Signal, 1), syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	signal.Notify(childEvents, syscall.SIGCHLD)
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		fmt.Fprintf(os.Stderr, "agentjq: reaper: PR_SET_CHILD_SUBREAPER: %v\n", errno)
	}
	pid, err := syscall.ForkExec(path, argv, &syscall.ProcAttr{
		Env:   os.Environ(),
		Files: []uintptr{0, 1, 2},
		// Should the reaper itself be killed, the command goes with it.
		Sys: &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL},
	})
	if err != nil {
		errno, _ := err.(syscall.Errno)
		fmt.Fprintf(report, "err %d\n", int(errno))
		return 127
	}
	fmt.Fprintf(report, "pid %d\n", pid)
	report.Close()
	// The reaper's copies of the command's stdio must not keep a pipe
	// open after the command closed its own.
	if null, err := syscall.Open(os.DevNull, syscall.O_RDWR, 0); err == nil {
		for fd := 0; fd <= 2; fd++ {
			_ = syscall.Dup3(null, fd, 0)
		}
		syscall.Close(null)
	}

	letGo := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, ctl); close(letGo) }()

	r := &reaper{cmd: pid, childEvents: childEvents}
	for !r.cmdDone {
		select {
		case <-r.childEvents:
			r.reapReady()
		case <-letGo:
			r.endTree()
			if !r.cmdDone { // a command that would not die is reported killed, never as a success
				r.status = syscall.WaitStatus(syscall.SIGKILL)
			}
			return exitAs(r.status)
		}
	}
	r.endTree()
	return exitAs(r.status)
}

// reaper reaps its children: the command and every orphan handed to it.
type reaper struct {
	cmd         int
	cmdDone     bool
	status      syscall.WaitStatus
	childEvents chan os.Signal
}

// childEvents is notified on SIGCHLD; it is set up before the command
// starts, so no exit is missed.
var childEvents = make(chan os.Signal, 1)

// reapReady reaps every child that has exited, without blocking; empty
// reports that the reaper has no children left at all.
func (r *reaper) reapReady() (empty bool) {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil: // ECHILD: the tree is empty
			return true
		case pid <= 0:
			return false
		case pid == r.cmd:
			r.status, r.cmdDone = ws, true
		}
	}
}

// endTree SIGKILLs the reaper's children until it has none: each round
// kills the direct children, whose own children the kernel then hands to
// the reaper. Only direct children are signalled: their pids cannot be
// reused before the reaper reaps them, so nothing outside the tree is
// ever hit. When the command exited alone, the first check finds no
// children and no /proc scan is made.
func (r *reaper) endTree() {
	self := os.Getpid()
	deadline := time.Now().Add(10 * time.Second)
	for !r.reapReady() && time.Now().Before(deadline) {
		for _, p := range children(self) {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
		select {
		case <-r.childEvents:
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// children lists the processes whose parent is pid.
func children(pid int) []int {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	want := []byte(" " + strconv.Itoa(pid) + " ")
	var out []int
	for _, name := range names {
		if name[0] < '0' || name[0] > '9' {
			continue
		}
		b, err := os.ReadFile("/proc/" + name + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold anything, so parse
		// after its last ')'.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 || len(b) < i+3 {
			continue
		}
		rest := b[i+2:] // "S 123 ..."
		if j := bytes.IndexByte(rest, ' '); j >= 0 && bytes.HasPrefix(rest[j:], want) {
			if n, err := strconv.Atoi(name); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

// exitAs ends the reaper with the command's status: its exit code, or
// death by the same signal for the signals a Go program can die of
// (SIGKILL, SIGTERM, SIGINT, SIGHUP); other signals give 128+N.
func exitAs(ws syscall.WaitStatus) int {
	if ws.Exited() {
		return ws.ExitStatus()
	}
	if !ws.Signaled() {
		return 1
	}
	sig := ws.Signal()
	switch sig {
	case syscall.SIGKILL, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP:
		signal.Reset(sig)
		_ = syscall.Kill(os.Getpid(), sig)
		time.Sleep(time.Second)
	}
	return 128 + int(sig)
}
