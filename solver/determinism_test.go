package solver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
)

// sameSolution reports how b differs from a in anything but Stats.Elapsed,
// or "" if it does not.
func sameSolution(a, b Solution) string {
	switch {
	case a.Status != b.Status:
		return fmt.Sprintf("status %v, want %v", b.Status, a.Status)
	case !slices.Equal(a.Choice, b.Choice):
		return "different choice"
	case a.Utility != b.Utility || a.Tokens != b.Tokens || a.Bound != b.Bound:
		return fmt.Sprintf("utility/tokens/bound %d/%d/%d, want %d/%d/%d", b.Utility, b.Tokens, b.Bound, a.Utility, a.Tokens, a.Bound)
	case a.Stats.Limit != b.Stats.Limit || a.Stats.Work != b.Stats.Work || a.Stats.Nodes != b.Stats.Nodes:
		return fmt.Sprintf("limit/work/nodes %v/%d/%d, want %v/%d/%d", b.Stats.Limit, b.Stats.Work, b.Stats.Nodes, a.Stats.Limit, a.Stats.Work, a.Stats.Nodes)
	}
	return ""
}

// TestDeterministic solves one instance with the default options on four
// goroutines at once and checks that every run returns the same solution.
func TestDeterministic(t *testing.T) {
	p := genConversation(2, 2048, 128000, consFull)
	results := make([]Solution, 4)
	errs := make([]error, len(results))
	var wg sync.WaitGroup
	for i := range results {
		wg.Go(func() { results[i], errs[i] = Solve(context.Background(), p, nil) })
	}
	wg.Wait()
	for i, s := range results {
		if errs[i] != nil {
			t.Fatalf("run %d: %v", i, errs[i])
		}
		if s.Stats.Limit == LimitTime {
			t.Fatalf("run %d: the wall-clock safety net (%v) cut a default solve", i, DefaultTimeLimit)
		}
		if d := sameSolution(results[0], s); d != "" {
			t.Fatalf("run %d: %s", i, d)
		}
	}
}

// TestDeterministicUnderLoad solves instances of every constraint mix,
// some cut by each deterministic limit, 100+ times on four goroutines at
// once, and checks that every run matches a run made alone. The wall-clock
// safety net is off: what is checked is that the deterministic limits
// alone decide, however slow the machine (under -race, with other tests
// sharing the cores).
func TestDeterministicUnderLoad(t *testing.T) {
	type instance struct {
		p *Problem
		o *Options
	}
	var insts []instance
	for mix := range consNames {
		insts = append(insts, instance{genConversation(3, 1024, 128_000, mix), &Options{TimeLimit: -1}})
	}
	// Cut by each deterministic limit: work, nodes (one-way requires
	// that are not chains are branched on), states.
	hard := genConversation(1, 2048, 300_000, consHard)
	oneWay := genConversation(1, 2048, 128_000, consPairs)
	oneWay.Constraints = oneWay.Constraints[:0:0] // results require calls, not back
	prev := ""
	for i, c := range genConversation(1, 2048, 128_000, consPairs).Constraints {
		if i%2 == 0 {
			oneWay.Constraints = append(oneWay.Constraints, c)
			// Results also require the call before theirs: two requires
			// each, not a chain the DP would enforce.
			if prev != "" {
				oneWay.Constraints = append(oneWay.Constraints, Requires(c.A, prev))
			}
			prev = c.B
		}
	}
	insts = append(insts,
		instance{hard, &Options{TimeLimit: -1, MaxWork: 500_000}},
		instance{oneWay, &Options{TimeLimit: -1, MaxNodes: 2}},
		instance{hard, &Options{TimeLimit: -1, MaxStates: 5000}})
	want := make([]Solution, len(insts))
	limits := map[Limit]bool{}
	for i, in := range insts {
		var err error
		if want[i], err = Solve(context.Background(), in.p, in.o); err != nil {
			t.Fatal(err)
		}
		limits[want[i].Stats.Limit] = true
	}
	for _, l := range []Limit{LimitWork, LimitNodes, LimitStates} {
		if !limits[l] {
			t.Errorf("no instance was cut by the %v limit; the test no longer covers it", l)
		}
	}
	const workers = 4
	reps := (100 + len(insts) - 1) / len(insts)
	if testing.Short() {
		reps = 1
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Go(func() {
			for {
				k := int(next.Add(1) - 1)
				if k >= reps*len(insts) {
					return
				}
				i := k % len(insts)
				got, err := Solve(context.Background(), insts[i].p, insts[i].o)
				if err == nil {
					if d := sameSolution(want[i], got); d != "" {
						err = fmt.Errorf("instance %d, run %d: %s", i, k, d)
					}
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// cancelAfter is a context whose Err reports Canceled from the n-th call
// on: a deterministic stand-in for a caller that cancels mid-search.
type cancelAfter struct {
	context.Context
	n atomic.Int64
}

func (c *cancelAfter) Err() error {
	if c.n.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

func TestCancelledDuringSearch(t *testing.T) {
	ctx := &cancelAfter{Context: context.Background()}
	ctx.n.Store(3) // the entry check and a couple of samples pass
	sol, err := Solve(ctx, genConversation(1, 2048, 300_000, consHard), &Options{TimeLimit: -1})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Solve = %v, %v; want context.Canceled", sol.Status, err)
	}
}
