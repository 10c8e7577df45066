package daemon

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// Session titles and listing, from a plain ws client (npm ws): a title
// given at create, the first prompt's first line without one, a
// session.setTitle (and its session.titled event; a two-line title is
// refused), session.list narrowed by workdir and live, and an ended
// session listed with its title. A daemon started again on the same home
// lists both from their recordings, titles kept.
func TestLiveSessionTitlesAndList(t *testing.T) {
	t.Parallel()
	mods := nodeModules(t)
	home := t.TempDir()
	srv, wd1 := liveServer(t, Options{Home: home})
	wd2 := filepath.Join(t.TempDir(), "other")
	if err := os.Mkdir(wd2, 0o755); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.HTTPHandler(context.Background(), SchemaJSON(), false))
	defer hs.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	url := "ws" + strings.TrimPrefix(hs.URL, "http") + "/ws"
	cmd := exec.CommandContext(ctx, "node", "testdata/wslist.cjs", url, srv.Token(), wd1, wd2, ProtocolVersion)
	cmd.Env = append(os.Environ(), "NODE_PATH="+mods)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node client: %v\n%s", err, out)
	}
	var r struct {
		A, B                             string
		First, Renamed, InWd2, Live, All map[string]*string
		TitledEvent                      string
		BadTitle                         string
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	str := func(s string) *string { return &s }
	check := func(what string, got, want map[string]*string) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %s", what, out)
		}
	}
	check("first", r.First, map[string]*string{r.A: str("Fix the build"), r.B: str("SAY hello")})
	check("renamed", r.Renamed, map[string]*string{r.A: str("Fix the build"), r.B: str("Say hello")})
	check("in wd2", r.InWd2, map[string]*string{r.B: str("Say hello")})
	check("live", r.Live, map[string]*string{r.B: str("Say hello")})
	check("all", r.All, map[string]*string{r.A: str("Fix the build"), r.B: str("Say hello")})
	if r.TitledEvent != "Say hello" || r.BadTitle != CodeInvalidParams {
		t.Errorf("session.titled %q, a two-line title: %q", r.TitledEvent, r.BadTitle)
	}

	// Another daemon on the same home reads both from the recordings.
	srv.Shutdown()
	again, _ := liveServer(t, Options{Home: home})
	c := connect(t, again, true)
	c.hello(again.Token())
	var lr ListResult
	c.must("session.list", ListParams{}, &lr)
	got := map[string]string{}
	for _, s := range lr.Sessions {
		got[s.SessionID] = s.Title
	}
	if want := map[string]string{r.A: "Fix the build", r.B: "Say hello"}; !reflect.DeepEqual(got, want) {
		t.Errorf("after a restart: %v, want %v", got, want)
	}
}
