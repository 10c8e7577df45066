package view

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentjq/agentjq/fixtures"
)

var update = os.Getenv("AGENTJQ_UPDATE") == "1"

func render(t testing.TB, in []byte, opts Options) string {
	t.Helper()
	var out bytes.Buffer
	if err := Render(context.Background(), bytes.NewReader(in), "test", &out, opts); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// golden compares got with testdata/golden/name.txt; AGENTJQ_UPDATE=1
// rewrites the file instead.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name+".txt")
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with AGENTJQ_UPDATE=1 to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file:\n--- got\n%s--- want\n%s", name, got, want)
	}
}

func TestGoldenCaptures(t *testing.T) {
	names := fixtures.Scenarios()
	if len(names) < 24 {
		t.Fatalf("found %d scenarios", len(names))
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			in, err := fixtures.Capture(name, "out")
			if err != nil {
				t.Fatal(err)
			}
			golden(t, name, render(t, in, Options{Width: 80}))
		})
	}
}

var escape = regexp.MustCompile("\x1b\\[[0-9;]*m")

func TestColor(t *testing.T) {
	in, err := fixtures.Capture("write-deny", "out")
	if err != nil {
		t.Fatal(err)
	}
	plain := render(t, in, Options{Width: 80})
	if escape.MatchString(plain) || strings.Contains(plain, "\x1b") {
		t.Errorf("Color false wrote escape codes:\n%q", plain)
	}
	colored := render(t, in, Options{Width: 80, Color: true})
	if !escape.MatchString(colored) {
		t.Fatalf("Color true wrote no escape codes:\n%s", colored)
	}
	// Red for the denied result.
	if !strings.Contains(colored, "\x1b[31m✗") {
		t.Errorf("the denied tool result is not red:\n%q", colored)
	}
	// Colour changes nothing but the escape codes.
	if got := escape.ReplaceAllString(colored, ""); got != plain {
		t.Errorf("without escapes the coloured view differs:\n%s\nvs\n%s", got, plain)
	}
}

func BenchmarkRenderCaptures(b *testing.B) {
	var all []byte
	for _, name := range fixtures.Scenarios() {
		in, err := fixtures.Capture(name, "out")
		if err != nil {
			b.Fatal(err)
		}
		all = append(all, in...)
	}
	b.SetBytes(int64(len(all)))
	for b.Loop() {
		if err := Render(context.Background(), bytes.NewReader(all), "test", io.Discard, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
