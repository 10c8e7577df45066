package recording

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"strings"
	"testing"
)

const strictHeader = `{"agentjq_recording":1,"agent":"claude"}` + "\n"

// A msg that is not a JSON object is an error naming FILE:LINE; Lenient
// reads it as it is, as agentjq did before.
func TestMsgNotAnObject(t *testing.T) {
	rec := strictHeader +
		`{"seq":1,"ms":0.1,"dir":"out","msg":{"type":"system"}}` + "\n" +
		`{"seq":2,"ms":0.2,"dir":"out","msg":7}` + "\n" +
		`{"msg":[1,2],"seq":3,"ms":0.3,"dir":"out"}` + "\n" +
		`{"seq":4,"ms":0.4,"dir":"out","msg":{"type":"result"}}` + "\n"
	l := NewLines(strings.NewReader(rec), "s.rec")
	var texts, errs []string
	for {
		ln, err := l.Next()
		if err == io.EOF {
			break
		}
		var bad *LineError
		if errors.As(err, &bad) {
			if !errors.Is(err, ErrNotObject) {
				t.Errorf("%v: not ErrNotObject", err)
			}
			errs = append(errs, err.Error())
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, string(ln.Text))
	}
	if len(errs) != 2 || !strings.HasPrefix(errs[0], "s.rec:3: msg is not a JSON object (7)") || !strings.HasPrefix(errs[1], "s.rec:4: msg is not a JSON object ([1,2])") {
		t.Errorf("errors %q", errs)
	}
	if strings.Join(texts, " ") != `{"type":"system"} {"type":"result"}` {
		t.Errorf("read %q", texts)
	}

	_, entries, err := Read(strings.NewReader(rec), "s.rec", ReadOptions{Lenient: true})
	if err != nil || len(entries) != 4 || string(entries[1].Msg) != "7" || string(entries[2].Msg) != "[1,2]" {
		t.Errorf("lenient: %d entries, %v", len(entries), err)
	}
	if _, _, err := ReadAll(strings.NewReader(rec), "s.rec", nil); err == nil || !strings.HasPrefix(err.Error(), "s.rec:3: ") {
		t.Errorf("ReadAll: %v, want the error at s.rec:3", err)
	}
}

// A gzip-compressed recording cut off anywhere after its header is an
// error naming the file and the line where it was cut; Lenient warns
// and reads the lines before the cut.
func TestTruncatedGzip(t *testing.T) {
	in, _ := captureBytes(t, "write-allow")
	full := FromCapture(in.in, in.out, Header{})
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(full)
	zw.Close()
	if _, entries, err := ReadAll(bytes.NewReader(z.Bytes()), "s.rec.gz", nil); err != nil || len(entries) != bytes.Count(full, []byte("\n"))-1 {
		t.Fatalf("whole: %d entries, %v", len(entries), err)
	}
	total := bytes.Count(full, []byte("\n")) - 1
	cuts := []int{z.Len() - 1, z.Len() - 4, z.Len() - 8, z.Len() - 9, z.Len() / 2, 200}
	for _, cut := range cuts {
		part := z.Bytes()[:cut]
		_, entries, err := ReadAll(bytes.NewReader(part), "s.rec.gz", func(err error) { t.Errorf("cut at %d: the strict reader warned: %v", cut, err) })
		var bad *LineError
		if !errors.As(err, &bad) || !errors.Is(err, ErrTruncated) || bad.Name != "s.rec.gz" || bad.Line < 2 || !strings.Contains(err.Error(), "--lenient") {
			t.Errorf("cut at %d of %d: %d entries, err %v; want a *LineError naming s.rec.gz:LINE", cut, z.Len(), len(entries), err)
			continue
		}
		if len(entries) > total {
			t.Errorf("cut at %d: %d entries of %d", cut, len(entries), total)
		}
		var warned error
		_, lenient, err := Read(bytes.NewReader(part), "s.rec.gz", ReadOptions{Lenient: true, Warn: func(err error) { warned = err }})
		if err != nil || !errors.Is(warned, ErrTruncated) || len(lenient) < len(entries) {
			t.Errorf("cut at %d, lenient: %d entries (strict %d), err %v, warned %v", cut, len(lenient), len(entries), err, warned)
		}
	}
}
