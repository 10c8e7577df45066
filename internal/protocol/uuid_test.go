package protocol

import (
	"regexp"
	"testing"
)

func TestNewUUID(t *testing.T) {
	v4 := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for range 100 {
		u := NewUUID()
		if !v4.MatchString(u) || seen[u] || !IsUUID(u) {
			t.Fatalf("NewUUID() = %q: not a fresh version 4 UUID", u)
		}
		seen[u] = true
	}
}

func TestIsUUID(t *testing.T) {
	for _, s := range []string{"", "--dangerously-skip-permissions", "8f4d397d-9766-4ef6-b9e0-9d9f917f2743x",
		"8F4D397D-9766-4EF6-B9E0-9D9F917F2743", "8f4d397d_9766-4ef6-b9e0-9d9f917f2743", "-f4d397d-9766-4ef6-b9e0-9d9f917f2743", "../../../../etc/passwd-0000000000000"} {
		if IsUUID(s) {
			t.Errorf("IsUUID(%q) = true", s)
		}
	}
	if !IsUUID("8f4d397d-9766-4ef6-b9e0-9d9f917f2743") {
		t.Error("a claude uuid is not a UUID")
	}
}
