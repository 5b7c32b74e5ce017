package engine

import (
	"fmt"
	"io"
	"sync/atomic"
)

// rlmpl patch (PATCHES.md, "The machine"): a variable is a cell bound in
// place, and unbound again when the search backtracks past the binding
// (the machine's trail), instead of a key into a persistent map that only
// grew along a branch.

// Variable is a Prolog variable.
type Variable = *Var

// Var is the cell of a variable. Its binding is visible to every holder of
// the cell; only the machine that runs the query binds and unbinds it.
type Var struct {
	ref Term  // what the variable is bound to; nil while it is free
	id  int64 // creation order: the standard order of variables, their names, and the trail's age test
}

// varCounter numbers variables in creation order across the process.
var varCounter atomic.Int64

// NewVariable creates a new free variable.
func NewVariable() Variable {
	return &Var{id: varCounter.Add(1)}
}

// newVars returns n fresh variables allocated in one block.
func newVars(n int) []Var {
	vs := make([]Var, n)
	base := varCounter.Add(int64(n)) - int64(n)
	for i := range vs {
		vs[i].id = base + int64(i) + 1
	}
	return vs
}

// deref follows bindings to the first term that is not a bound variable.
func deref(t Term) Term {
	for {
		v, ok := t.(*Var)
		if !ok || v.ref == nil {
			return t
		}
		t = v.ref
	}
}

// ID returns the variable's creation number, unique in the process.
func (v *Var) ID() int64 { return v.id }

func (v *Var) WriteTerm(w io.Writer, opts *WriteOptions, env *Env) error {
	x := deref(v)
	v, ok := x.(*Var)
	if !ok {
		return x.WriteTerm(w, opts, env)
	}

	ew := asErrWriter(w)

	if letterDigit(opts.left.name) {
		_, _ = ew.Write([]byte(" "))
	}
	if a, ok := opts.variableNames[v]; ok {
		_ = a.WriteTerm(ew, opts.withQuoted(false).withLeft(operator{}).withRight(operator{}), env)
	} else {
		_, _ = ew.Write([]byte(fmt.Sprintf("_%d", v.id)))
	}
	if letterDigit(opts.right.name) {
		_, _ = ew.Write([]byte(" "))
	}

	return ew.err
}

func (v *Var) Compare(t Term, env *Env) int {
	w := deref(v)
	v, ok := w.(*Var)
	if !ok {
		return w.Compare(t, env)
	}

	switch t := deref(t).(type) {
	case *Var:
		switch {
		case v.id > t.id:
			return 1
		case v.id < t.id:
			return -1
		default:
			return 0
		}
	default:
		return -1
	}
}

func (v *Var) GoString() string {
	if v.ref != nil {
		return fmt.Sprintf("&engine.Var{ref:%#v}", v.ref)
	}
	return fmt.Sprintf("_%d", v.id)
}

// variableSet is a set of variables. The key is the variable and the value is the number of occurrences.
// So if you look at the value it's a multi set of variable occurrences and if you ignore the value it's a set of occurrences (witness).
type variableSet map[Variable]int

func newVariableSet(t Term, env *Env) variableSet {
	s := variableSet{}
	for terms := []Term{t}; len(terms) > 0; terms, t = terms[:len(terms)-1], terms[len(terms)-1] {
		switch t := env.Resolve(t).(type) {
		case Variable:
			s[t] += 1
		case Compound:
			for i := 0; i < t.Arity(); i++ {
				terms = append(terms, t.Arg(i))
			}
		}
	}
	return s
}

func newExistentialVariablesSet(t Term, env *Env) variableSet {
	ev := variableSet{}
	for terms := []Term{t}; len(terms) > 0; terms, t = terms[:len(terms)-1], terms[len(terms)-1] {
		if c, ok := env.Resolve(t).(Compound); ok && c.Functor() == atomCaret && c.Arity() == 2 {
			for v, o := range newVariableSet(c.Arg(0), env) {
				ev[v] = o
			}
			terms = append(terms, c.Arg(1))
		}
	}
	return ev
}

func newFreeVariablesSet(t, v Term, env *Env) variableSet {
	fv := variableSet{}
	s := newVariableSet(t, env)

	bv := newVariableSet(v, env)
	for v := range newExistentialVariablesSet(t, env) {
		bv[v] += 1
	}

	for v, n := range s {
		if m, ok := bv[v]; !ok {
			fv[v] = n + m
		}
	}

	return fv
}
