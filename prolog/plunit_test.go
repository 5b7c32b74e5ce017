package prolog_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/rlmpl/rlmpl/prolog"
)

const plunitUnits = `
:- begin_tests(opts).
test(plain) :- true.
helper_(X) :- X = 3.
test(true_cond, [true(X == 3)]) :- helper_(X).
test(bare_cmp, X =:= 3) :- helper_(X).
test(fail, [fail]) :- fail.
test(false, false) :- 1 > 2.
test(throws, [throws(oops)]) :- throw(oops).
test(error, [error(type_error(integer, _))]) :- atom_length(abc, foo).
test(all, all(X == [a, b])) :- member(X, [a, b]).
test(set, set(X == [a, b])) :- member(X, [b, a, b]).
test(forall, [forall(member(N, [1, 2, 3])), true(M =:= N * 2)]) :- M is N + N.
test(setup_cleanup, [setup(nb_setval(k, 1)), cleanup(nb_setval(k, 0)), true(V == 1)]) :- nb_getval(k, V).
test(nondet, [nondet]) :- member(_, [a, b]).
test(blocked, [blocked(why)]) :- fail.
test(condition, [condition(fail)]) :- fail.
test(fixme, [fixme(known)]) :- fail.
test(asserted) :- assertion(atom(a)).
:- end_tests(opts).

:- begin_tests(bad).
test(fails) :- fail.
test(wrong_answer, [true(X == 2)]) :- X = 1.
test(succeeds_but_must_fail, [fail]) :- true.
test(no_exception, [throws(oops)]) :- true.
test(wrong_error, [throws(oops)]) :- throw(other).
test(raises) :- throw(boom).
test(assertion) :- assertion(1 =:= 2).
test(all_wrong, all(X == [1])) :- member(X, [1, 2]).
:- end_tests(bad).

:- begin_tests(unit_setup, [setup(nb_setval(u, on)), cleanup(nb_setval(u, off))]).
test(sees_setup, [true(V == on)]) :- nb_getval(u, V).
:- end_tests(unit_setup).

:- begin_tests(unit_blocked, [blocked(later)]).
test(never) :- fail.
:- end_tests(unit_blocked).

test(outside_a_unit, ordinary).
`

func plunitInterp(t *testing.T) (*prolog.Interpreter, *bytes.Buffer) {
	t.Helper()
	var out bytes.Buffer
	in := prolog.New(&prolog.Options{Stdout: &out})
	if err := in.Consult(context.Background(), "units.pl", plunitUnits); err != nil {
		t.Fatal(err)
	}
	return in, &out
}

// TestPlunit runs SWI-style units: every option of a passing unit passes,
// every kind of failure of a failing unit is reported and fails
// run_tests, and the summary says so.
func TestPlunit(t *testing.T) {
	in, out := plunitInterp(t)
	ctx := context.Background()
	if _, err := in.Once(ctx, "run_tests(opts)"); err != nil {
		t.Fatalf("run_tests(opts): %v\n%s", err, out)
	}
	if got := out.String(); !strings.Contains(got, "% All 13 tests passed") || !strings.Contains(got, "% 3 tests blocked or skipped") ||
		strings.Contains(got, "ERROR") {
		t.Errorf("opts output:\n%s", got)
	}
	out.Reset()
	_, err := in.Once(ctx, "run_tests(bad)")
	if !errors.Is(err, prolog.ErrNoSolution) {
		t.Fatalf("run_tests(bad) = %v, want failure", err)
	}
	got := out.String()
	for _, want := range []string{
		"ERROR: test bad:fails: failed",
		"ERROR: test bad:wrong_answer: wrong answer (compared 1==2)",
		"ERROR: test bad:succeeds_but_must_fail: must fail but succeeded",
		"ERROR: test bad:no_exception: must raise oops but did not",
		"ERROR: test bad:wrong_error: wrong error: expected oops, got other",
		"ERROR: test bad:raises: received error: boom",
		"ERROR: test bad:assertion: assertion failed: 1=:=2",
		"ERROR: test bad:all_wrong: wrong answer",
		"% 8 tests failed\n% 0 tests passed",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("bad output lacks %q:\n%s", want, got)
		}
	}
	for _, goal := range []string{"run_tests(unit_setup)", "run_tests(unit_blocked)", "run_tests(bad:[])", "run_tests(opts:plain)",
		"run_tests([opts:true_cond, unit_setup])", "test(outside_a_unit, ordinary)", "nb_getval(u, off)"} {
		if _, err := in.Once(ctx, goal); err != nil {
			t.Errorf("%s: %v", goal, err)
		}
	}
	if _, err := in.Once(ctx, "run_tests(bad:fails)"); !errors.Is(err, prolog.ErrNoSolution) {
		t.Errorf("run_tests(bad:fails) = %v, want failure", err)
	}
	if _, err := in.Once(ctx, "catch(run_tests(nosuch), error(existence_error(unit_test, nosuch), _), true)"); err != nil {
		t.Errorf("unknown unit: %v", err)
	}
}

// TestPlunitLoading: reloading a unit replaces its tests; units do not
// nest; end_tests/1 must close the open unit; test clauses outside a
// unit stay ordinary clauses.
func TestPlunitLoading(t *testing.T) {
	in, out := plunitInterp(t)
	ctx := context.Background()
	if err := in.Consult(ctx, "again.pl", ":- begin_tests(opts).\ntest(only) :- true.\n:- end_tests(opts).\n"); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if _, err := in.Once(ctx, "run_tests(opts)"); err != nil || !strings.Contains(out.String(), "% All 1 test passed") {
		t.Errorf("reloaded unit: %v\n%s", err, out)
	}
	if err := in.Consult(ctx, "nested.pl", ":- begin_tests(a).\n:- begin_tests(b).\n"); err == nil {
		t.Error("nested begin_tests loaded")
	}
	in2 := prolog.New(nil)
	if err := in2.Consult(ctx, "unclosed.pl", ":- end_tests(x).\n"); err == nil {
		t.Error("end_tests without begin_tests loaded")
	}
	if bs, err := in.Once(ctx, "test(outside_a_unit, X)"); err != nil || in.WriteQ(bs[0].Value, nil) != "ordinary" {
		t.Errorf("ordinary test/2 clause: %v %v", bs, err)
	}
}

// TestExpandTermCyclic: with term_expansion/2 defined (plunit's),
// expand_term/2 on a cyclic term must not reach ichiban's goal call,
// whose variable walk overflows the Go stack; DCG expansion still works.
func TestExpandTermCyclic(t *testing.T) {
	runCases(t, []solveCase{
		{`X = f(X), expand_term(X, Y), (Y == X -> R = same ; R = other)`, `same`},
		{`expand_term((a --> [x]), R)`, `a(_G,_G):-_G=[x|_G]`},
		{`expand_term(foo, R)`, `foo`},
	})
}

// TestUseModule: library(_) and the host's rlm modules are built in;
// another file is consulted from the interpreter's FS.
func TestUseModule(t *testing.T) {
	ctx := context.Background()
	in := prolog.New(nil)
	for _, goal := range []string{"use_module(library(plunit))", "use_module(library(lists), [append/3])",
		"use_module('../prolog/rlm_plan')", "use_module(rlm)", "module(m, [p/1])"} {
		if _, err := in.Once(ctx, goal); err != nil {
			t.Errorf("%s: %v", goal, err)
		}
	}
	if _, err := in.Once(ctx, "catch(use_module(mine), error(existence_error(_, _), _), true)"); err != nil {
		t.Errorf("missing module file: %v", err)
	}
}
