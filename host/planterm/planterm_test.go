package planterm_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/ichiban/prolog/engine"

	"github.com/rlmpl/rlmpl/host/handle"
	"github.com/rlmpl/rlmpl/host/plan"
	"github.com/rlmpl/rlmpl/host/planterm"
	"github.com/rlmpl/rlmpl/prolog"
)

func read(t *testing.T, s string) engine.Term {
	t.Helper()
	term, err := prolog.ReadTerm(s, prolog.ReadLimits{})
	if err != nil {
		t.Fatal(err)
	}
	return term
}

func TestTree(t *testing.T) {
	at := func(s string) plan.Atom { return plan.Atom(s) }
	for _, tc := range []struct {
		text string
		want plan.Term
	}{
		{`abc`, at("abc")},
		{`[]`, at("[]")},
		{`""`, at("[]")},
		{`"text"`, "text"},
		{`[a,b]`, []any{at("a"), at("b")}},
		{`[1,2.5]`, []any{int64(1), 2.5}},
		{`[a|b]`, plan.Compound{Functor: ".", Args: []any{at("a"), at("b")}}},
		{`[a,b|c]`, plan.Compound{Functor: ".", Args: []any{at("a"), plan.Compound{Functor: ".", Args: []any{at("b"), at("c")}}}}},
		{`f(x, "y", [z])`, plan.Compound{Functor: "f", Args: []any{at("x"), "y", []any{at("z")}}}},
		{`k-v`, plan.Compound{Functor: "-", Args: []any{at("k"), at("v")}}},
	} {
		if got := planterm.Tree(read(t, tc.text), nil); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Tree(%s) = %#v, want %#v", tc.text, got, tc.want)
		}
	}
	if got := planterm.Tree(engine.NewVariable(), nil); got != (plan.Var{}) {
		t.Errorf("Tree(variable) = %#v, want plan.Var{}", got)
	}
}

func TestReaderErrors(t *testing.T) {
	_, err := planterm.Reader{}.ReadTerm("plan([final(var(X))])", plan.ReadLimits{})
	var re *plan.ReadError
	if !errors.As(err, &re) || re.Offset != 16 || !strings.Contains(re.Msg, "variables are not allowed") {
		t.Fatalf("ReadTerm = %v, want a *plan.ReadError at offset 16", err)
	}
	_, err = planterm.Reader{}.ReadTerm(strings.Repeat("[", 10)+strings.Repeat("]", 10), plan.ReadLimits{MaxDepth: 5})
	if !errors.As(err, &re) || !strings.Contains(re.Msg, "nesting deeper") {
		t.Fatalf("ReadTerm = %v, want a depth error", err)
	}
}

// TestTreeCyclic: a term bound into itself (unification has no occurs
// check) converts in bounded time, and FromTerm rejects it as a cycle.
func TestTreeCyclic(t *testing.T) {
	p := engine.NewVariable()
	at := engine.NewAtom
	body := at("plan").Apply(engine.List(at("rlm").Apply(p, at("a")), at("final").Apply(at("var").Apply(at("a")))))
	env, ok := engine.NewEnv().Unify(p, body)
	if !ok {
		t.Fatal("unify failed")
	}
	_, err := plan.FromTerm(planterm.Tree(p, env))
	var pe *plan.ParseError
	if !errors.As(err, &pe) || pe.Detail.String() != "recursive_cycle(cyclic_term)" {
		t.Fatalf("FromTerm(cyclic) = %v, want recursive_cycle(cyclic_term)", err)
	}
	// A cyclic list ends too.
	l := engine.NewVariable()
	env, _ = engine.NewEnv().Unify(l, engine.PartialList(l, at("x")))
	tree := planterm.Tree(at("plan").Apply(l), env)
	if _, err := plan.FromTerm(tree); !errors.As(err, &pe) || pe.Detail.Name != "plan_too_large" && pe.Detail.Name != "recursive_cycle" {
		t.Fatalf("FromTerm(cyclic list) = %v", err)
	}
}

// TestTreeSharedSubterms: plan([rlm(P, a), rlm(P, b), final(...)]) nested
// 40 times over one shared P is tiny as a term but 2^40 steps as a tree.
func TestTreeSharedSubterms(t *testing.T) {
	at := engine.NewAtom
	term := read(t, `plan([final(literal(0))])`)
	for range 40 {
		rlm := func(b string) engine.Term { return at("rlm").Apply(term, at(b)) }
		term = at("plan").Apply(engine.List(rlm("a"), rlm("b"), at("final").Apply(at("var").Apply(at("b")))))
	}
	_, err := plan.FromTerm(planterm.Tree(term, nil))
	var pe *plan.ParseError
	if !errors.As(err, &pe) || pe.Detail.Name != "plan_too_large" {
		t.Fatalf("FromTerm = %v, want plan_too_large", err)
	}
}

func TestNonGroundHandlerPlan(t *testing.T) {
	at := engine.NewAtom
	term := at("plan").Apply(engine.List(at("final").Apply(at("literal").Apply(engine.NewVariable()))))
	_, err := plan.FromTerm(planterm.Tree(term, nil))
	var pe *plan.ParseError
	if !errors.As(err, &pe) || pe.Detail.String() != "non_ground_recursive_plan" {
		t.Fatalf("FromTerm = %v, want non_ground_recursive_plan", err)
	}
}

func writeq(t *testing.T, v any) string {
	t.Helper()
	term, err := planterm.ToTerm(v)
	if err != nil {
		t.Fatal(err)
	}
	return prolog.New(nil).WriteQ(term, nil)
}

func TestErrorRecord(t *testing.T) {
	_, err := plan.ParseTerm("plan([final(var(missing)), final(shell(ls))])", planterm.Reader{})
	var pe *plan.ParseError
	if !errors.As(err, &pe) {
		t.Fatal(err)
	}
	got := writeq(t, pe.AsError().Record())
	for _, want := range []string{`plan_error([cause("plan: term normalize error at 1:1: plan step 2: `,
		`,column(1),detail(invalid_reference("shell(ls)")),kind(invalid_plan),line(1),message("plan step 2: `,
		`,offset(0),phase(normalize),syntax(term)])`} {
		if !strings.Contains(got, want) {
			t.Errorf("record =\n %s\nwant it to contain\n %s", got, want)
		}
	}
}

func TestTermValue(t *testing.T) {
	v := map[string]any{"b": []handle.Match{{Index: 1, Value: "x"}}, "a": nil, "c": handle.Ref{ID: "h1", Version: 1}}
	if got, want := writeq(t, v), `json([a(null),b([match([index(1),value("x")])]),c(context_handle(h1,1))])`; got != want {
		t.Fatalf("ToTerm = %s, want %s", got, want)
	}
}

func TestValueRoundTrip(t *testing.T) {
	v := plan.Record{Tag: "r", Fields: []plan.Field{
		{Key: "a", Value: plan.Atom("x")},
		{Key: "b", Value: []any{"text", int64(1), 2.5}},
		{Key: "c", Value: plan.Compound{Functor: "f", Args: []any{plan.Atom("y"), plan.Record{Tag: "s", Fields: []plan.Field{}}}}},
	}}
	term, err := planterm.ToTerm(v)
	if err != nil {
		t.Fatal(err)
	}
	got, err := planterm.Value(term, nil)
	if err != nil || !reflect.DeepEqual(got, v) {
		t.Fatalf("Value(ToTerm(v)) = %#v, %v; want %#v", got, err, v)
	}
}
