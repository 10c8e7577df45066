package view

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"strings"
	"testing"
)

// renderErr renders in and returns the view and Render's error.
func renderErr(t *testing.T, in []byte) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := Render(context.Background(), bytes.NewReader(in), "s.rec", &out, Options{})
	return out.String(), err
}

// TestRecordingProblemsFailAfterShowing: an unknown recording version, a
// bad middle entry, or garbage are shown where they stand, the rest of
// the stream too, and then Render fails (filter --view exits 5).
func TestRecordingProblemsFailAfterShowing(t *testing.T) {
	rec := recordingOf(t, "hello")
	lines := strings.SplitAfter(string(rec), "\n")
	newer := strings.Replace(string(rec), `{"agentjq_recording":1,`, `{"agentjq_recording":99,`, 1)
	middle := strings.Join(lines[:3], "") + "{\"seq\":oops}\n" + strings.Join(lines[3:], "")
	for name, in := range map[string]string{
		"newer version": newer,
		"bad middle":    middle,
		"garbage":       "\x00\x01garbage\nmore garbage\n",
	} {
		got, err := renderErr(t, []byte(in))
		var bad *BadInput
		if !errors.As(err, &bad) {
			t.Errorf("%s: err = %v, want a BadInput", name, err)
			continue
		}
		if !strings.Contains(got, "⚠") {
			t.Errorf("%s: no warning shown:\n%s", name, got)
		}
		if name != "garbage" && !strings.Contains(got, "■ success") {
			t.Errorf("%s: the rest of the recording was not shown:\n%s", name, got)
		}
	}
	got, _ := renderErr(t, []byte(middle))
	if !strings.Contains(got, "line 4:") {
		t.Errorf("the bad entry is not named by its line:\n%s", got)
	}
}

// TestCutOffLastLineIsAWarning: a recording whose last line was cut off
// mid-write (a killed recorder) is shown with a warning and no error; a
// gzip-compressed recording reads as the plain one.
func TestCutOffLastLineIsAWarning(t *testing.T) {
	rec := recordingOf(t, "hello")
	cut := append(append([]byte(nil), rec...), `{"seq":99,"ms":1.000,"dir":"out","msg":{"type":"assis`...)
	got, err := renderErr(t, cut)
	if err != nil {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(got, "s.rec:") || !strings.Contains(got, "truncated") {
		t.Errorf("no warning naming the file:\n%s", got)
	}
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(rec)
	zw.Close()
	plain, err := renderErr(t, rec)
	if err != nil {
		t.Fatal(err)
	}
	zipped, err := renderErr(t, z.Bytes())
	if err != nil || zipped != plain {
		t.Errorf("gzip: err %v, view\n%s\nwant\n%s", err, zipped, plain)
	}
}
