package approve

import (
	"path"
	"slices"
	"strings"
)

// Wrappers are programs that run another command (timeout 5 make). Each is
// read with its real option grammar; an option the table does not know
// makes the command unknown, never "the next word is the command".

// Option kinds.
const (
	optFlag    = 'n' // no value
	optValue   = 'v' // takes a value
	optWrite   = 'w' // takes a file the program writes
	optGuard   = 'g' // no value; changes what the inner command may do
	optGuardV  = 'G' // a value; changes what the inner command may do
	optChdir   = 'c' // a directory the inner command runs in
	optUnknown = 'u' // makes the command unreadable (a shell string, a pid)
	optLookup  = 'l' // runs nothing (command -v)
)

type wrapperSpec struct {
	opts map[string]byte // "-s", "--signal"
	// operands before the command: timeout's duration, taskset's mask.
	operands int
	// assigns: NAME=value words before the command (env, sudo).
	assigns bool
	guarded bool // sudo, doas: a form that needs its own allow
	// digitOpt: -N is an option (nice -10).
	digitOpt bool
	// writeOperand: the first operand is a file the wrapper writes
	// (logsave FILE cmd).
	writeOperand bool
	// optsAfter: options may also follow the operands (setarch ARCH -R).
	optsAfter bool
}

func opts(kinds ...string) map[string]byte {
	m := map[string]byte{}
	for _, k := range kinds {
		kind, names, _ := strings.Cut(k, ":")
		for _, n := range strings.Fields(names) {
			m[n] = kind[0]
		}
	}
	return m
}

var wrappers = map[string]wrapperSpec{
	"env": {assigns: true, opts: opts("g:-i --ignore-environment", "n:-0 --null -v --debug", "G:-u --unset",
		"c:-C --chdir", "u:-S --split-string --block-signal --default-signal --ignore-signal --list-signal-handling")},
	"exec":    {opts: opts("v:-a", "g:-c", "n:-l")},
	"command": {opts: opts("n:-p", "l:-v -V")},
	"builtin": {opts: opts()},
	"nice":    {digitOpt: true, opts: opts("v:-n --adjustment")},
	"ionice":  {opts: opts("v:-c -n --class --classdata", "n:-t --ignore", "u:-p -P -u --pid --pgid --uid")},
	"nohup":   {opts: opts()},
	"timeout": {operands: 1, opts: opts("v:-s -k --signal --kill-after", "n:--preserve-status --foreground -v --verbose")},
	"time": {opts: opts("n:-p -v -q -a --verbose --quiet --portability --append", "v:-f --format",
		"w:-o --output")},
	"stdbuf": {opts: opts("v:-i -o -e --input --output --error")},
	"sudo": {guarded: true, assigns: true, opts: opts(
		"v:-u -g -C -h -p -r -t -T -U --user --group --close-from --host --prompt --role --type --command-timeout --other-user",
		"n:-A -b -E -H -n -P -S -k -N --askpass --background --preserve-env --set-home --non-interactive --stdin --reset-timestamp --no-update --preserve-groups",
		"c:-D --chdir",
		"u:-s -i -e -l -v -V -K --shell --login --edit --list --validate --version --remove-timestamp")},
	"doas":    {guarded: true, opts: opts("v:-u", "n:-n", "u:-C -s -L")},
	"setsid":  {opts: opts("n:-c -f -w --ctty --fork --wait")},
	"taskset": {operands: 1, opts: opts("n:-a -c --all-tasks --cpu-list", "u:-p --pid")},
	"chrt": {operands: 1, opts: opts("n:-a -b -d -f -i -o -r -R -v --all-tasks --batch --deadline --fifo --idle --other --rr --reset-on-fork --verbose",
		"v:-T -P -D --sched-runtime --sched-period --sched-deadline", "u:-m -p --max --pid")},
	"strace": {opts: opts(
		"n:-f -ff -F -c -C -q -qq -qqq -t -tt -ttt -T -v -y -yy -k -r -x -xx -w -Z -z -i -n -d -D -DD -DDD --follow-forks --summary-only --summary",
		"v:-e -s -a -O -S -P -I -X -b --string-limit --columns --trace --signal --status --trace-path",
		"w:-o --output",
		"G:-E -u --env --user",
		"u:-p --attach")},
	"watch":       {}, // read by watchCommand
	"setarch":     {operands: 1, optsAfter: true, opts: opts("n:-v -R -F -Z -L -X -B -I -S -T -3 --verbose --addr-no-randomize --fdpic-funcptrs --mmap-page-zero --addr-compat-layout --read-implies-exec --32bit --short-inode --whole-seconds --sticky-timeouts --3gb --4gb --uname-2.6")},
	"linux32":     {opts: opts("n:-v -R -F -Z -L -X -B -I -S -T -3 --verbose --addr-no-randomize --3gb --4gb --uname-2.6")},
	"linux64":     {opts: opts("n:-v -R -F -Z -L -X -B -I -S -T -3 --verbose --addr-no-randomize --3gb --4gb --uname-2.6")},
	"chronic":     {opts: opts("n:-e -v")},
	"ifne":        {opts: opts("n:-n")},
	"logsave":     {writeOperand: true, opts: opts("n:-a -s -v")},
	"systemd-cat": {opts: opts("v:-t -p --identifier --priority --stderr-priority --level-prefix")},
	"caffeinate":  {opts: opts("n:-d -i -m -s -u", "v:-t", "u:-w")},
	"trickle":     {opts: opts("n:-s -v", "v:-d -u -w -t -l -n")},
}

// subRunners run the command after a subcommand (uv run pytest): the
// runner's own form is what an allow must match, and deny and ask rules
// see the command it runs too. An option before that command (or a
// command that runs others in turn) is read as any command at all for
// deny and ask rules.
var subRunners = map[string]string{
	"uv": "run", "poetry": "run", "pipenv": "run", "pdm": "run", "hatch": "run", "rye": "run",
	"bundle": "exec", "pnpm": "exec", "npm": "exec", "yarn": "exec", "conda": "run", "mamba": "run",
	"mise": "exec", "asdf": "exec", "rtx": "exec", "pixi": "run", "devbox": "run",
	"flatpak-spawn": "", "bunx": "", "npx": "", "pnpx": "",
}

// runsOthers reports whether a command seen through a runner runs other
// commands in turn (a shell, a wrapper), which only the walker follows.
func runsOthers(name string) bool {
	base := systemBin(name)
	if base == "" {
		return false
	}
	_, wrap := wrappers[base]
	_, sub := subRunners[base]
	return wrap || sub || shells[base] || opaqueRunners[base] || base == "eval" || base == "xargs" || base == "find" || base == "flock"
}

// runnerSeen returns what a subcommand runner runs, for deny and ask
// rules; nil when words is no such runner.
func runnerSeen(words []shWord) []shForm {
	anything := []shForm{{words: []shWord{{dyn: true}}}}
	if n := cmdName(words[0]); strings.Contains(n, "/") && systemBin(n) == "" && runsOthers(path.Base(n)) {
		// /opt/homebrew/bin/env rm: a wrapper or shell by another path is
		// not looked through for an allow, but may run anything.
		return anything
	}
	name := systemBin(cmdName(words[0]))
	sub, ok := subRunners[name]
	if !ok {
		return nil
	}
	i := 1
	if sub != "" {
		if len(words) < 2 || words[1].uncertain() || words[1].text != sub {
			return nil
		}
		i = 2
	}
	if i >= len(words) || words[i].uncertain() || strings.HasPrefix(words[i].text, "-") || runsOthers(words[i].text) {
		return anything
	}
	return []shForm{{words: words[i:]}}
}

// opaqueRunners run a command in a way agentjq does not read (another
// root, another user, through a shell string, later, in parallel).
var opaqueRunners = map[string]bool{
	"chroot": true, "su": true, "runuser": true, "pkexec": true, "script": true, "parallel": true,
	"unshare": true, "nsenter": true, "systemd-run": true, "firejail": true, "bwrap": true, "setpriv": true,
	"prlimit": true, "numactl": true, "ltrace": true, "valgrind": true, "gdb": true, "busybox": true,
	"toybox": true, "sg": true, "newgrp": true, "faketime": true, "fakeroot": true, "proot": true,
	"dbus-run-session": true, "xvfb-run": true, "unbuffer": true, "catchsegv": true, "ssh-agent": true,
	"torsocks": true, "proxychains": true, "proxychains4": true, "tsp": true, "at": true, "batch": true,
	"cpulimit": true, "cgexec": true, "daemonize": true, "start-stop-daemon": true, "run-parts": true,
	"sem": true, "entr": true, "rlwrap": true, "expect": true, "chpst": true, "nq": true, "sudoedit": true,
	"dtach": true, "screen": true, "tmux": true, "byobu": true, "nocache": true, "eatmydata": true,
	"perf": true, "direnv": true, "hyperfine": true, "pee": true, "nix-shell": true, "vim": true, "vi": true, "nvim": true,
	"ex": true, "view": true, "vimdiff": true, "emacs": true, "emacsclient": true, "i386": true, "x86_64": true,
	"uname26": true, "qemu-x86_64": true, "qemu-aarch64": true, "systemd-inhibit": true, "schroot": true,
	"lxc-attach": true, "machinectl": true, "capsh": true, "setcap": true, "chronyc": false,
}

// loaderName reports a dynamic loader run as a program (ld-linux.so.2
// PROG runs PROG), wherever it lives.
func loaderName(name string) bool {
	b := foldLower(path.Base(name))
	return strings.HasPrefix(b, "ld-") && strings.Contains(b, ".so") || b == "ld.so"
}

// unwrapped is a command read through its wrappers.
type unwrapped struct {
	forms  []shForm
	seen   []shForm // what a subcommand runner runs (runnerSeen)
	code   string   // why the command runs code agentjq does not read
	writes []shWord // files the wrappers and the inner command write
	chdir  bool     // a wrapper moves the inner command elsewhere
	reason string   // unknown
}

// unwrap returns the forms of a command (itself, then each command found
// by looking through a wrapper) and the files it writes.
func unwrap(words []shWord) unwrapped {
	u := unwrapped{forms: []shForm{{words: words}}}
	for range 16 {
		name := systemBin(cmdName(words[0]))
		if loaderName(cmdName(words[0])) {
			u.reason = "a dynamic loader runs a program agentjq does not follow"
			return u
		}
		if opaqueRunners[name] {
			u.reason = name + " runs a command agentjq does not follow"
			return u
		}
		spec, ok := wrappers[name]
		if !ok || name == "watch" {
			break
		}
		inner, step := spec.read(name, words)
		if step.reason != "" {
			u.reason = step.reason
			return u
		}
		u.writes = append(u.writes, step.writes...)
		u.chdir = u.chdir || step.chdir
		if step.lookup || len(inner) == 0 {
			if len(inner) == 0 && !step.lookup && name != "exec" {
				u.reason = name + " without a command is not modelled"
			}
			break
		}
		if step.guarded || spec.guarded {
			u.forms[len(u.forms)-1].guarded = true
		}
		u.forms = append(u.forms, shForm{words: inner})
		words = inner
	}
	u.seen = runnerSeen(words)
	u.code = inlineCode(words)
	w, reason := commandWrites(words)
	if reason == "" {
		reason = runsPrograms(words)
	}
	if reason != "" {
		u.reason = reason
	}
	u.writes = append(u.writes, w...)
	return u
}

type wrapStep struct {
	writes  []shWord
	guarded bool
	chdir   bool
	lookup  bool
	reason  string
}

// read parses a wrapper's options and returns the command it runs.
func (spec wrapperSpec) read(name string, words []shWord) ([]shWord, wrapStep) {
	var st wrapStep
	fail := func(why string) ([]shWord, wrapStep) {
		st.reason = name + ": " + why
		return nil, st
	}
	apply := func(kind byte, val shWord, hasVal bool, opt string) bool {
		switch kind {
		case optGuard:
			st.guarded = true
		case optGuardV:
			st.guarded = true
		case optChdir:
			st.chdir, st.guarded = true, true
		case optWrite:
			st.writes = append(st.writes, val)
		case optUnknown:
			st.reason = name + ": option " + opt + " is not modelled"
			return false
		case optLookup:
			st.lookup = true
		}
		return true
	}
	i := 1
	for i < len(words) {
		w := words[i]
		if w.uncertain() {
			return fail("an option chosen at run time")
		}
		t := w.text
		if t == "--" {
			i++
			break
		}
		if spec.assigns && !strings.HasPrefix(t, "-") && strings.Contains(t, "=") {
			if n := t[:strings.IndexByte(t, '=')]; !isSafeEnv(n) {
				st.guarded = true
			}
			i++
			continue
		}
		if t == "-" {
			if name != "env" {
				return fail("a lone - is not modelled")
			}
			st.guarded = true // env - is env -i
			i++
			continue
		}
		if !strings.HasPrefix(t, "-") {
			break
		}
		if spec.digitOpt && isDigits(t[1:]) {
			i++
			continue
		}
		i++
		if strings.HasPrefix(t, "--") {
			opt, val, hasVal := strings.Cut(t, "=")
			kind, ok := spec.opts[opt]
			if !ok {
				return fail("option " + opt + " is not modelled")
			}
			takes := kind == optValue || kind == optWrite || kind == optGuardV || kind == optChdir
			v := shWord{text: val}
			if takes && !hasVal {
				if i >= len(words) {
					return fail("option " + opt + " without its value")
				}
				v = words[i]
				i++
			} else if hasVal && !takes && opt != "--preserve-env" {
				return fail("option " + opt + " takes no value")
			}
			if !apply(kind, v, true, opt) {
				return nil, st
			}
			continue
		}
		// Short options, possibly bundled: -fq, -n5, -ofile.
		for j := 1; j < len(t); j++ {
			opt := "-" + t[j:j+1]
			if kind, ok := spec.opts["-"+t[1:]]; ok && j == 1 && len(t) > 2 && kind == optFlag {
				break // a multi-letter flag such as strace -ff
			}
			kind, ok := spec.opts[opt]
			if !ok {
				return fail("option " + opt + " is not modelled")
			}
			takes := kind == optValue || kind == optWrite || kind == optGuardV || kind == optChdir
			if !takes {
				if !apply(kind, shWord{}, false, opt) {
					return nil, st
				}
				continue
			}
			v := shWord{text: t[j+1:]}
			if j+1 >= len(t) {
				if i >= len(words) {
					return fail("option " + opt + " without its value")
				}
				v = words[i]
				i++
			}
			if !apply(kind, v, true, opt) {
				return nil, st
			}
			break
		}
	}
	if st.lookup {
		return nil, st
	}
	for range spec.operands {
		if i >= len(words) || words[i].uncertain() {
			return fail("an operand chosen at run time")
		}
		i++
	}
	if spec.optsAfter && i < len(words) && (words[i].uncertain() || strings.HasPrefix(words[i].text, "-")) {
		// setarch ARCH -R cmd: options may follow the operand.
		rest := spec
		rest.operands, rest.optsAfter = 0, false
		inner, more := rest.read(name, append([]shWord{words[0]}, words[i:]...))
		more.writes = append(st.writes, more.writes...)
		more.guarded = more.guarded || st.guarded
		more.chdir = more.chdir || st.chdir
		return inner, more
	}
	if spec.writeOperand {
		if i >= len(words) {
			return fail("no file operand")
		}
		st.writes = append(st.writes, words[i])
		i++
	}
	if i >= len(words) {
		return nil, st
	}
	return words[i:], st
}

// watchCommand finds where watch's command starts; exec reports -x (the
// words run as they are; otherwise they are joined into a sh -c script).
func watchCommand(words []shWord) (start int, exec, ok bool) {
	spec := opts("n:-d -t -b -e -g -c -p -x -r -w --differences --no-title --beep --errexit --chgexit --color --precise --exec --no-rerun --no-wrap",
		"v:-n -q --interval --equexit")
	i := 1
	for i < len(words) {
		w := words[i]
		if w.uncertain() {
			return 0, false, false
		}
		t := w.text
		if t == "--" {
			i++
			break
		}
		if !strings.HasPrefix(t, "-") {
			break
		}
		opt, _, hasVal := strings.Cut(t, "=")
		kind, known := spec[opt]
		if !known {
			return 0, false, false
		}
		if opt == "-x" || opt == "--exec" {
			exec = true
		}
		i++
		if kind == optValue && !hasVal {
			i++
		}
	}
	return i, exec, i < len(words)
}

// flock FILE COMMAND..., flock FILE -c SCRIPT, flock FD. The lock file is
// created: a write.
func (w *walker) flock(words []shWord, src string, at dirSet, script func(shWord), unknown func(string)) {
	spec := opts("n:-s -x -e -u -n -o -F --shared --exclusive --unlock --nonblock --close --no-fork --verbose", "v:-w -E --timeout --conflict-exit-code")
	i := 1
	for i < len(words) && !words[i].uncertain() && strings.HasPrefix(words[i].text, "-") {
		opt, _, hasVal := strings.Cut(words[i].text, "=")
		kind, ok := spec[opt]
		if !ok {
			unknown("flock option " + opt + " is not modelled")
			return
		}
		i++
		if kind == optValue && !hasVal {
			i++
		}
	}
	if i >= len(words) || words[i].uncertain() {
		unknown("flock with a lock chosen at run time")
		return
	}
	if isDigits(words[i].text) && i+1 == len(words) {
		return // flock FD: locks an open descriptor
	}
	w.parts = append(w.parts, shPart{write: true, writePath: words[i], dirs: at, src: src})
	i++
	if i < len(words) && (words[i].text == "-c" || words[i].text == "--command") {
		if i+1 < len(words) {
			script(words[i+1])
		} else {
			unknown("flock -c without a script")
		}
		return
	}
	w.nested(words[i:], src, at)
}

// xargs runs its command with words read from stdin added: the inner
// command is read with a word that is unknown at the end, or with the
// replace string standing for unknown text.
func (w *walker) xargs(words []shWord, src string, at dirSet, unknown func(string)) {
	spec := opts("n:-0 -r -t -x -o --null --no-run-if-empty --verbose --exit --open-tty --show-limits",
		"v:-a -d -E -L -n -P -s -I --arg-file --delimiter --max-lines --max-args --max-procs --max-chars --eof",
		"u:-p --interactive --process-slot-var")
	replace := ""
	i := 1
	for i < len(words) {
		wd := words[i]
		if wd.uncertain() {
			unknown("xargs option chosen at run time")
			return
		}
		t := wd.text
		if t == "--" {
			i++
			break
		}
		if !strings.HasPrefix(t, "-") || t == "-" {
			break
		}
		i++
		// -i[R], -l[N], -e[E]: optional values attached, never separate.
		switch {
		case t == "-i" || t == "--replace":
			replace = "{}"
			continue
		case strings.HasPrefix(t, "-i"):
			replace = t[2:]
			continue
		case strings.HasPrefix(t, "--replace="):
			replace = t[len("--replace="):]
			continue
		case strings.HasPrefix(t, "-l") || strings.HasPrefix(t, "-e") || strings.HasPrefix(t, "--max-lines=") || strings.HasPrefix(t, "--eof="):
			continue
		}
		opt, val, hasVal := strings.Cut(t, "=")
		if !strings.HasPrefix(t, "--") {
			opt, val, hasVal = t[:2], t[2:], len(t) > 2
		}
		kind, ok := spec[opt]
		if !ok {
			unknown("xargs option " + opt + " is not modelled")
			return
		}
		if kind == optUnknown {
			unknown("xargs option " + opt + " is not modelled")
			return
		}
		if kind == optValue && !hasVal {
			if i >= len(words) {
				unknown("xargs option without its value")
				return
			}
			val = words[i].text
			i++
		}
		if opt == "-I" {
			replace = val
		}
	}
	inner := append([]shWord{}, words[i:]...)
	if len(inner) == 0 {
		inner = []shWord{{text: "echo"}}
	}
	if replace == "" {
		inner = append(inner, shWord{dyn: true})
	} else {
		for k := range inner {
			if strings.Contains(inner[k].text, replace) {
				inner[k] = shWord{dyn: true}
			}
		}
	}
	w.nested(inner, src, at)
}

// find: -exec/-execdir/-ok/-okdir run commands with the found name as an
// unknown word; -delete and -fprint* write. A word whose value is not
// known may be any action, so the command is unknown.
func (w *walker) find(words []shWord, src string, at dirSet, unknown func(string)) {
	var starts []shWord
	expr := false
	for i := 1; i < len(words); i++ {
		wd := words[i]
		if wd.uncertain() {
			unknown("find with a word chosen at run time (it may be an action)")
			return
		}
		t := wd.text
		if !expr && (strings.HasPrefix(t, "-") && t != "-" || t == "(" || t == "!") {
			expr = true
		}
		if !expr {
			starts = append(starts, wd)
			continue
		}
		switch t {
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(words) && words[j].text != ";" && words[j].text != "+" {
				j++
			}
			inner := append([]shWord{}, words[i+1:j]...)
			for k := range inner {
				if strings.Contains(inner[k].text, "{}") {
					inner[k] = shWord{dyn: true}
				}
			}
			if len(inner) == 0 {
				unknown("find -exec without a command")
				return
			}
			if t == "-execdir" || t == "-okdir" {
				w.nested(inner, src, dirSet{unknown: true})
			} else {
				w.nested(inner, src, at)
			}
			i = j
		case "-fprint", "-fprint0", "-fprintf", "-fls":
			if i+1 < len(words) {
				w.parts = append(w.parts, shPart{write: true, writePath: words[i+1], dirs: at, src: src})
			}
		case "-delete":
			if len(starts) == 0 {
				starts = []shWord{{text: "."}}
			}
			for _, s := range starts {
				w.parts = append(w.parts, shPart{write: true, writePath: s, dirs: at, src: src})
			}
		}
	}
}

// commandWrites returns the files a command writes by its arguments: tee's
// files, cp/mv/ln/install targets, dd of=, sort -o, curl -o, git --output,
// any program's --output=FILE, and the files touch, mkdir, rm and their
// kin change. reason is set when it writes somewhere agentjq cannot name
// (curl -O, wget without -O, tar -x).
func commandWrites(words []shWord) ([]shWord, string) {
	name := systemBin(cmdName(words[0]))
	args := words[1:]
	operands := func(skipValue string) []shWord {
		var out []shWord
		dash := false
		for i := 0; i < len(args); i++ {
			a := args[i]
			if !dash && !a.uncertain() && strings.HasPrefix(a.text, "-") && a.text != "-" {
				if a.text == "--" {
					dash = true
				} else if len(a.text) == 2 && strings.Contains(skipValue, a.text[1:]) {
					i++
				}
				continue
			}
			out = append(out, a)
		}
		return out
	}
	// optValues: abbrev takes prefixes of long options too, right only
	// where they are the program's own (not for the generic --output).
	optValues := func(abbrev bool, short string, long ...string) []shWord {
		var out []shWord
		for i := 0; i < len(args); i++ {
			a := args[i]
			if a.uncertain() {
				continue
			}
			t := a.text
			for _, l := range long {
				if v, ok := strings.CutPrefix(t, l+"="); ok {
					out = append(out, shWord{text: v})
				} else if t == l && i+1 < len(args) {
					out = append(out, args[i+1])
				} else if abbrev && longIs(t, l) {
					// An abbreviation (--target for --target-directory).
					if _, v, ok := strings.Cut(t, "="); ok {
						out = append(out, shWord{text: v})
					} else if i+1 < len(args) {
						out = append(out, args[i+1])
					}
				}
			}
			if short != "" && strings.HasPrefix(t, "-") && !strings.HasPrefix(t, "--") {
				if k := strings.IndexAny(t[1:], short); k >= 0 {
					if rest := t[k+2:]; rest != "" {
						out = append(out, shWord{text: rest})
					} else if i+1 < len(args) {
						out = append(out, args[i+1])
					}
				}
			}
		}
		return out
	}
	// Options that name an output file, whatever the program (go build
	// -o, gcc -o, pandoc --output=, openssl -out): writes.
	long := []string{"--output"}
	if formatOutput[name] {
		long = nil // --output json: a format, not a file
	}
	generic := optValues(false, "", append(long, "--output-file", "--outfile", "--out-file", "--out", "--log-file", "--logfile", "-out", "--output-directory", "--outdir", "--out-dir", "--target-dir")...)
	if shortOutput[name] {
		// -o FILE, -oFILE, -o=FILE; these programs do not bundle
		// single-letter options (gcc -fno-omit-frame-pointer is no -o).
		for i, a := range args {
			switch {
			case a.uncertain():
			case a.text == "-o" && i+1 < len(args):
				generic = append(generic, args[i+1])
			case strings.HasPrefix(a.text, "-o") && len(a.text) > 2:
				generic = append(generic, shWord{text: strings.TrimPrefix(a.text[2:], "=")})
			}
		}
	}
	out, reason := namedWrites(name, args, operands, optValues)
	return append(out, generic...), reason
}

// formatOutput are programs whose --output names a format.
var formatOutput = map[string]bool{"kubectl": true, "aws": true, "gcloud": true, "az": true, "gh": true, "helm": true,
	"oc": true, "doctl": true, "terraform": true, "pulumi": true, "flux": true, "eksctl": true, "vault": true}

// shortOutput are programs whose -o names the file they write.
var shortOutput = map[string]bool{
	"gcc": true, "g++": true, "cc": true, "c++": true, "clang": true, "clang++": true, "ld": true,
	"rustc": true, "pandoc": true, "gofmt": false, "javac": false, "nasm": true, "as": true, "zig": true,
	"tcc": true, "musl-gcc": true, "gfortran": true, "swiftc": true, "ghc": true, "ocamlopt": true,
	"protoc": false, "esbuild": false, "upx": true, "strip": true, "objcopy": false, "cpp": true,
	"base64": true, "xxd": false, "openssl": true, "ssh-keygen": false, "jar": false, "pdftotext": false,
}

func namedWrites(name string, args []shWord, operands func(string) []shWord, optValues func(bool, string, ...string) []shWord) ([]shWord, string) {
	optValue := func(short string, long ...string) []shWord { return optValues(true, short, long...) }
	switch name {
	case "tee":
		return operands(""), ""
	case "cp", "mv", "install", "ln":
		// The target, and what lands in it if it is a directory: the
		// target joined with each source's name (cp -r x/.claude . writes
		// ./.claude).
		valued := "St" // --suffix, --target-directory
		if name == "install" {
			valued = "Stmog"
		}
		ops := operands(valued)
		target := optValue("t", "--target-directory")
		sources := ops
		symbolic := false
		for _, a := range args {
			if !a.uncertain() && (longIs(a.text, "--symbolic") || strings.HasPrefix(a.text, "-") && !strings.HasPrefix(a.text, "--") && strings.Contains(a.text, "s")) {
				symbolic = true
			}
		}
		switch {
		case len(target) == 0 && name == "ln" && len(ops) == 1:
			// ln -s ../x makes ./x: the link lands in the directory the
			// shell is in, under the source's name.
			b := path.Base(strings.TrimRight(ops[0].text, "/"))
			if ops[0].uncertain() || b == "." || b == ".." || b == "/" {
				return nil, "ln makes a link named at run time"
			}
			if symbolic {
				return []shWord{{text: b}}, ""
			}
			return append([]shWord{{text: b}}, ops...), "" // a hard link: its source is written under the new name
		case len(target) == 0 && len(ops) > 0:
			target, sources = ops[len(ops)-1:], ops[:len(ops)-1]
		}
		out := append([]shWord(nil), target...)
		for _, t := range target {
			for _, src := range sources {
				b := path.Base(strings.TrimRight(src.text, "/"))
				if t.uncertain() || src.uncertain() || b == "." || b == ".." || b == "/" {
					return nil, name + " copies into a directory names agentjq cannot tell"
				}
				out = append(out, shWord{text: strings.TrimRight(t.text, "/") + "/" + b})
			}
		}
		// -T puts what a directory holds onto the target itself: a .claude
		// or .git the source holds lands there unnamed, so a recursive copy
		// or a move with -T writes those names too, as far as rules can
		// tell (in a project that has none yet, nothing else would see it).
		recursive, spread := name == "mv", false
		for _, a := range args {
			switch t := a.text; {
			case a.uncertain():
			case longIs(t, "--recursive") || longIs(t, "--archive"):
				recursive = true
			case longIs(t, "--no-target-directory"):
				spread = true
			case strings.HasPrefix(t, "-") && !strings.HasPrefix(t, "--"):
				spread = spread || strings.Contains(t, "T")
				recursive = recursive || strings.ContainsAny(t, "rRa")
			}
		}
		if spread && recursive {
			for _, t := range target {
				for _, n := range []string{".claude", ".git", ".mcp.json", ".envrc"} {
					out = append(out, shWord{text: strings.TrimRight(t.text, "/") + "/" + n})
				}
			}
		}
		if name == "mv" || name == "ln" && !symbolic {
			// mv's sources go away; a hard link makes its source writable
			// under the new name.
			out = append(out, sources...)
		}
		return out, ""
	case "tar", "bsdtar":
		if tarLists(args) {
			return nil, ""
		}
		return nil, name + " writes files it does not name on the command line"
	case "go":
		// go's flags take one dash or two, with = or a separate value.
		var out []shWord
		for i, a := range args {
			if a.uncertain() {
				continue
			}
			t := strings.TrimPrefix(strings.TrimPrefix(a.text, "-"), "-")
			if !strings.HasPrefix(a.text, "-") {
				continue
			}
			flag, val, hasVal := strings.Cut(t, "=")
			switch flag {
			case "o", "coverprofile", "cpuprofile", "memprofile", "blockprofile", "mutexprofile", "trace", "outputdir", "modfile", "fuzzcachedir":
				if hasVal {
					out = append(out, shWord{text: val})
				} else if i+1 < len(args) {
					out = append(out, args[i+1])
				}
			}
		}
		return out, ""
	case "uniq", "xxd":
		// uniq IN OUT, xxd [-r] IN OUT: the second operand is written.
		ops := operands("fsw" + map[string]string{"xxd": "cglo", "uniq": ""}[name])
		if len(ops) > 1 {
			return ops[1:2], ""
		}
		return nil, ""
	case "shuf", "iconv", "sdiff":
		return optValue("o", "--output"), ""
	case "sponge":
		return operands(""), ""
	case "gzip", "bzip2", "xz", "lzma", "lz4", "compress", "pigz", "zstd", "brotli", "gunzip", "unxz", "bunzip2", "unlzma", "unzstd":
		for _, a := range args {
			if !a.uncertain() && (a.text == "-c" || a.text == "--stdout" || a.text == "-t" || a.text == "--test" || a.text == "-l" || a.text == "--list" ||
				strings.HasPrefix(a.text, "-") && !strings.HasPrefix(a.text, "--") && strings.ContainsAny(a.text, "ctl")) {
				return nil, ""
			}
		}
		// In place: the file goes away and its (de)compressed twin appears.
		var out []shWord
		for _, o := range operands("S") {
			out = append(out, o)
			if !o.uncertain() {
				out = append(out, shWord{text: o.text + ".z"})
				if i := strings.LastIndexByte(o.text, '.'); i > strings.LastIndexByte(o.text, '/')+1 {
					out = append(out, shWord{text: o.text[:i]})
				}
			}
		}
		return out, ""
	case "zip":
		ops := operands("bnt")
		if len(ops) > 0 {
			return ops[:1], ""
		}
		return nil, ""
	case "rsync", "unzip", "patch", "cpio", "7z", "7za", "ar", "pax", "jar", "rename", "unrar", "ditto":
		// ditto merges a directory's contents (.claude among them) into
		// its target; pax -r and jar x extract; rename computes names.
		return nil, name + " writes files it does not name on the command line"
	case "link":
		return operands(""), "" // a hard link: both names write the file
	case "yq", "sd":
		// In place: yq -i, sd unless -p. Every operand may be a file it
		// rewrites (the expression need not be one: yq --from-file).
		flag, long := "i", "--inplace"
		if name == "sd" {
			flag, long = "p", "--preview"
		}
		set := false
		for _, a := range args {
			if a.uncertain() && name == "yq" || !a.uncertain() && (longIs(a.text, long) || isOption(a.text) && a.text[1] != '-' && strings.Contains(a.text, flag)) {
				set = true // a word known only at run time may be yq's -i
			}
		}
		if set != (name == "yq") {
			return nil, ""
		}
		return operands(""), ""
	case "docker", "podman", "kubectl", "oc", "aws", "gsutil", "gcloud":
		// docker [container] cp SRC DEST, kubectl cp SRC DEST, aws s3
		// cp|mv|sync SRC DEST: every local operand after the source may be
		// the destination (an option's value may stand anywhere among
		// them); mv's source goes away too.
		verbs := map[string][][]string{
			"docker": {{"cp"}, {"container", "cp"}}, "podman": {{"cp"}, {"container", "cp"}}, "kubectl": {{"cp"}}, "oc": {{"cp"}},
			"aws": {{"s3", "cp"}, {"s3", "mv"}, {"s3", "sync"}}, "gsutil": {{"cp"}, {"mv"}, {"rsync"}},
			"gcloud": {{"storage", "cp"}, {"storage", "mv"}, {"storage", "rsync"}},
		}[name]
		for _, v := range verbs {
			rest, ok, why := verbAt(args, v...)
			if why != "" {
				return nil, name + why
			}
			if !ok {
				continue
			}
			if v[len(v)-1] != "mv" && len(rest) > 0 {
				rest = rest[1:]
			}
			return localOperands(rest), ""
		}
		return nil, ""
	case "gh", "svn", "hg", "jj", "fossil":
		// gh repo clone R [DIR], svn checkout|export URL... [DIR], hg clone
		// URL [DIR], jj git clone URL [DIR]: the clone lands in a local
		// operand after the source, or in a directory named by the source.
		// (gh pr checkout switches a branch here, as git checkout does.)
		verbs := map[string][][]string{"gh": {{"repo", "clone"}, {"repo", "fork"}}, "svn": {{"checkout"}, {"co"}, {"export"}},
			"hg": {{"clone"}, {"clon"}, {"clo"}}, "jj": {{"git", "clone"}}, "fossil": {{"clone"}}}[name]
		for _, v := range verbs {
			rest, ok, why := verbAt(args, v...)
			if why != "" {
				return nil, name + why
			}
			if !ok || v[len(v)-1] == "fork" && !hasWord(args, "--clone") {
				continue
			}
			if len(rest) > 0 {
				rest = rest[1:]
			}
			if out := localOperands(rest); len(out) > 0 && v[len(v)-1] != "fork" {
				return out, ""
			}
			return nil, name + " clones into a directory named by the source"
		}
		return nil, ""
	case "npm", "pnpm", "yarn", "bun", "pip", "pip3", "uv", "pipx":
		// config set (npm set, npm c set) writes the user's rc file or
		// the project's; --prefix, --target and --root name where
		// packages land. Options are taken as written: --global and
		// --pre are options of their own, not abbreviations.
		var out []shWord
		for _, v := range [][]string{{"config", "set"}, {"config", "delete"}, {"config", "rm"}, {"config", "edit"}, {"config", "unset"}, {"c", "set"}, {"set"}} {
			_, ok, why := verbAt(args, v...)
			if why != "" {
				return nil, name + why
			}
			if ok {
				out = append(out, shWord{text: "~/.npmrc"}, shWord{text: ".npmrc"}, shWord{text: "~/.yarnrc"}, shWord{text: ".yarnrc.yml"}, shWord{text: "~/.config/pip/pip.conf"})
				break
			}
		}
		if strings.HasPrefix(name, "pip") || name == "uv" {
			return append(out, optValues(false, "t", "--target", "--root", "--prefix")...), ""
		}
		return append(out, optValues(false, "", "--prefix", "--global-dir", "--modules-folder", "--cwd")...), ""
	case "touch", "mkdir", "rmdir", "rm", "truncate", "shred", "unlink", "mkfifo", "mknod":
		return operands("rdstm"), ""
	case "chmod", "chown", "chgrp":
		ops := operands("")
		for _, a := range args {
			// --reference: the mode comes from a file; -w,+x: a mode that
			// looks like an option. Either way every operand is a target.
			if !a.uncertain() && (longIs(a.text, "--reference") || name == "chmod" && len(a.text) > 1 && a.text[0] == '-' && a.text[1] != '-' && strings.Trim(a.text[1:], "cfvR") != "") {
				return ops, ""
			}
		}
		if len(ops) > 1 {
			return ops[1:], ""
		}
		return nil, ""
	case "dd":
		var out []shWord
		for _, a := range args {
			if a.uncertain() {
				return nil, "dd with an operand chosen at run time"
			}
			if v, ok := strings.CutPrefix(a.text, "of="); ok {
				out = append(out, shWord{text: v})
			}
		}
		return out, ""
	case "sort":
		return optValue("o", "--output"), ""
	case "sed", "perl":
		for _, a := range args {
			if a.uncertain() || strings.HasPrefix(a.text, "-i") || longIs(a.text, "--in-place") ||
				(strings.HasPrefix(a.text, "-") && !strings.HasPrefix(a.text, "--") && strings.Contains(a.text, "i")) {
				if a.uncertain() {
					continue
				}
				return nil, name + " -i edits files in place (use Edit, or a rule for the files)"
			}
		}
		return nil, ""
	case "mktemp":
		// A template with a directory, or -p DIR: the file is made there.
		dir := optValue("p", "--tmpdir")
		for _, o := range operands("p") {
			switch {
			case o.uncertain():
				return nil, "mktemp with a template chosen at run time"
			case len(dir) > 0:
				if dir[0].uncertain() {
					return nil, "mktemp with a directory chosen at run time"
				}
				return []shWord{{text: strings.TrimRight(dir[0].text, "/") + "/" + o.text}}, ""
			case strings.Contains(o.text, "/"):
				return []shWord{o}, ""
			}
		}
		return nil, ""
	case "scp":
		// The last operand, when it is local, is written.
		ops := operands("PioFSlcJD")
		if len(ops) > 1 {
			t := ops[len(ops)-1]
			if t.uncertain() {
				return nil, "scp to a target chosen at run time"
			}
			if c := strings.IndexByte(t.text, ':'); c < 0 || strings.Contains(t.text[:c], "/") {
				out := []shWord{t}
				for _, src := range ops[:len(ops)-1] {
					if b := path.Base(src.text); !src.uncertain() && b != "." && b != "/" && b != ".." {
						out = append(out, shWord{text: strings.TrimRight(t.text, "/") + "/" + b})
					}
				}
				return out, ""
			}
		}
		return nil, ""
	case "curl":
		for _, a := range args {
			if !a.uncertain() && (a.text == "-K" || longIs(a.text, "--config") || strings.HasPrefix(a.text, "-K") ||
				strings.HasPrefix(a.text, "-") && !strings.HasPrefix(a.text, "--") && strings.Contains(curlCluster(a.text), "K")) {
				return nil, "curl reads options (an output file among them) from a config file"
			}
		}
		for _, a := range args {
			if !a.uncertain() && (a.text == "-O" || longIs(a.text, "--remote-name") || longIs(a.text, "--remote-name-all") || a.text == "-J" || longIs(a.text, "--output-dir") || longIs(a.text, "--remote-header-name") ||
				strings.HasPrefix(a.text, "-") && !strings.HasPrefix(a.text, "--") && strings.ContainsAny(curlCluster(a.text), "OJ")) {
				return nil, "curl writes a file named by the server"
			}
		}
		return optValue("oDc", "--output", "--dump-header", "--cookie-jar", "--trace", "--trace-ascii", "--stderr", "--libcurl", "--etag-save", "--hsts", "--alt-svc"), ""
	case "wget":
		for _, a := range args {
			if a.uncertain() || a.text == "-e" || longIs(a.text, "--execute") || longIs(a.text, "--config") ||
				strings.HasPrefix(a.text, "-") && !strings.HasPrefix(a.text, "--") && strings.Contains(a.text, "e") {
				return nil, "wget -e runs wgetrc commands (output_document among them)"
			}
		}
		out := optValue("Ooa", "--output-document", "--output-file", "--append-output")
		for _, a := range args {
			if !a.uncertain() && (strings.HasPrefix(a.text, "-P") || longIs(a.text, "--directory-prefix")) {
				return nil, "wget writes into a directory"
			}
		}
		hasDoc := false
		for _, a := range optValue("O", "--output-document") {
			hasDoc = true
			_ = a
		}
		if !hasDoc {
			return nil, "wget writes a file named by the server"
		}
		var kept []shWord
		for _, o := range out {
			if o.text != "-" || o.uncertain() {
				kept = append(kept, o)
			}
		}
		return kept, ""
	case "git":
		out := optValue("", "--output", "--output-directory")
		tree, why := gitTreeWrites(args)
		if why != "" {
			return nil, why
		}
		out = append(out, tree...)
		for _, a := range args {
			if a.uncertain() || a.text == "-C" || longIs(a.text, "--git-dir") || longIs(a.text, "--work-tree") {
				if gitConfigAny(args) || len(out) > 0 {
					return nil, "git writes relative to a directory agentjq cannot follow"
				}
			}
		}
		for i, a := range args {
			if a.uncertain() {
				continue
			}
			switch a.text {
			case "format-patch", "archive", "bundle":
				out = append(out, optValue("o")...)
			case "config":
				return append(out, gitConfigWrites(args[i+1:])...), ""
			}
		}
		return out, ""
	}
	return nil, ""
}

func gitConfigAny(args []shWord) bool {
	for _, a := range args {
		if a.text == "config" || a.text == "format-patch" || a.text == "archive" || a.text == "bundle" {
			return true
		}
	}
	return false
}

// gitConfigWrites: git config without a read-only option writes the
// repository's config (or --global's, or --file's).
func gitConfigWrites(args []shWord) []shWord {
	// Read-only: a read option (--get, --list, --show-origin...) or the
	// get or list subcommand in the first operand's place, and no option
	// or subcommand that writes. A get or list elsewhere is a value
	// (git config alias.x '!cmd' list sets alias.x).
	read, write, first, key := false, false, true, false
	for i := 0; i < len(args); i++ {
		a := args[i]
		t := a.text
		switch {
		case a.uncertain():
			write = true
		case t == "-f" || longIs(t, "--file") || longIs(t, "--blob") || longIs(t, "--type") || longIs(t, "--default") || longIs(t, "--comment"):
			if !strings.Contains(t, "=") {
				i++ // its value (git config --comm --get k v sets k)
			}
		case t == "-l" || t == "--list" || strings.HasPrefix(t, "--get") || strings.HasPrefix(t, "--show"):
			read = true
		case t == "-e" || longIs(t, "--edit") || longIs(t, "--add") || longIs(t, "--replace-all") || longIs(t, "--unset") ||
			longIs(t, "--unset-all") || longIs(t, "--rename-section") || longIs(t, "--remove-section"):
			write = true
		case strings.HasPrefix(t, "-"):
		case first:
			first = false
			switch t {
			case "get", "list":
				read = true
			case "set", "unset", "rename-section", "remove-section", "edit":
			default:
				key = true
			}
		default:
			key = false // a key and a value: set
		}
	}
	if key {
		read = true // git config user.name prints it
	}
	if read && !write {
		return nil
	}
	for i, a := range args {
		switch a.text {
		case "--global":
			return []shWord{{text: "~/.gitconfig"}}
		case "--system":
			return []shWord{{text: "/etc/gitconfig"}}
		case "-f", "--file":
			if i+1 < len(args) {
				return []shWord{args[i+1]}
			}
		}
		if v, ok := strings.CutPrefix(a.text, "--file="); ok {
			return []shWord{{text: v}}
		}
	}
	return []shWord{{text: ".git/config"}}
}

// tarLists reports a tar command that only lists an archive (-t, --list)
// with no option that runs a program or writes.
func tarLists(args []shWord) bool {
	list := false
	for i, a := range args {
		if a.uncertain() {
			return false
		}
		t := a.text
		switch {
		case t == "--list":
			list = true
		case strings.HasPrefix(t, "--"):
			switch opt, _, _ := strings.Cut(t, "="); opt {
			case "--file", "--verbose", "--gzip", "--bzip2", "--xz", "--zstd", "--auto-compress", "--wildcards", "--no-wildcards", "--numeric-owner", "--utc", "--full-time", "--quiet":
			default:
				return false // --to-command, --checkpoint-action, --use-compress-program...
			}
		case strings.HasPrefix(t, "-") || i == 0:
			for _, c := range strings.TrimPrefix(t, "-") {
				switch c {
				case 't':
					list = true
				case 'v', 'f', 'z', 'j', 'J', 'a':
				default:
					return false
				}
			}
		}
	}
	return list
}

// curlValued are curl's short options that surely take a value: in a
// cluster the rest of the word is that value (-XPOST is -X POST, not -O).
// A letter not listed is read as a flag, so the cluster is read on.
const curlValued = "AbcCdDeEFHKmoPQrTtuUwxXyYz"

// curlCluster returns the option letters of a curl short-option cluster:
// up to and including the first that takes a value.
func curlCluster(s string) string {
	s = strings.TrimPrefix(s, "-")
	if i := strings.IndexAny(s, curlValued); i >= 0 {
		return s[:i+1]
	}
	return s
}

// gitTreeWrites returns the files and directories a git subcommand writes
// by name: clone's and init's directory, worktree add's path, the paths
// checkout and restore write. why is set when it writes what it does not
// name (a template with hooks, a separate git directory, a path list read
// from a file, a clone directory agentjq cannot tell from the URL).
func gitTreeWrites(args []shWord) ([]shWord, string) {
	i := 0
	for i < len(args) && !args[i].uncertain() && strings.HasPrefix(args[i].text, "-") {
		switch args[i].text {
		case "-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env", "--exec-path", "--list-cmds", "--attr-source":
			i++
		}
		i++
	}
	if i >= len(args) || args[i].uncertain() {
		return nil, ""
	}
	sub, rest := args[i].text, args[i+1:]
	valued := map[string]bool{}
	for _, o := range strings.Fields(map[string]string{
		"clone":    "-o -b -c -j --origin --branch --config --depth --reference --reference-if-able --jobs --filter --shallow-since --shallow-exclude --server-option --bundle-uri",
		"init":     "-b --initial-branch --object-format --ref-format --shared",
		"worktree": "-b -B --reason",
		"checkout": "-b -B --orphan --conflict",
		"restore":  "-s --source --conflict",
	}[sub]) {
		valued[o] = true
	}
	var ops []shWord
	dash := false
	for k := 0; k < len(rest); k++ {
		a := rest[k]
		if a.uncertain() {
			switch sub {
			case "clone", "init", "worktree", "checkout", "restore", "mv", "merge-file", "bundle", "apply", "am", "read-tree":
				return nil, "git " + sub + " with an operand chosen at run time"
			}
			continue // git commit -m "$(cat <<EOF ...)": no tree write to name
		}
		t := a.text
		switch {
		case dash || !strings.HasPrefix(t, "-") || t == "-":
			ops = append(ops, a)
		case t == "--":
			dash = true
			if sub == "checkout" {
				ops = append(ops, shWord{text: "--"})
			}
		case longIs(t, "--template") || longIs(t, "--separate-git-dir") || longIs(t, "--pathspec-from-file"):
			return nil, "git " + sub + " " + t + " writes what it does not name"
		case sub == "clone" && (t == "-c" || longIs(t, "--config")):
			return nil, "git clone -c sets configuration (core.sshCommand...) that names programs git runs"
		case valued[t]:
			k++
		case strings.HasPrefix(t, "--") && !strings.Contains(t, "="):
			for v := range valued {
				if longIs(t, v) {
					k++ // an abbreviation of an option with a value
					break
				}
			}
		}
	}
	switch sub {
	case "apply", "am":
		// They write the files their patch names, unless only asked to
		// check or describe it.
		if sub == "apply" && hasWord(rest, "--check", "--stat", "--numstat", "--summary", "--cached") && !slices.ContainsFunc(rest, func(a shWord) bool { return longIs(a.text, "--apply") || longIs(a.text, "--index") }) {
			return nil, ""
		}
		return nil, "git " + sub + " writes the files its patch names"
	case "checkout-index", "read-tree", "submodule", "sparse-checkout", "filter-branch":
		if sub == "read-tree" && !hasWord(rest, "-u", "--prefix") ||
			sub == "submodule" && len(ops) > 0 && (ops[0].text == "status" || ops[0].text == "summary") {
			return nil, ""
		}
		if sub == "submodule" {
			// Its URL and path go into .git/config; update and add check
			// out whatever paths .gitmodules names.
			return []shWord{{text: ".git/config"}, {text: ".gitmodules"}}, ""
		}
		return nil, "git " + sub + " writes files agentjq does not name"
	case "mv":
		return ops, ""
	case "merge-file":
		// The first file operand is written; -L labels stand among them.
		if hasWord(rest, "-p", "--stdout") {
			return nil, ""
		}
		return ops, ""
	case "bundle":
		// create FILE REVS...: --version's value may stand before FILE.
		if len(ops) > 1 && ops[0].text == "create" {
			return ops[1:], ""
		}
	case "clone":
		switch len(ops) {
		case 1:
			u := strings.TrimSuffix(strings.TrimSuffix(strings.TrimRight(ops[0].text, "/"), ".git"), ".bundle")
			b := path.Base(strings.ReplaceAll(u, ":", "/"))
			if b == "" || b == "." || b == ".." || b == "/" {
				return nil, "git clone into a directory named by the URL"
			}
			return []shWord{{text: b}}, ""
		case 2:
			return ops[1:], ""
		}
		return nil, "git clone with operands agentjq cannot read"
	case "init":
		if len(ops) == 0 {
			return []shWord{{text: "."}}, ""
		}
		return ops[:1], ""
	case "worktree":
		if len(ops) >= 2 && ops[0].text == "add" {
			return ops[1:2], ""
		}
		if len(ops) >= 3 && ops[0].text == "move" {
			return ops[2:3], ""
		}
	case "checkout":
		for k, o := range ops {
			if o.text == "--" {
				return ops[k+1:], ""
			}
		}
		if len(ops) > 1 {
			return nil, "git checkout of paths without --"
		}
	case "restore":
		return ops, ""
	}
	return nil, ""
}

// longIs reports whether the word w is the long option name, or an
// abbreviation of it, with or without =value: getopt_long and git take
// any prefix that is unambiguous among a program's options (--in for
// --in-place, --t for --target-directory). Where an abbreviation is
// ambiguous the program refuses it, so taking it for name can only make
// agentjq see a write that does not happen.
func longIs(w, name string) bool {
	if !strings.HasPrefix(w, "--") || !strings.HasPrefix(name, "--") {
		return false
	}
	w, _, _ = strings.Cut(w, "=")
	return len(w) > 2 && strings.HasPrefix(name, w)
}

// hasWord reports whether one of words is among ws (its callers have made
// a word known only at run time unknown already).
func hasWord(ws []shWord, words ...string) bool {
	for _, w := range ws {
		if !w.uncertain() && slices.Contains(words, w.text) {
			return true
		}
	}
	return false
}

// verbAt finds a program's subcommand words (s3 cp, repo clone, config
// set) where they stand: the first operands, past options and the words
// just after an option (which may be its values: kubectl -n prod cp,
// npm --location project config set). It returns the operands after them.
// why is set when a word known only at run time stands where the
// subcommand may be.
func verbAt(args []shWord, verb ...string) (rest []shWord, ok bool, why string) {
	k, afterOpt, ended := 0, false, false
	for i, a := range args {
		switch {
		case k == len(verb):
			for _, b := range args[i:] {
				if b.uncertain() || ended || !isOption(b.text) && b.text != "--" {
					rest = append(rest, b)
				}
				ended = ended || b.text == "--"
			}
			return rest, true, ""
		case !a.uncertain() && a.text == "--":
			ended, afterOpt = true, false
		case !ended && !a.uncertain() && isOption(a.text):
			afterOpt = true
		case a.uncertain():
			if !afterOpt {
				return nil, false, " with a subcommand chosen at run time"
			}
			afterOpt = false
		case a.text == verb[k]:
			k, afterOpt = k+1, false
		case afterOpt:
			afterOpt = false // an option's value
		default:
			return nil, false, ""
		}
	}
	return nil, k == len(verb), ""
}

// localOperands keeps the operands that name local files: not a URL, not
// a container's or pod's path (c:/x; a path that starts with / or . is
// local though it holds a colon, as docker reads it), not - (stdout).
func localOperands(ops []shWord) []shWord {
	var out []shWord
	for _, o := range ops {
		t := o.text
		switch {
		case o.uncertain():
			out = append(out, o)
		case t == "-" || strings.Contains(t, "://"):
		case strings.Contains(t, ":") && !strings.HasPrefix(t, "/") && !strings.HasPrefix(t, "."):
		default:
			out = append(out, o)
		}
	}
	return out
}
