package host

// Term helpers shared by every predicate family: the one record builder
// (keys sorted, the documented order of record terms), outcomes, and
// readers of records and property lists.

import (
	"fmt"
	"slices"

	"github.com/ichiban/prolog/engine"

	"github.com/rlmpl/rlmpl/prolog"
)

var (
	atomOK            = engine.NewAtom("ok")
	atomError         = engine.NewAtom("error")
	atomContextHandle = engine.NewAtom("context_handle")
)

func ok(v engine.Term) engine.Term { return atomOK.Apply(v) }

// upstreamAliases are upstream's names for fields of ours: the one table
// (docs/upstream.md, "Field names"). record adds Alias(V) beside Field(V)
// in every record of the tag, so a program written for upstream reads the
// names it knows.
var upstreamAliases = map[string][]struct{ field, alias string }{
	"completion_result":         {{"remaining", "budget_remaining"}}, // rlm_completion/4, plan_run/5
	"recursion":                 {{"calls", "recursive_calls"}},      // a completion result's recursion
	"conversation_context_pack": {{"warm_context_status", "warm"}},   // conversation_context_pack/3, a turn's context
}

// record builds Tag([key(V), ...]) with keys sorted, the host's record
// order, and upstream's aliases of its fields.
func record(tag string, fields ...prolog.Field) engine.Term {
	for _, a := range upstreamAliases[tag] {
		i := slices.IndexFunc(fields, func(f prolog.Field) bool { return f.Key == a.field })
		if i >= 0 && !slices.ContainsFunc(fields, func(f prolog.Field) bool { return f.Key == a.alias }) {
			fields = append(fields, fld(a.alias, fields[i].Value.(engine.Term)))
		}
	}
	prolog.SortFields(fields)
	ts := make([]engine.Term, len(fields))
	for i, f := range fields {
		ts[i] = engine.NewAtom(f.Key).Apply(f.Value.(engine.Term))
	}
	return engine.NewAtom(tag).Apply(engine.List(ts...))
}

func fld(key string, v engine.Term) prolog.Field { return prolog.Field{Key: key, Value: v} }

func boolTerm(b bool) engine.Term {
	if b {
		return engine.NewAtom("true")
	}
	return engine.NewAtom("false")
}

// goTerm converts detail values; strings become atoms (names, kinds).
func goTerm(v any) engine.Term {
	switch v := v.(type) {
	case string:
		return engine.NewAtom(v)
	case int:
		return engine.Integer(v)
	case float64:
		return engine.Float(v)
	case []any:
		ts := make([]engine.Term, len(v))
		for i, e := range v {
			ts[i] = goTerm(e)
		}
		return engine.List(ts...)
	case engine.Term:
		return v
	case termValue:
		return v.t
	}
	return engine.NewAtom(fmt.Sprint(v))
}

// fieldsOf reads a record's property list as a key → term map (first
// occurrence wins).
func fieldsOf(c *prolog.Call, t engine.Term) (map[string]engine.Term, error) {
	props, err := c.Props(t)
	if err != nil {
		return nil, err
	}
	m := make(map[string]engine.Term, len(props))
	for _, p := range props {
		if _, dup := m[p.Key]; !dup {
			m[p.Key] = c.Resolve(p.Value.(engine.Term))
		}
	}
	return m, nil
}

// recordFields reads Tag([...]) for the expected tag.
func recordFields(c *prolog.Call, t engine.Term, tag string) (map[string]engine.Term, error) {
	r, isCompound := c.Resolve(t).(engine.Compound)
	if !isCompound || r.Functor().String() != tag || r.Arity() != 1 {
		return nil, prolog.TypeError(tag, t)
	}
	return fieldsOf(c, r.Arg(0))
}

// withField adds a field to a record built by record, keeping keys sorted.
func withField(rec engine.Term, f prolog.Field) engine.Term {
	r := rec.(engine.Compound)
	var fields []prolog.Field
	it := engine.ListIterator{List: r.Arg(0)}
	for it.Next() {
		p := it.Current().(engine.Compound)
		fields = append(fields, fld(p.Functor().String(), p.Arg(0)))
	}
	return record(r.Functor().String(), append(fields, f)...)
}

func millis(t interface{ UnixMilli() int64 }) engine.Term { return engine.Integer(t.UnixMilli()) }
