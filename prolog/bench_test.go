package prolog_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ichiban/prolog/engine"

	"github.com/rlmpl/rlmpl/prolog"
	"github.com/rlmpl/rlmpl/prolog/enginebench"
)

// BenchmarkNew: interpreter creation with rlmpl's flags, edges and prelude.
func BenchmarkNew(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		prolog.New(nil)
	}
}

// BenchmarkTrivialQuery: round trip of `true` through Query/Next/Close.
func BenchmarkTrivialQuery(b *testing.B) {
	in := prolog.New(nil)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := in.Once(ctx, "true"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkForeignCall: cost of one call of a trivial det foreign predicate,
// measured inside a failure-driven loop of 1000 calls (ns/op is per call).
func BenchmarkForeignCall(b *testing.B) {
	in := prolog.New(nil)
	in.Install(prolog.Pred1("noop", "noop(+X) is det", func(c *prolog.Call, x engine.Term) (bool, error) {
		return true, nil
	}))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := in.Once(ctx, "(between(1, 1000, X), noop(X), fail ; true)"); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1000), "ns/call")
}

// BenchmarkBaselineLoop is the same loop without the foreign call, so the
// foreign call's own cost is ForeignCall − BaselineLoop.
func BenchmarkBaselineLoop(b *testing.B) {
	in := prolog.New(nil)
	ctx := context.Background()
	for b.Loop() {
		if _, err := in.Once(ctx, "(between(1, 1000, X), X > 0, fail ; true)"); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1000), "ns/call")
}

// nrevInterp returns an interpreter that consulted the nrev30 workload of
// `rlmpl bench engine`: nrev30(K) reverses a 30-element list K times.
func nrevInterp(b *testing.B) *prolog.Interpreter {
	in := prolog.New(nil)
	for _, w := range enginebench.Workloads() {
		if w.Name == "nrev30" {
			if err := in.Consult(context.Background(), "nrev.pl", w.Script()); err != nil {
				b.Fatal(err)
			}
			return in
		}
	}
	b.Fatal("no nrev30 workload")
	return nil
}

// BenchmarkNrev30: naive reverse of 30 elements (496 logical inferences),
// the classic LIPS measure, for comparison with other engines.
func BenchmarkNrev30(b *testing.B) {
	in := nrevInterp(b)
	ctx := context.Background()
	const reps = 20
	for b.Loop() {
		if _, err := in.Once(ctx, "nrev30(20)"); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(496*reps*b.N)/b.Elapsed().Seconds(), "LIPS")
}

// BenchmarkQueryDriver compares the host's query driver (a Query handing
// each solution over and asking whether a choice point remains) with the
// engine's Force on the same goal: nrev30 twenty times, then a
// failure-driven loop of 1000 solutions (one hand-over per solution).
func BenchmarkQueryDriver(b *testing.B) {
	in := nrevInterp(b)
	ctx := context.Background()
	for _, goal := range []string{"nrev30(20)", "between(1, 1000, _)"} {
		b.Run("host/"+goal, func(b *testing.B) {
			for b.Loop() {
				q, err := in.Query(ctx, goal)
				if err != nil {
					b.Fatal(err)
				}
				for q.Next() {
				}
				q.Close()
			}
		})
		b.Run("engine/"+goal, func(b *testing.B) {
			t, err := engine.NewParser(in.VM(), strings.NewReader(goal+".")).Term()
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := engine.Call(in.VM(), t, engine.Failure, nil).Force(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFactLookup: a lookup by the first argument among N asserted
// facts reaches its clause through the index, so its cost does not grow
// with N (beyond the cache misses of a bigger table).
func BenchmarkFactLookup(b *testing.B) {
	for _, n := range []int{100, 1000, 10000, 100000} {
		b.Run(fmt.Sprintf("facts=%d", n), func(b *testing.B) {
			in := prolog.New(nil)
			ctx := context.Background()
			src := ":- dynamic(fact/2).\nfill(N) :- between(1, N, K), assertz(fact(K, K)), fail.\nfill(_).\n" +
				"look(N, M) :- between(1, M, I), K is I mod N + 1, fact(K, _), fail.\nlook(_, _).\n"
			if err := in.Consult(ctx, "facts.pl", src); err != nil {
				b.Fatal(err)
			}
			if _, err := in.Once(ctx, fmt.Sprintf("fill(%d)", n)); err != nil {
				b.Fatal(err)
			}
			const lookups = 10000
			for b.Loop() {
				if _, err := in.Once(ctx, fmt.Sprintf("look(%d, %d)", n, lookups)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*lookups), "ns/lookup")
		})
	}
}
