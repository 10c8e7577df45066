package replay

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentjq/agentjq/fixtures"
	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/recording"
)

func TestPlayByteForByte(t *testing.T) {
	for _, name := range fixtures.Scenarios() {
		if name == "print-mode" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			c, rec := captureBytes(t, name)
			var out bytes.Buffer
			if err := Play(context.Background(), bytes.NewReader(rec), "test.rec", &out, PlayOptions{}); err != nil {
				t.Fatal(err)
			}
			want := bytes.Join(splitLines(c.out), []byte("\n"))
			want = append(want, '\n')
			if !bytes.Equal(out.Bytes(), want) {
				t.Errorf("replayed output differs from the capture (%d vs %d bytes)", out.Len(), len(want))
			}
		})
	}
}

// fakeTime is a clock that only Sleep advances.
type fakeTime struct {
	now    time.Time
	sleeps []time.Duration
}

func (f *fakeTime) Now() time.Time { return f.now }
func (f *fakeTime) Sleep(_ context.Context, d time.Duration) error {
	f.sleeps = append(f.sleeps, d)
	f.now = f.now.Add(d)
	return nil
}

func timedRecording(t *testing.T, ms ...float64) []byte {
	t.Helper()
	var buf bytes.Buffer
	h, _ := recording.MarshalHeader(recording.Header{Agent: "claude"})
	buf.Write(append(h, '\n'))
	for i, m := range ms {
		buf.Write(recording.AppendEntry(nil, recording.Entry{Seq: int64(i + 1), MS: m, Dir: protocol.DirOut, Msg: []byte(`{"type":"assistant","n":` + string(rune('0'+i)) + `}`)}))
		buf.WriteByte('\n')
	}
	return buf.Bytes()
}

func TestPlayPacing(t *testing.T) {
	rec := timedRecording(t, 0, 1000, 1500, 61500, 62000)
	cases := []struct {
		name string
		opts PlayOptions
		want []time.Duration
	}{
		{"fast", PlayOptions{}, nil},
		{"realtime", PlayOptions{Speed: 1}, []time.Duration{time.Second, 500 * time.Millisecond, 60 * time.Second, 500 * time.Millisecond}},
		{"double", PlayOptions{Speed: 2}, []time.Duration{500 * time.Millisecond, 250 * time.Millisecond, 30 * time.Second, 250 * time.Millisecond}},
		{"idle-limit", PlayOptions{Speed: 1, IdleLimit: 2 * time.Second}, []time.Duration{time.Second, 500 * time.Millisecond, 2 * time.Second, 500 * time.Millisecond}},
		{"after-seq", PlayOptions{Speed: 1, AfterSeq: 3}, []time.Duration{500 * time.Millisecond}},
	}
	for _, c := range cases {
		ft := &fakeTime{now: time.Unix(100, 0)}
		c.opts.Now, c.opts.Sleep = ft.Now, ft.Sleep
		var out bytes.Buffer
		if err := Play(context.Background(), bytes.NewReader(rec), "test.rec", &out, c.opts); err != nil {
			t.Fatal(err)
		}
		if len(ft.sleeps) != len(c.want) {
			t.Errorf("%s: sleeps %v, want %v", c.name, ft.sleeps, c.want)
			continue
		}
		for i := range c.want {
			if ft.sleeps[i] != c.want[i] {
				t.Errorf("%s: sleeps %v, want %v", c.name, ft.sleeps, c.want)
				break
			}
		}
		lines := strings.Count(out.String(), "\n")
		if wantLines := 5 - int(c.opts.AfterSeq); lines != wantLines {
			t.Errorf("%s: %d lines, want %d", c.name, lines, wantLines)
		}
	}
}

func TestPlayTruncatedLastLine(t *testing.T) {
	rec := timedRecording(t, 0, 1, 2)
	rec = rec[:len(rec)-5]
	var out bytes.Buffer
	var warned error
	if err := Play(context.Background(), bytes.NewReader(rec), "test.rec", &out, PlayOptions{Warn: func(err error) { warned = err }}); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(warned, recording.ErrTruncated) || strings.Count(out.String(), "\n") != 2 {
		t.Errorf("warned %v, output %q", warned, out.String())
	}
}

func TestPlayBadLineNamesIt(t *testing.T) {
	rec := timedRecording(t, 0, 1)
	rec = append(rec, "garbage\n"...)
	rec = append(rec, timedRecording(t, 2)[bytes.IndexByte(timedRecording(t, 2), '\n')+1:]...)
	err := Play(context.Background(), bytes.NewReader(rec), "test.rec", &bytes.Buffer{}, PlayOptions{})
	if err == nil || !strings.Contains(err.Error(), "test.rec:4:") {
		t.Errorf("err = %v", err)
	}
}

func TestPlayFaults(t *testing.T) {
	_, rec := captureBytes(t, "write-allow")
	run := func(spec ...string) (string, error) {
		var faults []Fault
		for _, s := range spec {
			f, err := ParseFault(s)
			if err != nil {
				t.Fatal(err)
			}
			faults = append(faults, f)
		}
		ft := &fakeTime{}
		var out bytes.Buffer
		err := Play(context.Background(), bytes.NewReader(rec), "test.rec", &out, PlayOptions{Faults: faults, Sleep: ft.Sleep, Now: ft.Now})
		return out.String(), err
	}
	clean, _ := run()
	cleanLines := strings.Split(strings.TrimSpace(clean), "\n")

	out, _ := run("drop-result")
	if strings.Contains(out, `"type":"result"`) || strings.Count(out, "\n") != len(cleanLines)-1 {
		t.Errorf("drop-result: %d lines", strings.Count(out, "\n"))
	}
	out, _ = run("garbage@2")
	if !strings.HasPrefix(out, "this is not JSON") {
		t.Errorf("garbage@2: %.40q", out)
	}
	out, _ = run("truncate@2")
	first := strings.SplitN(out, "\n", 2)[0]
	if len(first) != len(cleanLines[0])/2 {
		t.Errorf("truncate@1: first line %d bytes, want %d", len(first), len(cleanLines[0])/2)
	}
	out, _ = run("oversize@result:2M")
	if len(out) < len(clean)+2<<20-10 || !strings.Contains(out, "agentjq_injected_oversize") {
		t.Errorf("oversize: %d bytes", len(out))
	}
	out, err := run("exit@control_request:7")
	var ee *ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 7 || strings.Contains(out, "control_request") {
		t.Errorf("exit: %v, output %d lines", err, strings.Count(out, "\n"))
	}
	ft := &fakeTime{}
	f, _ := ParseFault("delay@2:3s")
	if err := Play(context.Background(), bytes.NewReader(rec), "test.rec", &bytes.Buffer{}, PlayOptions{Faults: []Fault{f}, Sleep: ft.Sleep, Now: ft.Now}); err != nil {
		t.Fatal(err)
	}
	if len(ft.sleeps) != 1 || ft.sleeps[0] != 3*time.Second {
		t.Errorf("delay: sleeps %v", ft.sleeps)
	}
}

func TestParseFault(t *testing.T) {
	good := map[string]Fault{
		"drop-result":       {Kind: FaultDrop, At: "result"},
		"truncate@12":       {Kind: FaultTruncate, Seq: 12},
		"delay@3:1.5s":      {Kind: FaultDelay, Seq: 3, Delay: 1500 * time.Millisecond},
		"exit@result:2":     {Kind: FaultExit, At: "result", Code: 2},
		"oversize@4:1K":     {Kind: FaultOversize, Seq: 4, Size: 1024},
		"garbage@assistant": {Kind: FaultGarbage, At: "assistant"},
	}
	for s, want := range good {
		got, err := ParseFault(s)
		if err != nil || got != want {
			t.Errorf("ParseFault(%q) = %+v, %v; want %+v", s, got, err, want)
		}
	}
	for _, s := range []string{"", "truncate", "nope@1", "delay@1", "delay@1:x", "exit@1:300", "oversize@1:0", "truncate@1:2", "garbage@"} {
		if _, err := ParseFault(s); err == nil {
			t.Errorf("ParseFault(%q) accepted", s)
		}
	}
}
