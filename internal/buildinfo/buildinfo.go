// Package buildinfo says which agentjq this is.
package buildinfo

import (
	"runtime/debug"
	"sync"
)

// version is set at link time: -ldflags "-X github.com/agentjq/agentjq/internal/buildinfo.version=v1.2.3".
var version string

var once sync.Once

// Version returns agentjq's version: the link-time value, else the module
// version recorded by go install, else the VCS revision, else "devel".
func Version() string {
	once.Do(func() {
		if version != "" {
			return
		}
		version = "devel"
		info, ok := debug.ReadBuildInfo()
		if !ok {
			return
		}
		if v := info.Main.Version; v != "" && v != "(devel)" {
			version = v
			return
		}
		var rev, dirty string
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					dirty = "-dirty"
				}
			}
		}
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if rev != "" {
			version = "devel-" + rev + dirty
		}
	})
	return version
}
