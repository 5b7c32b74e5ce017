// Package planterm converts between Prolog terms and the Prolog-free values
// of host/plan, which never sees a term. It is the one place where the two
// meet:
//
//   - [Reader] is plan's [plan.TermReader]: planner text in the term syntax
//     goes through [prolog.ReadTerm] (a private VM with the standard
//     operators, no variables, bounded) and [Tree];
//   - [Tree] turns a term into a raw tree, for the plan terms a trusted
//     Prolog planner_handler builds, bounded so that a cyclic or shared
//     term always converts in bounded time (see [plan.Elided]);
//   - [ToTerm] and [Value] carry plan values (tool arguments, tool results,
//     completion values, error records, the runtime's cold-history items)
//     to and from terms.
//
// Its functions are safe for concurrent use.
package planterm

import (
	"errors"
	"fmt"

	"github.com/ichiban/prolog/engine"

	"github.com/rlmpl/rlmpl/host/plan"
	"github.com/rlmpl/rlmpl/host/runtime"
	"github.com/rlmpl/rlmpl/prolog"
)

// Reader reads term-syntax plans for host/plan.
type Reader struct{}

var _ plan.TermReader = Reader{}

// ReadTerm reads text with [prolog.ReadTerm] under lim and converts the
// term with [Tree]. A refused text is a [*plan.ReadError] carrying the
// reader's offset and message.
func (Reader) ReadTerm(text string, lim plan.ReadLimits) (plan.Term, error) {
	t, err := prolog.ReadTerm(text, prolog.ReadLimits{MaxBytes: lim.MaxBytes, MaxDepth: lim.MaxDepth, MaxTerms: lim.MaxTerms})
	if err != nil {
		var re *prolog.ReadError
		if errors.As(err, &re) {
			return nil, &plan.ReadError{Offset: re.Offset, Msg: re.Msg}
		}
		return nil, err
	}
	return Tree(t, nil), nil
}

var (
	atomNil = engine.NewAtom("[]")
	atomDot = engine.NewAtom(".")
)

// Tree converts t, resolved in env (which may be nil), to a raw term tree
// (see [plan.Term]): compact text (a "string" read with
// double_quotes=chars) becomes a string, other proper lists []any, lists
// that are not proper '.'/2 compounds, unbound variables [plan.Var]. Past [plan.MaxTermDepth] or [plan.MaxTermNodes] it
// puts a [plan.Elided] in place of the rest, so it ends on any term,
// cyclic ones included.
func Tree(t engine.Term, env *engine.Env) plan.Term {
	c := treeBuilder{env: env}
	return c.term(t, 0)
}

type treeBuilder struct {
	env   *engine.Env
	nodes int
}

// budget counts one node at depth and reports the elision due, if any.
func (b *treeBuilder) budget(depth int) (plan.Elided, bool) {
	if depth > plan.MaxTermDepth {
		return plan.Elided{Deep: true}, false
	}
	if b.nodes++; b.nodes > plan.MaxTermNodes {
		return plan.Elided{}, false
	}
	return plan.Elided{}, true
}

func (b *treeBuilder) term(t engine.Term, depth int) plan.Term {
	if e, ok := b.budget(depth); !ok {
		return e
	}
	switch t := b.env.Resolve(t).(type) {
	case engine.Variable:
		return plan.Var{}
	case engine.Atom:
		return plan.Atom(t.String())
	case engine.Integer:
		return int64(t)
	case engine.Float:
		return float64(t)
	case engine.Compound:
		if t.Functor() == atomDot && t.Arity() == 2 {
			return b.list(t, depth)
		}
		args := make([]any, t.Arity())
		for i := range args {
			args[i] = b.term(t.Arg(i), depth+1)
		}
		return plan.Compound{Functor: t.Functor().String(), Args: args}
	}
	return plan.Atom(fmt.Sprint(t)) // no other term has a plan meaning

}

// list converts the list whose first cell is c: walking its cells, so
// that a long list costs no depth.
func (b *treeBuilder) list(c engine.Compound, depth int) plan.Term {
	if s, ok := c.(fmt.Stringer); ok {
		if _, chars := c.Arg(0).(engine.Atom); chars {
			return s.String() // a compact chars list: "text"
		}
	}
	var elems []any
	var tail plan.Term
	for {
		elems = append(elems, b.term(c.Arg(0), depth+1))
		next := b.env.Resolve(c.Arg(1))
		if next == atomNil {
			break
		}
		cell, isCell := next.(engine.Compound)
		if !isCell || cell.Functor() != atomDot || cell.Arity() != 2 {
			tail = b.term(next, depth)
			break
		}
		if e, ok := b.budget(depth); !ok {
			tail = e
			break
		}
		c = cell
	}
	if tail != nil { // not a proper list: '.'(H, T) cells, as in Prolog
		for i := len(elems) - 1; i >= 0; i-- {
			tail = plan.Compound{Functor: ".", Args: []any{elems[i], tail}}
		}
		return tail
	}
	return elems
}

// ToTerm converts a plan value to a term, through [plan.TermValue]'s
// mapping (text a chars list, nil the atom null, a map the record
// json([k(V), ...]), host values their records).
func ToTerm(v any) (engine.Term, error) {
	return prolog.ToTerm(prologValue(plan.TermValue(v)))
}

// Value converts a term, resolved in env, to a plan value: [prolog.Value]'s
// mapping, with atoms, records and compounds as plan's.
func Value(t engine.Term, env *engine.Env) (any, error) {
	v, err := prolog.Value(t, env)
	if err != nil {
		return nil, err
	}
	return planValue(v), nil
}

// prologValue maps plan's atoms, records and compounds to prolog's, and
// the runtime's own values to the records that stand for them in Prolog
// (a cold-history item is a conversation_message_view record).
func prologValue(v any) any {
	switch v := v.(type) {
	case plan.Atom:
		return prolog.Atom(v)
	case runtime.MessageView:
		fs := []prolog.Field{{Key: "content", Value: v.Content}, {Key: "role", Value: prolog.Atom(v.Role)}, {Key: "sequence", Value: v.Sequence}}
		if len(v.Window) > 0 {
			window := make([]any, len(v.Window))
			for i, m := range v.Window {
				window[i] = prologValue(m)
			}
			fs = append(fs, prolog.Field{Key: "window", Value: window})
		}
		return prolog.Record{Tag: "conversation_message_view", Fields: fs}
	case plan.Record:
		fs := make([]prolog.Field, len(v.Fields))
		for i, f := range v.Fields {
			fs[i] = prolog.Field{Key: f.Key, Value: prologValue(f.Value)}
		}
		return prolog.Record{Tag: v.Tag, Fields: fs}
	case plan.Compound:
		return prolog.Compound{Functor: v.Functor, Args: mapSlice(v.Args, prologValue)}
	case []any:
		return mapSlice(v, prologValue)
	}
	return v
}

// planValue maps prolog's atoms, records and compounds to plan's.
func planValue(v any) any {
	switch v := v.(type) {
	case prolog.Atom:
		return plan.Atom(v)
	case prolog.Record:
		fs := make([]plan.Field, len(v.Fields))
		for i, f := range v.Fields {
			fs[i] = plan.Field{Key: f.Key, Value: planValue(f.Value)}
		}
		return plan.Record{Tag: v.Tag, Fields: fs}
	case prolog.Compound:
		return plan.Compound{Functor: v.Functor, Args: mapSlice(v.Args, planValue)}
	case []any:
		return mapSlice(v, planValue)
	}
	return v
}

func mapSlice(vs []any, f func(any) any) []any {
	out := make([]any, len(vs))
	for i, v := range vs {
		out[i] = f(v)
	}
	return out
}
