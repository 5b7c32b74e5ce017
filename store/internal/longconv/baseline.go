package longconv

import (
	"math"
	"slices"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/standard"
	"github.com/blevesearch/bleve/v2/registry"
)

// Plain is the baseline: textbook BM25 (k1 1.2, b 0.75) over the text of
// each turn alone (no captions, names or dates), analyzed by bleve's
// standard analyzer (Unicode words, lower case, English stop words, no
// stemming), average length in tokens. It ranks the turns of one
// conversation; ties keep conversation order.
type Plain struct {
	an    analysis.Analyzer
	tf    []map[string]int
	len   []int
	df    map[string]int
	n     int
	avgdl float64
}

// NewPlain indexes the turns of c.
func NewPlain(c Conversation) (*Plain, error) {
	an, err := registry.NewCache().AnalyzerNamed(standard.Name)
	if err != nil {
		return nil, err
	}
	p := &Plain{an: an, df: map[string]int{}}
	total := 0
	for _, t := range c.Turns() {
		tf := map[string]int{}
		n := 0
		for _, tok := range an.Analyze([]byte(t.Text)) {
			tf[string(tok.Term)]++
			n++
		}
		for term := range tf {
			p.df[term]++
		}
		p.tf, p.len = append(p.tf, tf), append(p.len, n)
		total += n
	}
	p.n = len(p.tf)
	p.avgdl = math.Max(1, float64(total)/float64(p.n))
	return p, nil
}

// Rank returns the indexes of the turns matching q, best first.
func (p *Plain) Rank(q string) []int {
	score := p.Scores(q)
	var hits []int
	for d, s := range score {
		if s > 0 {
			hits = append(hits, d)
		}
	}
	slices.SortStableFunc(hits, func(a, b int) int {
		switch {
		case score[a] > score[b]:
			return -1
		case score[a] < score[b]:
			return 1
		}
		return 0
	})
	return hits
}

// Scores returns the BM25 score of each turn for q.
func (p *Plain) Scores(q string) []float64 {
	var terms []string
	for _, tok := range p.an.Analyze([]byte(q)) {
		if t := string(tok.Term); !slices.Contains(terms, t) {
			terms = append(terms, t)
		}
	}
	const k1, b = 1.2, 0.75
	score := make([]float64, p.n)
	for d := range p.tf {
		for _, t := range terms {
			tf := float64(p.tf[d][t])
			if tf == 0 {
				continue
			}
			df := float64(p.df[t])
			idf := math.Log(1 + (float64(p.n)-df+0.5)/(df+0.5))
			score[d] += idf * tf * (k1 + 1) / (tf + k1*(1-b+b*float64(p.len[d])/p.avgdl))
		}
	}
	return score
}
