package protocol

import (
	_ "embed"
	"strings"
)

//go:embed cli-versions.txt
var cliVersions string

// CheckedVersions are the agent CLI versions this build was checked
// against (its live suite ran against each, and each has fixtures), oldest
// first. Another version gets a version_drift warning. They are read from
// cli-versions.txt, which the Makefile reads too.
var CheckedVersions = parseVersions(cliVersions)

func parseVersions(text string) []string {
	var vs []string
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			vs = append(vs, l)
		}
	}
	return vs
}

// VersionChecked reports whether v is one of CheckedVersions.
func VersionChecked(v string) bool {
	for _, c := range CheckedVersions {
		if c == v {
			return true
		}
	}
	return false
}
