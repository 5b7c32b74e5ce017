package longconv

import (
	"fmt"
	"slices"
	"strings"
)

// Ks are the cut-offs of recall@k.
var Ks = [3]int{1, 5, 10}

// Recall counts questions and those answered within each cut-off.
type Recall struct {
	N   int
	Hit [len(Ks)]int
}

// Add counts one question the system answered with the ranked turns.
func (r *Recall) Add(q Question, ranked []string) {
	var got [len(Ks)][]string
	for i, k := range Ks {
		got[i] = ranked[:min(k, len(ranked))]
	}
	r.AddEach(q, got)
}

// AddEach counts one question the system answered with got[i] when asked
// for Ks[i] results.
func (r *Recall) AddEach(q Question, got [len(Ks)][]string) {
	r.N++
	for i := range Ks {
		for _, id := range got[i] {
			if slices.Contains(q.Evidence, id) {
				r.Hit[i]++
				break
			}
		}
	}
}

// At returns recall@Ks[i].
func (r Recall) At(i int) float64 {
	if r.N == 0 {
		return 0
	}
	return float64(r.Hit[i]) / float64(r.N)
}

// Table is recall per question type of the baseline, of the system
// measured, and of the system with each hit's window (what the planner
// gets in one search).
type Table struct {
	Name  string
	Types []string // in first-seen order
	Base  map[string]*Recall
	Ours  map[string]*Recall
	Win   map[string]*Recall
}

// NewTable returns an empty table.
func NewTable(name string) *Table {
	return &Table{Name: name, Base: map[string]*Recall{}, Ours: map[string]*Recall{}, Win: map[string]*Recall{}}
}

// Add records one question's rankings: the baseline's, the system's, and
// what the system returns, hits and windows, when asked for Ks[i] hits.
func (t *Table) Add(q Question, base, ours []string, windowed [len(Ks)][]string) {
	if t.Base[q.Type] == nil {
		t.Types = append(t.Types, q.Type)
		t.Base[q.Type], t.Ours[q.Type], t.Win[q.Type] = &Recall{}, &Recall{}, &Recall{}
	}
	t.Base[q.Type].Add(q, base)
	t.Ours[q.Type].Add(q, ours)
	t.Win[q.Type].AddEach(q, windowed)
}

// Total sums the types: baseline, system, system with windows.
func (t *Table) Total() (base, ours, win Recall) {
	for _, ty := range t.Types {
		for _, x := range []struct{ sum, r *Recall }{{&base, t.Base[ty]}, {&ours, t.Ours[ty]}, {&win, t.Win[ty]}} {
			x.sum.N += x.r.N
			for i := range Ks {
				x.sum.Hit[i] += x.r.Hit[i]
			}
		}
	}
	return base, ours, win
}

// String renders the table: recall@1/5/10 of the plain BM25 baseline, of
// the store's search, the gain, and the search counting the window of
// one turn each side that comes with each hit.
func (t *Table) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: recall@1 / @5 / @10\n", t.Name)
	fmt.Fprintf(&b, "  %-13s %5s   %-17s   %-17s   %-13s   %s\n", "type", "n", "plain BM25", "rlmpl search", "gain @1 @10", "rlmpl, hits with window ±1")
	row := func(name string, base, ours, win Recall) {
		fmt.Fprintf(&b, "  %-13s %5d   %.3f %.3f %.3f   %.3f %.3f %.3f   %+.3f %+.3f   %.3f %.3f %.3f\n", name, base.N,
			base.At(0), base.At(1), base.At(2), ours.At(0), ours.At(1), ours.At(2), ours.At(0)-base.At(0), ours.At(2)-base.At(2),
			win.At(0), win.At(1), win.At(2))
	}
	for _, ty := range t.Types {
		row(ty, *t.Base[ty], *t.Ours[ty], *t.Win[ty])
	}
	base, ours, win := t.Total()
	row("all", base, ours, win)
	return b.String()
}
