package filter

import (
	"bytes"
	"strings"

	"github.com/itchyny/gojq"
)

// Fast paths. Each one skips work a line provably does not need, and each
// is fuzzed against the plain path (decode everything, run gojq, encode)
// for identical output (fastpath_test.go):
//
//   - identity: `.` validates the line and copies its bytes.
//   - prefilter: a program that starts with select(.type == "X") cannot
//     output anything for an object line in which no string spells X, so
//     such a line is only validated.
//   - projection: a program that reads its input only through constant
//     keys (.type, .message.content[], {cost: .total_cost_usd}) gets the
//     top-level object with just those keys; the others are validated and
//     dropped, never built.

// plan is what the analysis found out about a program.
type plan struct {
	// typeValue is X of a leading select(.type == "X"); "" if none.
	typeValue string
	// only lists the top-level keys the program can observe; nil means
	// all of them.
	only map[string]bool
}

// makePlan analyses q. lib is agentlib's parsed module (or nil): a
// program that redefines select, or a library that does, gets no plan.
func makePlan(q *gojq.Query, lib *gojq.Query) *plan {
	if len(q.Imports) > 0 || len(q.FuncDefs) > 0 || q.Meta != nil {
		return nil
	}
	if lib != nil {
		for _, fd := range lib.FuncDefs {
			if fd.Name == "select" || fd.Name == "empty" {
				return nil
			}
		}
	}
	p := &plan{typeValue: leadingTypeSelect(q)}
	a := &keyAnalysis{keys: map[string]bool{}}
	if _, ok := a.query(q); ok {
		p.only = a.keys
	}
	if p.typeValue == "" && p.only == nil {
		return nil
	}
	return p
}

// leadingTypeSelect finds X in a program of the form
// select(.type == "X" [and ...]) [| ...].
func leadingTypeSelect(q *gojq.Query) string {
	for q.Op == gojq.OpPipe && len(q.Patterns) == 0 {
		q = q.Left
	}
	t := q.Term
	if q.Op != 0 || t == nil || t.Type != gojq.TermTypeFunc || len(t.SuffixList) > 0 ||
		t.Func.Name != "select" || len(t.Func.Args) != 1 {
		return ""
	}
	cond := unparen(t.Func.Args[0])
	for cond.Op == gojq.OpAnd {
		cond = unparen(cond.Left)
	}
	if cond.Op != gojq.OpEq {
		return ""
	}
	l, r := unparen(cond.Left), unparen(cond.Right)
	if s, ok := constString(r); ok && isTypeIndex(l) {
		return safeTypeValue(s)
	}
	if s, ok := constString(l); ok && isTypeIndex(r) {
		return safeTypeValue(s)
	}
	return ""
}

// safeTypeValue refuses values whose JSON spelling could use short escapes
// (\" \\ \/ \n ...): only \u escapes are then left to rule out.
func safeTypeValue(s string) string {
	if s == "" || strings.ContainsAny(s, "\"\\/") {
		return ""
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return ""
		}
	}
	return s
}

func unparen(q *gojq.Query) *gojq.Query {
	for q.Op == 0 && q.Term != nil && q.Term.Type == gojq.TermTypeQuery && len(q.Term.SuffixList) == 0 &&
		len(q.FuncDefs) == 0 && len(q.Patterns) == 0 {
		q = q.Term.Query
	}
	return q
}

func constString(q *gojq.Query) (string, bool) {
	if q.Op != 0 || q.Term == nil || q.Term.Type != gojq.TermTypeString || len(q.Term.SuffixList) > 0 ||
		q.Term.Str == nil || len(q.Term.Str.Queries) > 0 {
		return "", false
	}
	return q.Term.Str.Str, true
}

// isTypeIndex matches .type and .type? (not .type[...] and friends).
func isTypeIndex(q *gojq.Query) bool {
	t := q.Term
	if q.Op != 0 || t == nil || t.Type != gojq.TermTypeIndex || t.Index == nil || t.Index.Name != "type" {
		return false
	}
	for _, s := range t.SuffixList {
		if !s.Optional || s.Index != nil || s.Iter {
			return false
		}
	}
	return true
}

// prefilterSkips reports whether line can hold no string equal to x: it
// has neither "x" nor a \u escape that could spell one.
func prefilterSkips(line []byte, quoted []byte) bool {
	return !bytes.Contains(line, quoted) && !bytes.Contains(line, []byte(`\u`))
}

// keyAnalysis collects the top-level keys a query reads from its input I.
// It accepts a small grammar and gives up (ok false) on anything else:
// any construct that could observe I as a whole (., keys, length, tojson,
// has, to_entries, assignment, a function call...) except where . is only
// passed on to the output or to the next stage of a pipe.
type keyAnalysis struct {
	keys map[string]bool
}

// query analyses q run on I. mayBeI says an output of q may be I itself.
func (a *keyAnalysis) query(q *gojq.Query) (mayBeI bool, ok bool) {
	if q == nil {
		return false, true
	}
	if len(q.FuncDefs) > 0 || len(q.Patterns) > 0 || len(q.Imports) > 0 {
		return false, false
	}
	switch q.Op {
	case 0:
		return a.term(q.Term)
	case gojq.OpPipe:
		left, ok := a.query(q.Left)
		if !ok {
			return false, false
		}
		if !left {
			// The right side sees values derived from I, never I: it may
			// do anything except refer to I, which nothing can without
			// a variable binding (refused above).
			return false, true
		}
		return a.query(q.Right)
	case gojq.OpComma, gojq.OpAlt:
		l, ok := a.query(q.Left)
		if !ok {
			return false, false
		}
		r, ok := a.query(q.Right)
		return l || r, ok
	case gojq.OpAnd, gojq.OpOr, gojq.OpEq, gojq.OpNe, gojq.OpLt, gojq.OpLe, gojq.OpGt, gojq.OpGe,
		gojq.OpAdd, gojq.OpSub, gojq.OpMul, gojq.OpDiv, gojq.OpMod:
		// Operands are consumed: they must never be I.
		l, ok := a.query(q.Left)
		if !ok || l {
			return false, false
		}
		r, ok := a.query(q.Right)
		if !ok || r {
			return false, false
		}
		return false, true
	default: // assignments and update operators rebuild I
		return false, false
	}
}

func (a *keyAnalysis) term(t *gojq.Term) (mayBeI bool, ok bool) {
	if t == nil {
		return false, false
	}
	// Suffix queries (.a[.b]) run on I too; a suffix on a term that may be
	// I (.[...]) reads I in ways not tracked here.
	for _, s := range t.SuffixList {
		if s.Index != nil && (s.Index.Start != nil || s.Index.End != nil || s.Index.Str != nil) {
			return false, false
		}
	}
	switch t.Type {
	case gojq.TermTypeIdentity:
		return len(t.SuffixList) == 0, len(t.SuffixList) == 0
	case gojq.TermTypeIndex:
		return false, a.index(t.Index)
	case gojq.TermTypeNull, gojq.TermTypeTrue, gojq.TermTypeFalse, gojq.TermTypeNumber:
		return false, true
	case gojq.TermTypeString:
		return false, t.Str != nil && a.notI(t.Str.Queries...)
	case gojq.TermTypeFunc:
		return a.function(t)
	case gojq.TermTypeObject:
		return false, a.object(t.Object)
	case gojq.TermTypeArray:
		return false, t.Array.Query == nil || a.notI(t.Array.Query)
	case gojq.TermTypeQuery:
		m, ok := a.query(t.Query)
		if !ok || m && len(t.SuffixList) > 0 {
			return false, false
		}
		return m, true
	case gojq.TermTypeIf:
		mayBeI, ok := a.ifTerm(t.If)
		if !ok || mayBeI && len(t.SuffixList) > 0 {
			return false, false
		}
		return mayBeI, true
	}
	return false, false
}

// notI reports queries that are understood and never yield I itself.
func (a *keyAnalysis) notI(qs ...*gojq.Query) bool {
	for _, q := range qs {
		if m, ok := a.query(q); !ok || m {
			return false
		}
	}
	return true
}

// index records the key an index term reads.
func (a *keyAnalysis) index(x *gojq.Index) bool {
	switch {
	case x.Name != "":
		a.keys[x.Name] = true
	case x.Str != nil && len(x.Str.Queries) == 0:
		a.keys[x.Str.Str] = true
	case x.Start != nil && x.End == nil && !x.IsSlice:
		s, ok := constString(x.Start)
		if !ok {
			return false
		}
		a.keys[s] = true
	default:
		return false
	}
	return true
}

// function reads $var, empty and select(f).
func (a *keyAnalysis) function(t *gojq.Term) (mayBeI bool, ok bool) {
	f := t.Func
	switch {
	case strings.HasPrefix(f.Name, "$") && f.Name != "$__loc__" && len(f.Args) == 0:
		return false, true
	case f.Name == "empty" && len(f.Args) == 0:
		return false, true
	case f.Name == "select" && len(f.Args) == 1 && len(t.SuffixList) == 0:
		if !a.notI(f.Args[0]) {
			return false, false
		}
		return true, true
	}
	return false, false
}

// object records the keys an object construction reads.
func (a *keyAnalysis) object(o *gojq.Object) bool {
	for _, kv := range o.KeyVals {
		switch {
		case kv.KeyQuery != nil:
			if !a.notI(kv.KeyQuery) {
				return false
			}
		case kv.KeyString != nil && len(kv.KeyString.Queries) > 0:
			return false
		}
		if kv.Val != nil {
			if !a.notI(kv.Val) {
				return false
			}
			continue
		}
		// {a} is {a: .a}; {$x} and {"a"} need no input key beyond
		// their name.
		switch {
		case strings.HasPrefix(kv.Key, "$"):
		case kv.Key != "":
			a.keys[kv.Key] = true
		case kv.KeyString != nil:
			a.keys[kv.KeyString.Str] = true
		default:
			return false
		}
	}
	return true
}

// ifTerm reads if-then-elif-else; without else it passes . through.
func (a *keyAnalysis) ifTerm(x *gojq.If) (mayBeI bool, ok bool) {
	if !a.notI(x.Cond) {
		return false, false
	}
	mayBeI, ok = a.query(x.Then)
	if !ok {
		return false, false
	}
	for _, e := range x.Elif {
		if !a.notI(e.Cond) {
			return false, false
		}
		m, ok := a.query(e.Then)
		if !ok {
			return false, false
		}
		mayBeI = mayBeI || m
	}
	if x.Else == nil {
		return true, true
	}
	m, ok := a.query(x.Else)
	if !ok {
		return false, false
	}
	return mayBeI || m, true
}
