package sandbox

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/agentjq/agentjq/protect"
)

// Env is what Caches reads of the agent's environment.
type Env struct {
	Getenv   func(string) string
	LookPath func(string) (string, error) // on the agent's PATH
	Environ  []string                     // the tools asked run with it
}

// cacheProbe bounds each tool asked where its cache is.
const cacheProbe = 5 * time.Second

// Caches returns the build caches ordinary builds write, found the way
// each tool finds them: go env GOCACHE GOMODCACHE, npm_config_cache or ~/.npmrc,
// CARGO_HOME's registry and git checkouts, pip's, uv's, yarn's and pnpm's
// caches, XDG_CACHE_HOME honoured. Install targets (GOBIN, ~/go/bin,
// ~/.cargo/bin, npm's global prefix) are never among them: a program put
// there runs outside the sandbox next time the user runs it. A tool that
// is not installed, or does not answer within cacheProbe, adds its
// default or nothing. Answers are kept for the process: a daemon asks
// once.
func Caches(e Env) []string {
	key := e.Getenv("HOME") + "\x00" + e.Getenv("PATH") + "\x00" + e.Getenv("XDG_CACHE_HOME") + "\x00" + e.Getenv("GOCACHE") + e.Getenv("GOMODCACHE") + e.Getenv("npm_config_cache") + e.Getenv("CARGO_HOME")
	cacheMu.Lock()
	defer cacheMu.Unlock()
	if c, ok := cacheMemo[key]; ok {
		return c
	}
	var c []string
	for _, d := range findCaches(e) {
		if cacheDir(d, e.Getenv("HOME")) {
			c = append(c, d)
		}
	}
	cacheMemo[key] = c
	return c
}

// cacheDir reports whether d may be opened as a cache: inside one of the
// places below HOME that tools keep caches in (cacheRoots), and neither a
// control file nor in one. A tool's answer can be steered (a project's
// .npmrc said cache=/, which made all of / writable), so nothing else is
// taken.
func cacheDir(d, home string) bool {
	if home == "" || !filepath.IsAbs(d) {
		return false
	}
	rel, err := filepath.Rel(filepath.Clean(home), filepath.Clean(d))
	if err != nil || protect.Root(d, home) != "" {
		return false
	}
	for _, r := range cacheRoots {
		if rel == r || strings.HasPrefix(rel, r+"/") {
			return true
		}
	}
	return false
}

// cacheRoots are where below HOME the tools Caches asks keep their caches.
var cacheRoots = []string{".cache", "go/pkg/mod", ".cargo/registry", ".cargo/git", ".npm", "Library/Caches"}

var (
	cacheMu   sync.Mutex
	cacheMemo = map[string][]string{}
)

func findCaches(e Env) []string {
	home := e.Getenv("HOME")
	xdg := e.Getenv("XDG_CACHE_HOME")
	if xdg == "" && home != "" {
		xdg = filepath.Join(home, ".cache")
	}
	var out []string
	var mu sync.Mutex
	add := func(p ...string) {
		mu.Lock()
		defer mu.Unlock()
		for _, s := range p {
			if s = strings.TrimSpace(s); filepath.IsAbs(s) {
				out = append(out, filepath.Clean(s))
			}
		}
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		add(goCaches(e, home, xdg)...)
	}()
	go func() {
		defer wg.Done()
		add(npmCache(e, home))
	}()
	cargo := e.Getenv("CARGO_HOME")
	if cargo == "" && home != "" {
		cargo = filepath.Join(home, ".cargo")
	}
	if cargo != "" {
		add(filepath.Join(cargo, "registry"), filepath.Join(cargo, "git"))
	}
	for _, v := range []struct{ env, dir string }{
		{"PIP_CACHE_DIR", "pip"}, {"UV_CACHE_DIR", "uv"}, {"YARN_CACHE_FOLDER", "yarn"},
		{"", "pnpm"}, {"", "node-gyp"}, {"", "pypoetry"}, {"", "ms-playwright"},
	} {
		if v.env != "" && e.Getenv(v.env) != "" {
			add(e.Getenv(v.env))
		} else if xdg != "" {
			add(filepath.Join(xdg, v.dir))
		}
	}
	wg.Wait()
	return unique(out)
}

// goCaches asks go itself, which reads GOENV's file (go env -w) as well
// as the environment; without go, nothing is needed.
func goCaches(e Env, home, xdg string) []string {
	bin, err := e.LookPath("go")
	if err != nil {
		return nil
	}
	var v struct{ GOCACHE, GOMODCACHE string }
	if out, err := probe(e.Environ, bin, "env", "-json", "GOCACHE", "GOMODCACHE"); err == nil && json.Unmarshal(out, &v) == nil {
		return []string{v.GOCACHE, v.GOMODCACHE}
	}
	// go's own defaults, as go env would say without a GOENV file.
	out := []string{filepath.Join(xdg, "go-build")}
	if home != "" {
		out = append(out, filepath.Join(home, "go", "pkg", "mod"))
	}
	return out
}

// npmCache reads where npm keeps its cache as npm does for the user: the
// npm_config_cache variable, then the user's npmrc (npm_config_userconfig
// or ~/.npmrc); its default is ~/.npm, which holds nothing that runs.
// npm itself is not asked: it is a node program, and starting it cost
// every session 0.2 to 0.6 s. A cache named only in npm's global or
// builtin npmrc is missed, which leaves npm unable to write it in the
// sandbox, never more open.
func npmCache(e Env, home string) string {
	for _, k := range []string{"npm_config_cache", "NPM_CONFIG_CACHE"} {
		if c := e.Getenv(k); c != "" {
			return c
		}
	}
	if home == "" {
		return ""
	}
	rc := filepath.Join(home, ".npmrc")
	for _, k := range []string{"npm_config_userconfig", "NPM_CONFIG_USERCONFIG"} {
		if c := e.Getenv(k); c != "" {
			rc = c
		}
	}
	if c := npmrcCache(rc, home); c != "" {
		return c
	}
	return filepath.Join(home, ".npm")
}

// npmrcCache is the cache key of an npmrc file, "" when it has none or
// when its value uses ${VAR} expansion, which is not followed.
func npmrcCache(file, home string) string {
	b, err := os.ReadFile(file)
	if err != nil {
		return ""
	}
	var c string
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
		if ok && strings.TrimSpace(k) == "cache" {
			c = strings.Trim(strings.TrimSpace(v), `"'`)
		}
	}
	if strings.Contains(c, "${") {
		return ""
	}
	if rest, ok := strings.CutPrefix(c, "~/"); ok {
		c = filepath.Join(home, rest)
	}
	return c
}

// probe runs a tool for its answer on stdout, within cacheProbe.
func probe(env []string, bin string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), cacheProbe)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	// Asked from HOME, not the project: a project's own .npmrc could
	// name any directory as the cache.
	for _, kv := range env {
		if h, ok := strings.CutPrefix(kv, "HOME="); ok && h != "" {
			cmd.Dir = h
		}
	}
	cmd.WaitDelay = time.Second
	return cmd.Output()
}
