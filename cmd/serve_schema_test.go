package cmd

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/agentjq/agentjq/iostreams"
)

// serve --print-schema prints protocol.json, --print-schema=ts
// sdk/protocol.ts, byte for byte as committed (both embedded); another
// value is a usage error. make install puts both in share/agentjq.
func TestServePrintSchema(t *testing.T) {
	t.Parallel()
	for arg, path := range map[string]string{
		"--print-schema":      "../daemon/protocol.json",
		"--print-schema=json": "../daemon/protocol.json",
		"--print-schema=ts":   "../sdk/protocol.ts",
	} {
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		ios, _, out, errb := iostreams.Test()
		if code := Main([]string{"serve", arg}, ios); code != 0 {
			t.Fatalf("serve %s: exit %d, %s", arg, code, errb)
		}
		if !bytes.Equal(out.Bytes(), want) {
			t.Errorf("serve %s does not print %s", arg, path)
		}
	}
	ios, _, _, errb := iostreams.Test()
	if code := Main([]string{"serve", "--print-schema=xml"}, ios); code != 2 || !strings.Contains(errb.String(), "want json or ts") {
		t.Errorf("--print-schema=xml: exit %d, %s", code, errb)
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	plan, err := exec.Command("make", "-C", "..", "-n", "install", "PREFIX=/opt/aj", "DESTDIR=/tmp/stage").CombinedOutput()
	if err != nil {
		t.Fatalf("make -n install: %v\n%s", err, plan)
	}
	if !strings.Contains(string(plan), "install -m 0644 daemon/protocol.json sdk/protocol.ts /tmp/stage/opt/aj/share/agentjq/") {
		t.Errorf("make install does not install the protocol files into share/agentjq:\n%s", plan)
	}
}
