package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestTableIsCurrent: redact/gitleaks_rules.go is what this program makes
// from the gitleaks version go.mod pins. When it fails, run
// go generate ./redact.
func TestTableIsCurrent(t *testing.T) {
	v := moduleVersion()
	if v == "unknown" || v == "" {
		t.Fatal("no gitleaks version in the build information")
	}
	want, err := generate(v)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join("..", "..", "..", "redact", "gitleaks_rules.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("redact/gitleaks_rules.go is stale for gitleaks %s: run go generate ./redact", v)
	}
}
