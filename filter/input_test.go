package filter

import (
	"bytes"
	"compress/gzip"
	"strings"
	"testing"
)

const testHeader = `{"agentjq_recording":1,"agent":"claude","argv":["claude"],"cwd":"/p","started":"2026-01-01T00:00:00Z"}`

// TestRecordingCutOffLastLineWarns: a recording whose last line was cut
// off mid-write (a killed recorder) gives its complete lines, a warning
// naming the file and line, and exit 0.
func TestRecordingCutOffLastLineWarns(t *testing.T) {
	rec := testHeader + "\n" +
		`{"seq":1,"ms":1.000,"dir":"out","msg":{"type":"system","subtype":"init"}}` + "\n" +
		`{"seq":2,"ms":2.000,"dir":"out","msg":{"type":"assis`
	out, errOut, code := runFilter(t, rec, "-c", ".type")
	if out != "\"system\"\n" || code != 0 {
		t.Errorf("stdout %q exit %d", out, code)
	}
	if !strings.HasPrefix(errOut, "agentjq: warning: <stdin>:3: ") || !strings.Contains(errOut, "truncated") {
		t.Errorf("stderr %q", errOut)
	}
}

// TestRewrittenRecordingIsRead: a recording re-serialised by another tool
// (spaces, keys reordered, a key added after the payload; a header with
// its keys reordered) reads as the original; so does a gzip-compressed
// one.
func TestRewrittenRecordingIsRead(t *testing.T) {
	orig := testHeader + "\n" +
		`{"seq":1,"ms":1.000,"dir":"out","msg":{"type":"system","subtype":"init"}}` + "\n" +
		`{"seq":2,"ms":2.000,"dir":"in","msg":{"type":"user"}}` + "\n" +
		`{"seq":3,"ms":3.000,"dir":"out","msg":{"type":"result","n":1}}` + "\n"
	rewritten := `{"agent": "claude", "agentjq_recording": 1, "argv": ["claude"]}` + "\n" +
		`{"seq": 1, "ms": 1, "dir": "out", "msg": {"type": "system", "subtype": "init"}}` + "\n" +
		`{"msg":{"type":"user"},"dir":"in","seq":2,"ms":2}` + "\n" +
		`{"seq":3,"ms":3.000,"dir":"out","msg":{"type":"result","n":1},"note":{"by":"jq"}}` + "\n"
	want, errOut, code := runFilter(t, orig, "-c", ".")
	if want != `{"type":"system","subtype":"init"}`+"\n"+`{"type":"result","n":1}`+"\n" || errOut != "" || code != 0 {
		t.Fatalf("original: %q %q %d", want, errOut, code)
	}
	if out, errOut, code := runFilter(t, rewritten, "-c", "."); out != want || errOut != "" || code != 0 {
		t.Errorf("rewritten: %q %q %d", out, errOut, code)
	}
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write([]byte(orig))
	zw.Close()
	if out, errOut, code := runFilter(t, z.String(), "-c", "."); out != want || errOut != "" || code != 0 {
		t.Errorf("gzip: %q %q %d", out, errOut, code)
	}
}
