package solver

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// BenchmarkSolve measures Solve on generated conversations (genConversation:
// realistic token sizes, mandatory tail, recency-weighted old messages, warm
// 4-variant units) for every N, capacity and constraint level, seeds 1-5,
// with the metrics of BenchmarkHardMix (benchMix). Run the table with
//
//	go test ./solver -run '^$' -bench BenchmarkSolve -benchtime 5x -timeout 60m
//
// and one cell with, e.g., -bench 'BenchmarkSolve/n=2048/cap=300k/mix=full'.
func BenchmarkSolve(b *testing.B) {
	for _, n := range []int{32, 128, 512, 2048, 10000} {
		for _, c := range []int64{8_000, 128_000, 300_000, 1_000_000} {
			for cons := consNone; cons <= consHard; cons++ {
				cell := mixCell{n: n, capacity: c, mix: cons, seeds: []uint64{1, 2, 3, 4, 5}}
				b.Run(cell.String(), func(b *testing.B) { benchMix(b, cell) })
			}
		}
	}
}

// BenchmarkCoreSearch compares the two ways of closing a small core the
// root DP leaves open (dense random constraints, 20 units, all in the
// core): branch and bound with the DP as relaxation (bb), against gini
// searching the core under U ≥ T after the root node (gini: MaxNodes 1,
// so the search hands over at once; its work budget is capped so that
// the benchmark ends). Reported: p50-ms and proven-% over the instances.
// The numbers decided that the search branches and gini only gets the
// core when a structural limit stops it (see doc.go).
func BenchmarkCoreSearch(b *testing.B) {
	r := rand.New(rand.NewPCG(11, 12))
	var insts []*Problem
	for len(insts) < 8 {
		p := randDense(r, 20, 20)
		if sol, _ := Solve(context.Background(), p, nil); sol.Stats.Nodes > 1 {
			insts = append(insts, p)
		}
	}
	for _, mode := range []struct {
		name string
		o    Options
	}{
		{"bb", Options{TimeLimit: -1}},
		{"gini", Options{TimeLimit: -1, MaxNodes: 1, MaxWork: 10_000_000}},
	} {
		b.Run(mode.name, func(b *testing.B) {
			var times []time.Duration
			proven := 0
			for i := 0; i < b.N; i++ {
				p := insts[i%len(insts)]
				o := mode.o
				t0 := time.Now()
				sol, err := Solve(context.Background(), p, &o)
				times = append(times, time.Since(t0))
				if err != nil {
					b.Fatal(err)
				}
				if sol.Status == Optimal {
					proven++
				}
			}
			slices.Sort(times)
			b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(100*float64(proven)/float64(b.N), "proven-%")
		})
	}
}

// BenchmarkCheck measures the gini check Solve runs on every pack, at the
// sizes of the benchmark set (the core, whose capacity gini sums, as Solve
// leaves it).
func BenchmarkCheck(b *testing.B) {
	for _, n := range []int{2048, 10000} {
		p := genConversation(1, n, 300_000, consWarmHard)
		idx, err := p.validate()
		if err != nil {
			b.Fatal(err)
		}
		sol, err := Solve(context.Background(), p, nil)
		if err != nil {
			b.Fatal(err)
		}
		core := make([]int, 0, checkSumUnits)
		for u := range p.Units[:min(sol.Stats.Core, checkSumUnits, len(p.Units))] {
			core = append(core, u)
		}
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			for range b.N {
				if err := check(p, idx, sol.Choice, core); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
