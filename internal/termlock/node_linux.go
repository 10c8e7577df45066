package termlock

import (
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// ttyMajor is /dev/tty's device major: a file opened through it reports
// /dev/tty's node, not the terminal's.
const ttyMajor = 5

// ptsMajor is the major of every pseudo-terminal's node.
const ptsMajor = 136

// openNode opens the device node of the terminal f is (f may be /dev/tty,
// which stands for the controlling terminal), for locking; nil when f is
// not a terminal or its node is not found.
func openNode(f *os.File) *os.File {
	fd := int(f.Fd())
	if _, err := unix.IoctlGetTermios(fd, unix.TCGETS); err != nil {
		return nil
	}
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return nil
	}
	dev := uint64(st.Rdev)
	if unix.Major(dev) == ttyMajor {
		// /dev/tty: ask the terminal which device it is.
		d, err := unix.IoctlGetUint32(fd, unix.TIOCGDEV)
		if err != nil {
			return nil
		}
		dev = unix.Mkdev(uint32(d>>8)&0xfff, uint32(d&0xff)|uint32(d>>12)&0xfff00)
	}
	// A pseudo-terminal's node is /dev/pts/<minor> (devpts gives them all
	// major 136); other terminals are found by what fds 0-2 name. Only a
	// node of the same device will do.
	candidates := []string{}
	if unix.Major(dev) == ptsMajor {
		candidates = append(candidates, filepath.Join("/dev/pts", strconv.Itoa(int(unix.Minor(dev)))))
	}
	for i := range 3 {
		if p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(i)); err == nil && filepath.IsAbs(p) {
			candidates = append(candidates, p)
		}
	}
	for _, p := range candidates {
		var ps unix.Stat_t
		if unix.Stat(p, &ps) != nil || uint64(ps.Rdev) != dev || ps.Mode&unix.S_IFMT != unix.S_IFCHR {
			continue
		}
		node, err := os.OpenFile(p, os.O_RDONLY|unix.O_NOCTTY|unix.O_NONBLOCK, 0)
		if err != nil {
			continue
		}
		return node
	}
	return nil
}

func tryLock(node *os.File) bool {
	for {
		err := unix.Flock(int(node.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err != unix.EINTR {
			return err == nil
		}
	}
}

func unlock(node *os.File) { unix.Flock(int(node.Fd()), unix.LOCK_UN) }
