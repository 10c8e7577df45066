package filter

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/itchyny/gojq"

	"github.com/agentjq/agentjq/filter/agentlib"
)

// agentlibQuery parses agentlib's definitions once.
var agentlibQuery = sync.OnceValues(func() (*gojq.Query, error) {
	if strings.TrimSpace(agentlib.Source) == "" {
		return nil, nil
	}
	q, err := gojq.Parse(agentlib.Source)
	if err != nil {
		return nil, fmt.Errorf("agentlib does not parse: %w", err)
	}
	return q, nil
})

// moduleLoader serves import/include from -L directories and includes
// agentlib in every program (gojq includes init modules like ~/.jq).
// `import "agentlib" as a;` also works.
type moduleLoader struct {
	dirs gojq.ModuleLoader
}

func (l *moduleLoader) LoadInitModules() ([]*gojq.Query, error) {
	qs := []*gojq.Query{compatQuery()}
	q, err := agentlibQuery()
	if err != nil || q == nil {
		return qs, err
	}
	return append(qs, q), nil
}

// compatSource defines jq 1.6 builtins gojq dropped, so jq programs keep
// working. keys_unsorted returns sorted keys: gojq keeps no key order.
const compatSource = `
def leaf_paths: paths(scalars);
def keys_unsorted: keys;
`

var compatQuery = sync.OnceValue(func() *gojq.Query {
	q, err := gojq.Parse(compatSource)
	if err != nil {
		panic("filter: compat definitions do not parse: " + err.Error())
	}
	return q
})

func (l *moduleLoader) LoadModuleWithMeta(name string, meta map[string]any) (*gojq.Query, error) {
	if name == "agentlib" {
		if q, err := agentlibQuery(); err != nil || q != nil {
			return q, err
		}
	}
	if m, ok := l.dirs.(interface {
		LoadModuleWithMeta(string, map[string]any) (*gojq.Query, error)
	}); ok {
		return m.LoadModuleWithMeta(name, meta)
	}
	return nil, fmt.Errorf("module not found: %q", name)
}

func (l *moduleLoader) LoadJSONWithMeta(name string, meta map[string]any) (any, error) {
	if m, ok := l.dirs.(interface {
		LoadJSONWithMeta(string, map[string]any) (any, error)
	}); ok {
		return m.LoadJSONWithMeta(name, meta)
	}
	return nil, fmt.Errorf("module not found: %q", name)
}

var defaultPrices = sync.OnceValue(agentlib.DefaultPrices)

// prices is the shipped price table, with --prices FILE's models over it.
func (o *Options) prices() (*agentlib.Prices, error) {
	if o.PricesFile == "" {
		return defaultPrices(), nil
	}
	b, err := os.ReadFile(o.path(o.PricesFile))
	if err != nil {
		return nil, &Error{Code: ExitUsage, Err: fmt.Errorf("--prices: %w", err)}
	}
	p, err := agentlib.ParsePrices(b, o.PricesFile)
	if err != nil {
		return nil, &Error{Code: ExitUsage, Err: fmt.Errorf("--prices: %w", err)}
	}
	return defaultPrices().With(p), nil
}

// program is a compiled filter with what the engine learnt about it.
type program struct {
	query  *gojq.Query
	code   *gojq.Code
	values []any // variable values, in the order of the compiled names

	// sequential: the program reads the stream itself (input, inputs),
	// writes to stderr (debug, stderr) or asks which file it is in: its
	// inputs are run one by one, in order, on one goroutine.
	sequential bool
	// identity: the program is `.`; each value is copied, not run.
	identity bool
	// plan is the fast path chosen for the program (fastpath.go).
	plan *plan
}

// hooks are the functions whose behaviour depends on the running engine.
type hooks struct {
	inputIter gojq.Iter
	debug     func(v any) // debug and stderr
	stderr    func(v any)
	filename  func() any
	lineNum   func() any
}

// sequentialNames are the builtins that tie a program to the order of
// the stream or to stderr.
var sequentialNames = []string{"input", "inputs", "_inputs", "debug", "stderr", "input_filename", "input_line_number"}

func compileProgram(o *Options, src string, named []string, values []any, h hooks) (*program, error) {
	q, err := gojq.Parse(src)
	if err != nil {
		return nil, compileError(src, o.ProgramFile, err)
	}
	vars := make([]string, 0, len(named)+1)
	for _, n := range named {
		vars = append(vars, "$"+n)
	}
	vars = append(vars, "$ARGS")
	opts := append([]gojq.CompilerOption{
		gojq.WithModuleLoader(&moduleLoader{dirs: gojq.NewModuleLoader(o.LibDirs)}),
		gojq.WithEnvironLoader(func() []string { return o.Environ }),
		gojq.WithVariables(vars),
		gojq.WithInputIter(h.inputIter),
		gojq.WithFunction("debug", 0, 0, func(v any, _ []any) any { h.debug(v); return v }),
		gojq.WithFunction("stderr", 0, 0, func(v any, _ []any) any { h.stderr(v); return v }),
		gojq.WithFunction("input_filename", 0, 0, func(any, []any) any { return h.filename() }),
		gojq.WithFunction("input_line_number", 0, 0, func(any, []any) any { return h.lineNum() }),
	}, agentlib.Functions...)
	prices, err := o.prices()
	if err != nil {
		return nil, err
	}
	opts = append(append(opts, agentlib.PriceFunctions(prices)...), agentlib.InputsFunction(h.inputIter))
	code, err := gojq.Compile(q, opts...)
	if err != nil {
		return nil, compileError(src, o.ProgramFile, err)
	}
	p := &program{query: q, code: code, values: values}
	p.sequential = usesAny(q, sequentialClosure())
	p.identity = isIdentity(q)
	return p, nil
}

// sequentialClosure adds to sequentialNames the agentlib definitions that
// call them, directly or not.
var sequentialClosure = sync.OnceValue(func() map[string]bool {
	names := map[string]bool{}
	for _, n := range sequentialNames {
		names[n] = true
	}
	q, _ := agentlibQuery()
	if q == nil {
		return names
	}
	for changed := true; changed; {
		changed = false
		for _, fd := range q.FuncDefs {
			if !names[fd.Name] && usesAny(fd.Body, names) {
				names[fd.Name] = true
				changed = true
			}
		}
	}
	return names
})

func isIdentity(q *gojq.Query) bool {
	return q.Op == 0 && len(q.FuncDefs) == 0 && len(q.Imports) == 0 && q.Term != nil &&
		q.Term.Type == gojq.TermTypeIdentity && len(q.Term.SuffixList) == 0
}

// haltOf reports whether err is halt/halt_error and its exit code.
func haltOf(err error) (*gojq.HaltError, bool) {
	var h *gojq.HaltError
	if errors.As(err, &h) {
		return h, true
	}
	return nil, false
}

// Program is a filter compiled for a caller that runs it on values of its
// own rather than on a stream (the daemon's subscription filters): the
// same language as `agentjq filter` (agentlib, the jq 1.6 builtins gojq
// dropped), no variables but $ARGS, an empty environment ($ENV is {}:
// the caller's environment is not the program author's to read), and no
// stream: input and inputs do not compile, input_filename and
// input_line_number are null, debug and stderr pass their value on unshown.
type Program struct{ p *program }

// Compile compiles src as `agentjq filter` does; a failure is the same
// *Error filter reports (exit status ExitCompile, the caret under the fault).
func Compile(src string) (*Program, error) {
	o := &Options{}
	args := map[string]any{"positional": []any{}, "named": map[string]any{}}
	nothing := func() any { return nil }
	p, err := compileProgram(o, src, nil, []any{args}, hooks{
		debug: func(any) {}, stderr: func(any) {}, filename: nothing, lineNum: nothing,
	})
	if err != nil {
		return nil, err
	}
	return &Program{p: p}, nil
}

// Run runs the program on one value (a decoded JSON value: maps, slices,
// float64 or json.Number, strings, bools, nil) until ctx ends.
func (p *Program) Run(ctx context.Context, v any) gojq.Iter {
	return p.p.code.RunWithContext(ctx, v, p.p.values...)
}
