package prolog_test

import (
	"context"
	"testing"

	"github.com/rlmpl/rlmpl/prolog"
)

// TestConsultSharedIsolatesInterpreters: interpreters that share a
// consult see its procedures and its directives' effects, and each
// changes its own dynamic procedures only — the first one, whose consult
// the others share, included.
func TestConsultSharedIsolatesInterpreters(t *testing.T) {
	texts := []prolog.Text{{Name: "shared_test.pl", Text: `
:- dynamic(counter_/1).
counter_(0).
bump_ :- retract(counter_(N)), N1 is N + 1, assertz(counter_(N1)).
double_(X, Y) :- Y is 2 * X.
:- nb_setval(shared_test_key, loaded).
`}}
	ctx := context.Background()
	var ins []*prolog.Interpreter
	for range 3 {
		in := prolog.New(nil)
		if err := in.ConsultShared(ctx, texts); err != nil {
			t.Fatal(err)
		}
		ins = append(ins, in)
	}
	for i, in := range ins {
		for range i + 1 {
			if got := solve(t, in, "bump_"); got != "true" {
				t.Fatalf("interpreter %d: bump_ = %s", i, got)
			}
		}
	}
	for i, in := range ins {
		if got := solve(t, in, "counter_(R)"); got != []string{"1", "2", "3"}[i] {
			t.Errorf("interpreter %d: counter_ = %s, want %d", i, got, i+1)
		}
		if got := solve(t, in, "double_(21, R)"); got != "42" {
			t.Errorf("interpreter %d: double_ = %s", i, got)
		}
		if got := solve(t, in, "nb_getval(shared_test_key, R)"); got != "loaded" {
			t.Errorf("interpreter %d: the directive did not run: %s", i, got)
		}
	}
	// A fourth interpreter starts from the texts, not from anyone's changes.
	in := prolog.New(nil)
	if err := in.ConsultShared(ctx, texts); err != nil {
		t.Fatal(err)
	}
	if got := solve(t, in, "counter_(R)"); got != "0" {
		t.Errorf("a new interpreter sees counter_ = %s, want 0", got)
	}
	// Redefining a shared predicate changes that interpreter alone.
	if err := ins[0].Consult(ctx, "mine.pl", "double_(X, Y) :- Y is 3 * X.\n"); err != nil {
		t.Fatal(err)
	}
	if a, b := solve(t, ins[0], "double_(2, R)"), solve(t, ins[1], "double_(2, R)"); a != "6" || b != "4" {
		t.Errorf("redefinition leaked: %s %s", a, b)
	}
}
