package prolog

// plunit, the loading half: SWI's unit-test files load as they are.
//
//	%!  begin_tests(+Unit) is det.
//	%!  begin_tests(+Unit, +Options) is det.
//	%!  end_tests(+Unit) is det.
//
// Between begin_tests(Unit) and end_tests(Unit), each test(Name) and
// test(Name, Options) clause (a fact or a rule) is taken out of the
// program and kept as a test of Unit: term_expansion/2 (a Go predicate
// here; a program that defines its own replaces it, and then plunit files
// no longer load) turns it into a fact of a fresh predicate holding the
// options and the body as data, so variables shared by the options
// (true(X == 1)) and the body stay shared, and so test clauses may be
// interleaved with helper clauses (ichiban rejects discontiguous
// predicates). Loading a unit again replaces its tests. Running them
// (run_tests/0,1, assertion/1) is prelude.pl's.

import (
	_ "embed"
	"fmt"

	"github.com/ichiban/prolog/engine"
)

// plunitSource is the running half (run_tests/0,1, assertion/1,
// use_module/1,2).
//
//go:embed plunit.pl
var plunitSource string

// plunit is an interpreter's registry of test units, in load order.
type plunit struct {
	unit  *plunitUnit // the unit being loaded, nil outside one
	units []*plunitUnit
	next  int // suffix of the next test predicate
}

type plunitUnit struct {
	name  engine.Atom
	opts  engine.Term
	tests []engine.Term // t(Name, PredicateAtom)
}

var (
	atomTest     = engine.NewAtom("test")
	atomClauseIf = engine.NewAtom(":-")
)

var plunitDefs = []Def{
	Pred1("begin_tests", "begin_tests(+Unit) is det", func(c *Call, unit engine.Term) (bool, error) {
		return beginTests(c, unit, engine.NewAtom("[]"))
	}),
	Pred2("begin_tests", "begin_tests(+Unit, +Options) is det", beginTests),
	Pred1("end_tests", "end_tests(+Unit) is det", endTests),
	Pred2("term_expansion", "term_expansion(+Term, -Expanded) is semidet", plunitExpand),
	Pred1("$plunit_units", "'$plunit_units'(-Units) is det", plunitUnits),
	Pred2("expand_term", "expand_term(+Term, -Expanded) is det", expandTerm),
}

// expandTerm is ichiban's expand_term/2 made cycle-safe: with
// term_expansion/2 defined, ichiban calls it on the term, and calling a
// goal that holds a cyclic term overflows the Go stack (the process
// dies). A cyclic term is its own expansion.
func expandTerm(c *Call, term, out engine.Term) (bool, error) {
	if !Acyclic(term, c.Env) {
		return c.Unify(out, term), nil
	}
	v := engine.NewVariable()
	var res engine.Term
	ok, err := engine.ExpandTerm(c.VM, term, v, func(env *engine.Env) *engine.Promise {
		res = Resolved(v, env)
		return engine.Bool(true)
	}, c.Env).Force(c.Ctx)
	if err != nil || !ok {
		return ok, err
	}
	return c.Unify(out, res), nil
}

func beginTests(c *Call, unit, options engine.Term) (bool, error) {
	name, err := c.Atom(unit)
	if err != nil {
		return false, err
	}
	if _, err := c.List(options); err != nil {
		return false, err
	}
	p := &c.In.plunit
	if p.unit != nil {
		return false, PermissionError("begin", "test_unit", unit) // nested units
	}
	u := &plunitUnit{name: engine.NewAtom(name), opts: Resolved(options, c.Env)}
	replaced := false
	for i, old := range p.units {
		if old.name == u.name {
			p.units[i], replaced = u, true
		}
	}
	if !replaced {
		p.units = append(p.units, u)
	}
	p.unit = u
	return true, nil
}

func endTests(c *Call, unit engine.Term) (bool, error) {
	name, err := c.Atom(unit)
	if err != nil {
		return false, err
	}
	p := &c.In.plunit
	if p.unit == nil || p.unit.name.String() != name {
		return false, ExistenceError("test_unit", unit) // no open unit of that name
	}
	p.unit = nil
	return true, nil
}

// plunitExpand turns a test clause of the open unit into a fact
// '$plunit N'(Options, Body); it fails (no expansion) for anything else.
func plunitExpand(c *Call, term, out engine.Term) (bool, error) {
	p := &c.In.plunit
	if p.unit == nil {
		return false, nil
	}
	head, body := c.Resolve(term), engine.Term(engine.NewAtom("true"))
	if r, isRule := head.(engine.Compound); isRule && r.Functor() == atomClauseIf && r.Arity() == 2 {
		head, body = c.Resolve(r.Arg(0)), r.Arg(1)
	}
	h, isCompound := head.(engine.Compound)
	if !isCompound || h.Functor() != atomTest || h.Arity() > 2 {
		return false, nil
	}
	var opts engine.Term = engine.NewAtom("[]")
	if h.Arity() == 2 {
		opts = h.Arg(1)
	}
	pred := engine.NewAtom(fmt.Sprintf("$plunit %d", p.next))
	p.next++
	p.unit.tests = append(p.unit.tests, engine.NewAtom("t").Apply(Resolved(h.Arg(0), c.Env), pred))
	return c.Unify(out, pred.Apply(opts, body)), nil
}

// plunitUnits is [unit(Name, Options, [t(TestName, Pred), ...]), ...] in
// load order.
func plunitUnits(c *Call, out engine.Term) (bool, error) {
	us := make([]engine.Term, len(c.In.plunit.units))
	for i, u := range c.In.plunit.units {
		us[i] = engine.NewAtom("unit").Apply(u.name, u.opts, engine.List(u.tests...))
	}
	return c.Unify(out, engine.List(us...)), nil
}
