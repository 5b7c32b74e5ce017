package prolog_test

import (
	"context"
	"testing"

	"github.com/ichiban/prolog/engine"

	"github.com/rlmpl/rlmpl/prolog"
)

// TestCheckClosure: a closure given one more argument is accepted when a
// call would find its procedure — user-defined, foreign, builtin,
// prelude (lambdas) — and refused with the error the call would throw.
func TestCheckClosure(t *testing.T) {
	in := newInterp(t, nil)
	in.Install(prolog.Pred2("check_closure_", "check_closure_(+Closure, -Error) is det", func(c *prolog.Call, closure, out engine.Term) (bool, error) {
		var e engine.Term = engine.NewAtom("none")
		if err := c.CheckClosure(closure, 1); err != nil {
			e = err.(*prolog.ISOError).Formal
		}
		return c.Unify(out, e), nil
	}))
	if err := in.Consult(context.Background(), "user", "mine(_). mine(_, _, _).\n"); err != nil {
		t.Fatal(err)
	}
	for closure, want := range map[string]string{
		"mine":              "none",
		"mine(a, b)":        "none",
		"write":             "none",
		"format(\"~w\")":    "none",
		"check_closure_(x)": "none",
		"[X]>>true":         "none",
		"undefined_pred_":   "existence_error(procedure,undefined_pred_/1)",
		"mine(a)":           "existence_error(procedure,mine/2)",
		"_":                 "instantiation_error",
		"7":                 "type_error(callable,7)",
	} {
		got, err := once(t, in, "check_closure_("+closure+", E)")
		if err != nil || got["E"] != want {
			t.Errorf("CheckClosure(%s, 1) = %s, %v; want %s", closure, got["E"], err, want)
		}
	}
}
