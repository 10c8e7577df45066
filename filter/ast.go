package filter

import "github.com/itchyny/gojq"

// funcNames calls f with the name of every function call and variable
// reference in q (variables are calls whose name starts with $).
func funcNames(q *gojq.Query, f func(name string)) {
	if q == nil {
		return
	}
	for _, fd := range q.FuncDefs {
		funcNames(fd.Body, f)
	}
	funcNamesTerm(q.Term, f)
	funcNames(q.Left, f)
	funcNames(q.Right, f)
	for _, p := range q.Patterns {
		funcNamesPattern(p, f)
	}
}

func funcNamesPattern(p *gojq.Pattern, f func(string)) {
	if p == nil {
		return
	}
	for _, a := range p.Array {
		funcNamesPattern(a, f)
	}
	for _, o := range p.Object {
		funcNamesString(o.KeyString, f)
		funcNames(o.KeyQuery, f)
		funcNamesPattern(o.Val, f)
	}
}

func funcNamesString(s *gojq.String, f func(string)) {
	if s == nil {
		return
	}
	for _, q := range s.Queries {
		funcNames(q, f)
	}
}

func funcNamesIndex(x *gojq.Index, f func(string)) {
	if x == nil {
		return
	}
	funcNamesString(x.Str, f)
	funcNames(x.Start, f)
	funcNames(x.End, f)
}

func funcNamesTerm(t *gojq.Term, f func(string)) {
	if t == nil {
		return
	}
	funcNamesIndex(t.Index, f)
	if t.Func != nil {
		f(t.Func.Name)
		for _, a := range t.Func.Args {
			funcNames(a, f)
		}
	}
	if t.Object != nil {
		for _, kv := range t.Object.KeyVals {
			if len(kv.Key) > 0 && kv.Key[0] == '$' {
				f(kv.Key) // {$x}
			}
			funcNamesString(kv.KeyString, f)
			funcNames(kv.KeyQuery, f)
			funcNames(kv.Val, f)
		}
	}
	if t.Array != nil {
		funcNames(t.Array.Query, f)
	}
	if t.Unary != nil {
		funcNamesTerm(t.Unary.Term, f)
	}
	funcNamesString(t.Str, f)
	if t.If != nil {
		funcNames(t.If.Cond, f)
		funcNames(t.If.Then, f)
		for _, e := range t.If.Elif {
			funcNames(e.Cond, f)
			funcNames(e.Then, f)
		}
		funcNames(t.If.Else, f)
	}
	if t.Try != nil {
		funcNames(t.Try.Body, f)
		funcNames(t.Try.Catch, f)
	}
	if t.Reduce != nil {
		funcNames(t.Reduce.Query, f)
		for _, p := range t.Reduce.Patterns {
			funcNamesPattern(p, f)
		}
		funcNames(t.Reduce.Start, f)
		funcNames(t.Reduce.Update, f)
	}
	if t.Foreach != nil {
		funcNames(t.Foreach.Query, f)
		for _, p := range t.Foreach.Patterns {
			funcNamesPattern(p, f)
		}
		funcNames(t.Foreach.Start, f)
		funcNames(t.Foreach.Update, f)
		funcNames(t.Foreach.Extract, f)
	}
	if t.Label != nil {
		funcNames(t.Label.Body, f)
	}
	funcNames(t.Query, f)
	for _, s := range t.SuffixList {
		funcNamesIndex(s.Index, f)
	}
}

// usesAny reports whether q calls any of names (or names a variable in it).
func usesAny(q *gojq.Query, names map[string]bool) bool {
	found := false
	funcNames(q, func(n string) {
		if names[n] {
			found = true
		}
	})
	return found
}
