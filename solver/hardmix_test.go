package solver

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A mixCell is one line of testdata/hardmix.txt.
type mixCell struct {
	n        int
	capacity int64
	mix      int
	seeds    []uint64
}

func (c mixCell) String() string {
	return fmt.Sprintf("n=%d/cap=%dk/mix=%s", c.n, c.capacity/1000, consNames[c.mix])
}

// readMixCells reads testdata/hardmix.txt.
func readMixCells(tb testing.TB) []mixCell {
	f, err := os.Open("testdata/hardmix.txt")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var cells []mixCell
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var c mixCell
		var mix, seeds string
		if _, err := fmt.Sscan(line, &c.n, &c.capacity, &mix, &seeds); err != nil {
			tb.Fatalf("hardmix.txt: %q: %v", line, err)
		}
		c.mix = slices.Index(consNames, mix)
		lo, hi, ok := strings.Cut(seeds, "-")
		a, err1 := strconv.ParseUint(lo, 10, 64)
		b, err2 := strconv.ParseUint(hi, 10, 64)
		if c.mix < 0 || !ok || err1 != nil || err2 != nil || a > b {
			tb.Fatalf("hardmix.txt: bad line %q", line)
		}
		for s := a; s <= b; s++ {
			c.seeds = append(c.seeds, s)
		}
		cells = append(cells, c)
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return cells
}

// BenchmarkHardMix solves the benchmark set of testdata/hardmix.txt with
// the default options, beside the two baselines measured in the same run:
// greedy newest-first (what most chat libraries do) and, where it fits
// (mix none, capacity × units ≤ 4e8, or ≤ 1e9 for the first three seeds),
// the textbook DP reference. Each
// iteration solves the cell's next seed. Reported per cell:
//
//	p50-ms, p99-ms   wall time of Solve
//	proven-%         share of runs proven optimal
//	work-k-p50       median deterministic work (Stats.Work), thousands:
//	                 the same on every machine
//	gap-ppm          worst (Bound − Utility)/Utility, parts per million
//	vs-greedy-%      least utility gain over greedy newest-first, as a
//	                 share of the optional (non-mandatory) utility; a
//	                 negative value is a failure
//	greedy-ms        p50 wall time of greedy newest-first
//	dp-agree-%       runs whose utility equals the DP reference (-1: not run)
//	dp-ms            p50 wall time of the DP reference
//
// Run it (about 10 minutes on one core) with
//
//	nice go test ./solver -run '^$' -bench BenchmarkHardMix -benchtime 20x -timeout 60m
//
// and one cell with, e.g., -bench 'BenchmarkHardMix/n=2048/cap=300k/mix=warmhard'.
func BenchmarkHardMix(b *testing.B) {
	for _, c := range readMixCells(b) {
		b.Run(c.String(), func(b *testing.B) { benchMix(b, c) })
	}
}

func benchMix(b *testing.B, c mixCell) {
	type inst struct {
		p              *Problem
		greedyU, mandU int64
		greedyT, dpT   time.Duration
		dpU            int64
		hasDP          bool
	}
	insts := make([]inst, len(c.seeds))
	for k, s := range c.seeds {
		p := genConversation(s, c.n, c.capacity, c.mix)
		in := inst{p: p}
		t0 := time.Now()
		g := greedyNewestFirst(p)
		in.greedyT = time.Since(t0)
		if g != nil {
			in.greedyU, _, _ = p.Evaluate(g)
		}
		for _, u := range p.Units {
			if u.Mandatory {
				in.mandU += u.Variants[len(u.Variants)-1].Utility
			}
		}
		// The DP reference where it is cheap: every seed up to 4e8 cells,
		// the first three up to 1e9.
		if cells := c.capacity * int64(c.n); c.mix == consNone && (cells <= 4e8 || cells <= 1e9 && k < 3) {
			t0 = time.Now()
			in.dpU, in.hasDP = referenceDP(p)
			in.dpT = time.Since(t0)
		}
		insts[k] = in
	}
	var times, greedyTimes, dpTimes []time.Duration
	var work []int64
	proven, dpRuns, dpAgree := 0, 0, 0
	worstGap, minGain := 0.0, 1e9
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		in := insts[i%len(insts)]
		t0 := time.Now()
		sol, err := Solve(context.Background(), in.p, nil)
		d := time.Since(t0)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		times = append(times, d)
		work = append(work, sol.Stats.Work)
		greedyTimes = append(greedyTimes, in.greedyT)
		if sol.Status == Optimal {
			proven++
		}
		if _, _, err := in.p.Evaluate(sol.Choice); err != nil {
			b.Fatalf("invalid pack: %v", err)
		}
		if sol.Utility > 0 {
			worstGap = max(worstGap, float64(sol.Bound-sol.Utility)/float64(sol.Utility)*1e6)
		}
		if opt := sol.Utility - in.mandU; opt > 0 {
			minGain = min(minGain, float64(sol.Utility-in.greedyU)/float64(opt)*100)
		}
		if sol.Utility < in.greedyU {
			b.Errorf("utility %d below greedy newest-first %d", sol.Utility, in.greedyU)
		}
		if in.hasDP {
			dpRuns++
			dpTimes = append(dpTimes, in.dpT)
			if sol.Utility == in.dpU {
				dpAgree++
			} else if sol.Status == Optimal {
				b.Errorf("optimal utility %d, DP reference %d", sol.Utility, in.dpU)
			}
		}
		b.StartTimer()
	}
	b.StopTimer()
	q := func(ts []time.Duration, f float64) float64 {
		slices.Sort(ts)
		return float64(ts[int(f*float64(len(ts)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(q(times, 0.5), "p50-ms")
	b.ReportMetric(q(times, 0.99), "p99-ms")
	b.ReportMetric(100*float64(proven)/float64(b.N), "proven-%")
	slices.Sort(work)
	b.ReportMetric(float64(work[len(work)/2])/1000, "work-k-p50")
	b.ReportMetric(worstGap, "gap-ppm")
	if minGain < 1e9 {
		b.ReportMetric(minGain, "vs-greedy-%")
	}
	b.ReportMetric(q(greedyTimes, 0.5), "greedy-ms")
	if dpRuns > 0 {
		b.ReportMetric(100*float64(dpAgree)/float64(dpRuns), "dp-agree-%")
		b.ReportMetric(q(dpTimes, 0.5), "dp-ms")
	} else {
		b.ReportMetric(-1, "dp-agree-%")
	}
}
