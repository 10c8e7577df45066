package protocol

import (
	"regexp"
	"slices"
	"testing"
)

func TestCheckedVersions(t *testing.T) {
	if len(CheckedVersions) < 2 || !slices.Contains(CheckedVersions, "2.1.328") || !slices.Contains(CheckedVersions, "2.1.332") {
		t.Fatalf("CheckedVersions = %q", CheckedVersions)
	}
	semver := regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`)
	for _, v := range CheckedVersions {
		if !semver.MatchString(v) || !VersionChecked(v) {
			t.Errorf("version %q", v)
		}
	}
	if VersionChecked("2.1.329") || VersionChecked("") || VersionChecked("# The") {
		t.Error("VersionChecked accepts a version outside the list")
	}
	if got := parseVersions("# c\n\n 1.2.3 \n#1.2.4\n1.2.5\n"); !slices.Equal(got, []string{"1.2.3", "1.2.5"}) {
		t.Errorf("parseVersions = %q", got)
	}
}
