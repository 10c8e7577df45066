//go:build unix

package approve

import (
	"os"
	"syscall"
)

// hardLinked reports whether abs is a file with more than one name: a write
// to it also changes a file elsewhere that no path rule sees.
func hardLinked(abs string) bool {
	fi, err := os.Stat(abs)
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Nlink > 1
}
