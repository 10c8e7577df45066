// Package filter is the engine of `agentjq filter`: jq (gojq) over a
// stream of NDJSON agent events, line by line, in parallel, with the
// original bytes kept for values that pass through unchanged.
package filter

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"

	"github.com/itchyny/gojq"
)

// Run runs the program of o over in (or o.Files) and writes the results
// to out; problems with single lines go to errOut as
// "agentjq: FILE:LINE: message" and processing goes on. The error carries
// jq's exit status (ExitCode); a Reported one was already written.
func Run(ctx context.Context, in io.Reader, out, errOut io.Writer, o *Options) error {
	src := o.Program
	if o.ProgramFile != "" {
		b, err := os.ReadFile(o.path(o.ProgramFile))
		if err != nil {
			return &Error{Code: ExitUsage, Err: fmt.Errorf("-f: %w", err)}
		}
		src = string(b)
	}
	names, values, err := o.variables()
	if err != nil {
		return err
	}
	e := &engine{
		ctx:  ctx,
		o:    o,
		errW: errOut,
		st: style{indent: o.Indent, tab: o.Tab, ascii: o.ASCII, raw: o.Raw, join: o.Join,
			seq: o.Seq, color: o.Color},
	}
	e.bw = bufio.NewWriterSize(out, 64<<10)
	e.lr = &lineReader{ctx: ctx, stdin: in, files: o.Files, dir: o.Dir, rawMode: o.RawInput, seq: o.Seq, lenient: o.Lenient}
	defer func() {
		if e.lr != nil {
			e.lr.close()
		}
	}()
	e.seqSrc = &valueSource{e: e}
	h := hooks{
		inputIter: e.seqSrc,
		debug: func(v any) {
			e.stderr(string((&style{}).encode([]byte(`["DEBUG:",`), v, 0)) + "]\n")
		},
		stderr: func(v any) {
			e.stderr(string((&style{}).encode(nil, v, 0)))
		},
		filename: func() any {
			if e.curName == "" || e.curName == "<stdin>" {
				return nil
			}
			return e.curName
		},
		lineNum: func() any { return e.curNum },
	}
	p, err := compileProgram(o, src, names, values, h)
	if err != nil {
		return err
	}
	e.p = p
	e.passThrough = !o.SortKeys
	if !o.NoFastPath && !p.sequential && e.passThrough && !o.Slurp && !o.NullInput && !o.RawInput {
		lib, _ := agentlibQuery()
		p.plan = makePlan(p.query, lib)
	} else {
		p.identity = p.identity && !o.NoFastPath && !o.Slurp && !o.NullInput && !o.RawInput && e.passThrough
	}

	switch {
	case o.NullInput:
		e.runValue(&e.main, nil, nil, "", 0)
		e.flushWorker(&e.main)
	case o.Slurp:
		e.slurp()
	case p.sequential || o.RawInput:
		e.sequential()
	default:
		e.stream()
	}
	if err := e.bw.Flush(); err != nil && e.writeErr == nil {
		e.writeErr = err
	}
	return e.status()
}

func (o *Options) path(name string) string {
	if o.Dir != "" && !filepath.IsAbs(name) {
		return filepath.Join(o.Dir, name)
	}
	return name
}

func (o *Options) workers() int {
	if o.Workers > 0 {
		return o.Workers
	}
	return min(runtime.GOMAXPROCS(0), 4)
}

// variables returns the names and values of --arg and friends, then
// $ARGS.
func (o *Options) variables() ([]string, []any, error) {
	var names []string
	var values []any
	named := map[string]any{}
	for _, a := range o.Named {
		v := a.Value
		switch a.Kind {
		case "slurpfile", "rawfile":
			b, err := os.ReadFile(o.path(a.Value.(string)))
			if err != nil {
				return nil, nil, &Error{Code: ExitUsage, Err: fmt.Errorf("--%s %s: %w", a.Kind, a.Name, err)}
			}
			if a.Kind == "rawfile" {
				v = string(b)
			} else {
				vs, err := decodeAll(b)
				if err != nil {
					return nil, nil, &Error{Code: ExitUsage, Err: fmt.Errorf("--slurpfile %s: %s: %w", a.Name, a.Value, err)}
				}
				if vs == nil {
					vs = []any{}
				}
				v = vs
			}
		}
		names = append(names, a.Name)
		values = append(values, v)
		named[a.Name] = v
	}
	pos := o.Positional
	if pos == nil {
		pos = []any{}
	}
	values = append(values, map[string]any{"positional": pos, "named": named})
	return names, values, nil
}

// engine is one run of a program over the inputs.
type engine struct {
	ctx  context.Context
	o    *Options
	p    *program
	st   style
	lr   *lineReader
	bw   *bufio.Writer
	errW io.Writer

	passThrough bool

	// main is the worker of the sequential, slurp and null-input modes.
	main   worker
	seqSrc *valueSource

	curName string // input_filename in sequential mode
	curNum  int    // input_line_number

	errored   bool // a line or runtime error was reported
	openErr   bool // a file could not be read
	halt      *gojq.HaltError
	outputs   int
	lastFalsy bool
	writeErr  error
}

// worker runs the program on values and collects what it writes; the
// stream mode has one per goroutine.
type worker struct {
	e *engine
	d *decoder
	result
	quoted []byte // "X" of the plan's prefilter
	// handOff passes the output so far on (to the writer or to the stream's
	// queue) and reports whether to go on: an input with a lot of output
	// is handed on in pieces as it comes, never held whole.
	handOff func() bool
	stopped bool // handOff said to stop: the output has no reader
}

// result is what running on some inputs produced, until it is flushed.
type result struct {
	out       []byte
	marks     []mark
	outputs   int
	lastFalsy bool
	errored   bool
	openErr   bool
	halt      *gojq.HaltError
}

// mark is a stderr message to write once out[:at] is written.
type mark struct {
	at  int
	msg string
}

func (e *engine) newWorker() *worker {
	w := &worker{e: e, d: newDecoder()}
	if e.p.plan != nil && e.p.plan.typeValue != "" {
		w.quoted = []byte(`"` + e.p.plan.typeValue + `"`)
	}
	return w
}

func (w *worker) init(e *engine) {
	if w.d == nil {
		*w = *e.newWorker()
		w.handOff = func() bool {
			e.flushWorker(w)
			return e.writeErr == nil
		}
	}
}

func (w *result) report(format string, a ...any) {
	w.marks = append(w.marks, mark{at: len(w.out), msg: fmt.Sprintf(format, a...)})
}

func (e *engine) openFailed(name string, err error) {
	e.openErr = true
	e.stderr(fmt.Sprintf("agentjq: %s: %v\n", name, err))
}

func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// stderr writes a message, after whatever stdout already holds.
func (e *engine) stderr(msg string) {
	e.flushWorker(&e.main)
	if err := e.bw.Flush(); err != nil && e.writeErr == nil {
		e.writeErr = err
	}
	io.WriteString(e.errW, msg)
}

// runValue runs the program on v. raw, when not nil, is v's original text.
func (e *engine) runValue(w *worker, v any, raw []byte, name string, num int) {
	w.init(e)
	iter := e.p.code.RunWithContext(e.ctx, v, e.p.values...)
	for {
		x, ok := iter.Next()
		if !ok {
			return
		}
		if err, isErr := x.(error); isErr {
			if h, ok := haltOf(err); ok {
				w.halt = h
				return
			}
			w.errored = true
			if name == "" {
				w.report("agentjq: error: %v\n", err)
			} else {
				w.report("agentjq: %s:%d: %v\n", name, num, err)
			}
			return
		}
		w.write(x, v, raw)
		if len(w.out) >= spillBytes {
			w.spill()
		}
		if w.stopped {
			return
		}
	}
}

// spill hands the output so far on.
func (w *worker) spill() {
	if !w.stopped && w.handOff != nil && !w.handOff() {
		w.stopped = true
	}
}

// write appends one output value; when it is the input itself (same map
// or array) and its original text is known, that text is written.
func (w *worker) write(x, in any, raw []byte) {
	st := &w.e.st
	if raw != nil && w.e.passThrough && sameContainer(x, in) {
		w.out = st.begin(w.out)
		w.out = st.appendRaw(w.out, raw)
		w.out = st.end(w.out)
	} else {
		w.out = st.appendValue(w.out, x, w.spillInside)
	}
	w.outputs++
	w.lastFalsy = x == nil || x == false
}

// spillInside is spill in the middle of one value's encoding.
func (w *worker) spillInside(b []byte) ([]byte, bool) {
	w.out = b
	w.spill()
	return w.out, !w.stopped
}

// sameContainer reports whether x is in itself (gojq never mutates values,
// so the same map, or the same array start and length, holds the same
// contents).
func sameContainer(x, in any) bool {
	switch x := x.(type) {
	case map[string]any:
		m, ok := in.(map[string]any)
		return ok && x != nil && m != nil && reflect.ValueOf(x).UnsafePointer() == reflect.ValueOf(m).UnsafePointer()
	case []any:
		a, ok := in.([]any)
		return ok && len(x) > 0 && len(x) == len(a) && &x[0] == &a[0]
	}
	return false
}

// line processes one input line: the fast paths of the plan, else decode
// each value on it and run the program.
func (w *worker) line(l line) {
	if l.openErr {
		w.openErr = true
		w.report("agentjq: %s: %s\n", l.name, l.bad)
		return
	}
	if l.warning {
		w.report("agentjq: warning: %s\n", l.bad)
		return
	}
	if l.bad != "" {
		w.errored = true
		w.report("agentjq: %s:%d: %s\n", l.name, l.num, l.bad)
		return
	}
	text := l.text
	if len(bytes.TrimSpace(text)) == 0 {
		return
	}
	e := w.e
	p := e.p
	if p.identity {
		trimmed := bytes.TrimSpace(text)
		k, err := w.d.validateOne(trimmed)
		if err == nil && (k == kindObj || k == kindArr) {
			w.out = e.st.begin(w.out)
			w.out = e.st.appendRawSpaced(w.out, trimmed, w.d.spaced)
			w.out = e.st.end(w.out)
			w.outputs++
			w.lastFalsy = false
			return
		}
	}
	if pl := p.plan; pl != nil && pl.typeValue != "" && prefilterSkips(text, w.quoted) {
		k, err := w.d.validateOne(text)
		if err == nil && (k == kindObj || k == kindNull) {
			return
		}
	}
	if pl := p.plan; pl != nil && pl.only != nil {
		w.d.only = pl.only
	}
	err := w.d.each(text, func(v any, start, end int) error {
		w.d.only = nil
		w.e.runValue(w, v, text[start:end], l.name, l.num)
		if w.halt != nil {
			return errHalt
		}
		return nil
	})
	w.d.only = nil
	if err != nil && err != errHalt {
		w.errored = true
		w.report("agentjq: %s:%d: %v\n", l.name, l.num, err)
	}
}

var errHalt = fmt.Errorf("halt")

// flushWorker moves w's output and messages to the writers in order and
// folds its results into the engine's.
func (e *engine) flushWorker(w *worker) { e.flushResult(&w.result) }

func (e *engine) flushResult(w *result) {
	at := 0
	for _, m := range w.marks {
		e.writeOut(w.out[at:m.at])
		at = m.at
		if err := e.bw.Flush(); err != nil && e.writeErr == nil {
			e.writeErr = err
		}
		io.WriteString(e.errW, m.msg)
	}
	e.writeOut(w.out[at:])
	w.out, w.marks = w.out[:0], w.marks[:0]
	if w.outputs > 0 {
		e.outputs += w.outputs
		e.lastFalsy = w.lastFalsy
	}
	e.errored = e.errored || w.errored
	e.openErr = e.openErr || w.openErr
	if w.halt != nil && e.halt == nil {
		e.halt = w.halt
		e.writeHalt()
	}
	w.outputs, w.errored, w.openErr, w.halt = 0, false, false, nil
}

func (e *engine) writeOut(b []byte) {
	if len(b) == 0 || e.writeErr != nil {
		return
	}
	if _, err := e.bw.Write(b); err != nil {
		e.writeErr = err
	}
}

// writeHalt writes halt_error's value to stderr as jq does: a string as
// is, anything else as JSON and a newline.
func (e *engine) writeHalt() {
	v := e.halt.Value()
	if v == nil {
		return
	}
	if err := e.bw.Flush(); err != nil && e.writeErr == nil {
		e.writeErr = err
	}
	if s, ok := v.(string); ok {
		io.WriteString(e.errW, s)
		return
	}
	io.WriteString(e.errW, string((&style{}).encode(nil, v, 0))+"\n")
}

// status turns what happened into Run's error.
func (e *engine) status() error {
	if e.writeErr != nil {
		return &Error{Code: ExitRuntime, Err: fmt.Errorf("writing the output: %w", e.writeErr)}
	}
	if e.halt != nil {
		if c := e.halt.ExitCode(); c != 0 {
			return &Error{Code: c, Reported: true}
		}
		return nil
	}
	switch {
	case e.openErr:
		return &Error{Code: ExitUsage, Reported: true}
	case e.errored:
		return &Error{Code: ExitRuntime, Reported: true}
	case e.o.ExitStatus && e.outputs == 0:
		return &Error{Code: ExitNoOutput, Reported: true}
	case e.o.ExitStatus && e.lastFalsy:
		return &Error{Code: ExitFalse, Reported: true}
	}
	return nil
}

// flushLive flushes after an input when the output is a pipe or terminal.
func (e *engine) flushLive() {
	if e.o.FlushEachInput {
		if err := e.bw.Flush(); err != nil && e.writeErr == nil {
			e.writeErr = err
		}
	}
}

// valueSource yields the input values one by one: the sequential mode's
// loop and the program's input/inputs share it. Bad lines are reported
// and skipped.
type valueSource struct {
	e       *engine
	pending []pendingValue
}

type pendingValue struct {
	v    any
	raw  []byte
	name string
	num  int
}

// Next implements gojq.Iter for input and inputs.
func (s *valueSource) Next() (any, bool) {
	pv, ok := s.next()
	if !ok {
		return nil, false
	}
	return pv.v, true
}

func (s *valueSource) next() (pendingValue, bool) {
	e := s.e
	for len(s.pending) == 0 {
		if e.halt != nil || e.writeErr != nil {
			return pendingValue{}, false
		}
		l, ok := e.lr.read()
		if !ok {
			return pendingValue{}, false
		}
		e.curName, e.curNum = l.name, l.num
		if l.openErr {
			e.openFailed(l.name, errors.New(l.bad))
			continue
		}
		if l.warning {
			e.stderr("agentjq: warning: " + l.bad + "\n")
			continue
		}
		if l.bad != "" {
			e.errored = true
			e.stderr(fmt.Sprintf("agentjq: %s:%d: %s\n", l.name, l.num, l.bad))
			continue
		}
		if e.o.RawInput {
			return pendingValue{v: string(l.text), name: l.name, num: l.num}, true
		}
		text := append([]byte(nil), l.text...)
		d := e.main.d
		if err := d.each(text, func(v any, start, end int) error {
			s.pending = append(s.pending, pendingValue{v, text[start:end], l.name, l.num})
			return nil
		}); err != nil {
			e.errored = true
			e.stderr(fmt.Sprintf("agentjq: %s:%d: %v\n", l.name, l.num, err))
		}
	}
	pv := s.pending[0]
	s.pending = s.pending[1:]
	return pv, true
}

// sequential runs the program on each value in order on this goroutine.
func (e *engine) sequential() {
	e.main.init(e)
	for e.halt == nil && e.writeErr == nil {
		pv, ok := e.seqSrc.next()
		if !ok {
			break
		}
		e.runValue(&e.main, pv.v, pv.raw, pv.name, pv.num)
		e.flushWorker(&e.main)
		e.flushLive()
	}
}

// slurp runs the program once on every value as one array (-s), or on
// the whole text as one string (-R -s).
func (e *engine) slurp() {
	e.main.init(e)
	if e.o.RawInput {
		b, err := e.lr.readAll()
		if err != nil {
			e.openErr = true
			e.stderr(fmt.Sprintf("agentjq: %v\n", err))
		}
		e.runValue(&e.main, string(b), nil, "", 0)
		e.flushWorker(&e.main)
		return
	}
	all := []any{}
	for {
		pv, ok := e.seqSrc.next()
		if !ok {
			break
		}
		all = append(all, pv.v)
	}
	e.runValue(&e.main, all, nil, "", 0)
	e.flushWorker(&e.main)
}
