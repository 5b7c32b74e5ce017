package prolog_test

import (
	"reflect"

	"github.com/rlmpl/rlmpl/prolog"
)

// equalValue compares Go values as terms: "" and []any{} are both [] and a
// compound with a property-list argument decodes as a Record.
func equalValue(a, b any) bool {
	a, b = norm(a), norm(b)
	switch a := a.(type) {
	case []any:
		bl, ok := b.([]any)
		if !ok || len(a) != len(bl) {
			return false
		}
		for i := range a {
			if !equalValue(a[i], bl[i]) {
				return false
			}
		}
		return true
	case prolog.Record:
		br, ok := b.(prolog.Record)
		if !ok || a.Tag != br.Tag || len(a.Fields) != len(br.Fields) {
			return false
		}
		for i := range a.Fields {
			if a.Fields[i].Key != br.Fields[i].Key || !equalValue(a.Fields[i].Value, br.Fields[i].Value) {
				return false
			}
		}
		return true
	case prolog.Compound:
		if r, ok := b.(prolog.Record); ok && len(a.Args) == 1 {
			// f([k(v)]) written as Compound reads back as a Record.
			return recordMatches(a, r)
		}
		bc, ok := b.(prolog.Compound)
		if !ok || a.Functor != bc.Functor || len(a.Args) != len(bc.Args) {
			return false
		}
		for i := range a.Args {
			if !equalValue(a.Args[i], bc.Args[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

// norm applies the mapping's identities: "" is [], a bool is an atom, a
// compound without arguments is an atom.
func norm(v any) any {
	switch v := v.(type) {
	case string:
		if v == "" {
			return []any{}
		}
	case bool:
		if v {
			return prolog.Atom("true")
		}
		return prolog.Atom("false")
	case prolog.Compound:
		if len(v.Args) == 0 {
			return prolog.Atom(v.Functor)
		}
	}
	return v
}

func recordMatches(c prolog.Compound, r prolog.Record) bool {
	if c.Functor != r.Tag {
		return false
	}
	l, ok := norm(c.Args[0]).([]any)
	if !ok || len(l) != len(r.Fields) {
		return false
	}
	for i, e := range l {
		f, ok := e.(prolog.Compound)
		if r, isRec := e.(prolog.Record); isRec && len(r.Fields) == 0 {
			f, ok = prolog.Compound{Functor: r.Tag, Args: []any{[]any{}}}, true
		}
		if !ok || len(f.Args) != 1 || f.Functor != r.Fields[i].Key || !equalValue(f.Args[0], r.Fields[i].Value) {
			return false
		}
	}
	return true
}
