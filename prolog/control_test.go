package prolog_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	ichiban "github.com/ichiban/prolog"
	"github.com/ichiban/prolog/engine"

	"github.com/rlmpl/rlmpl/prolog"
)

// issue13 is the program of issue #13: an exception raised after a
// catch/3 call has exited.
const issue13 = `main :- catch(true, E, (write(caught(E)), nl)), write(after), nl, throw(x).`

// TestEngineCatchEndsWhenGoalExits: the vendored engine's own catch/3 is
// ISO's. Upstream ichiban v1.2.2 kept a catch/3 active after its goal
// exited, so the later exception was caught and the continuation ran
// twice ("after", "caught(x)", "after"); the machine's catch/3 is active
// only while its goal runs.
func TestEngineCatchEndsWhenGoalExits(t *testing.T) {
	var out bytes.Buffer
	p := ichiban.New(nil, &out)
	if err := p.Exec(issue13); err != nil {
		t.Fatal(err)
	}
	err := p.QuerySolution(`main.`).Err()
	if got, want := out.String(), "after\n"; got != want || err == nil {
		t.Errorf("engine: output %q, err %v; want %q and the uncaught x", got, err, want)
	}
}

// TestCatchEndsWhenGoalExits runs the same program on the host: after is
// printed once and x is not caught.
func TestCatchEndsWhenGoalExits(t *testing.T) {
	var out bytes.Buffer
	in := prolog.New(&prolog.Options{Stdout: &out})
	if err := in.Consult(context.Background(), "main.pl", issue13); err != nil {
		t.Fatal(err)
	}
	_, err := in.Once(context.Background(), "main")
	if got := out.String(); got != "after\n" {
		t.Errorf("output = %q, want %q", got, "after\n")
	}
	if ex, ok := err.(engine.Exception); !ok || ex.Term() != engine.NewAtom("x") {
		t.Errorf("err = %v, want the uncaught exception x", err)
	}
}

// TestCatchCannotSwallowCancellation: a cancelled query ends even when the
// running goal is inside catch/3 with a catch-all catcher.
func TestCatchCannotSwallowCancellation(t *testing.T) {
	in := prolog.New(nil)
	if err := in.Consult(context.Background(), "loop.pl", "loop :- loop.\n"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := in.Once(ctx, "catch(loop, _, true)"); err != context.Canceled {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if _, err := in.Once(context.Background(), "catch(halt(3), _, true)"); err == nil || err.Error() != "prolog: halt(3)" {
		t.Errorf("halt inside catch: err = %v, want halt(3)", err)
	}
}

// BenchmarkCatch compares the host's catch/3 with ichiban's (registered as
// ichiban_catch/3) and with call/1 of the same goal, each in a
// failure-driven loop of 1000 calls. It alternates the three within each
// round, so that load on a shared machine hits them alike, and reports the
// median cost per iteration of each and the median ratio of the catch/3
// costs beyond call/1, host/ichiban. Goals: a builtin (true), a user
// predicate with two clauses (it leaves a choice point at exit, so the
// re-activation marker runs on backtracking), a conjunction. Run with
// -benchtime=30x for 30 rounds.
func BenchmarkCatch(b *testing.B) {
	in := prolog.New(nil)
	in.VM().Register3(engine.NewAtom("ichiban_catch"), engine.Catch)
	ctx := context.Background()
	if err := in.Consult(ctx, "b.pl", "p(1).\np(2).\n"); err != nil {
		b.Fatal(err)
	}
	for _, goal := range []string{"true", "p(_)", "(X > 0, true)"} {
		b.Run(goal, func(b *testing.B) {
			loop := func(call string) time.Duration {
				q := "(between(1, 1000, X), " + call + ", fail ; true)"
				start := time.Now()
				if _, err := in.Once(ctx, q); err != nil {
					b.Fatal(err)
				}
				return time.Since(start) / 1000
			}
			var none, host, ich, ratio []float64
			for b.Loop() {
				n := loop("call(" + goal + ")")
				h := loop("catch(" + goal + ", _, true)")
				i := loop("ichiban_catch(" + goal + ", _, true)")
				none, host, ich = append(none, float64(n)), append(host, float64(h)), append(ich, float64(i))
				ratio = append(ratio, float64(h-n)/float64(max(i-n, 1)))
			}
			median := func(xs []float64) float64 { slices.Sort(xs); return xs[len(xs)/2] }
			b.ReportMetric(median(none), "ns/call")
			b.ReportMetric(median(host), "ns/catch")
			b.ReportMetric(median(ich), "ns/ichiban_catch")
			b.ReportMetric(median(ratio), "host/ichiban")
		})
	}
}

// TestLastSolution: Query.Last tells a deterministic answer from one that
// left a choice point, as SWI's top level does (without clause indexing:
// a predicate whose other clauses cannot match still leaves one).
func TestLastSolution(t *testing.T) {
	in := prolog.New(nil)
	ctx := context.Background()
	if err := in.Consult(ctx, "p.pl", "p(1).\np(2).\nq(1) :- !.\nq(2).\n"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		goal string
		last []bool // per solution
	}{
		{"X = 1", []bool{true}},
		{"X is 2 + 2", []bool{true}},
		{"true", []bool{true}},
		{"fail", nil},
		{"p(X)", []bool{false, true}},
		{"member(X, [a, b])", []bool{false, true}},
		{"member(X, [a|T])", []bool{false, false, false}},
		{"number(1.0), callable(a), a @>= a, a @=< b, nonvar(a), atomic(a)", []bool{true}},
		{"\\+ fail, a \\= b, a \\== b, a == a", []bool{true}},
		{"X = 1 ; X = 2", []bool{false, true}},
		{"q(X)", []bool{true}},
		{"once(p(X))", []bool{true}},
		{"catch(true, _, true)", []bool{true}},
		{"catch(p(X), _, true)", []bool{false, true}},
		{"findall(X, p(X), L)", []bool{true}},
		{"between(1, 3, X)", []bool{false, false, true}},
		{"repeat, !", []bool{true}},
	} {
		t.Run(tc.goal, func(t *testing.T) {
			q, err := in.Query(ctx, tc.goal)
			if err != nil {
				t.Fatal(err)
			}
			defer q.Close()
			var got []bool
			for len(got) < 3 && q.Next() {
				got = append(got, q.Last())
			}
			if err := q.Err(); err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.last) {
				t.Errorf("Last per solution = %v, want %v", got, tc.last)
			}
		})
	}
}
