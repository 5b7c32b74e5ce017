package store

import (
	"bytes"
	"cmp"
	"container/heap"
	"context"
	"math"
	"slices"

	index "github.com/blevesearch/bleve_index_api"
)

// Ranked search scores every message with one formula, whether it comes
// from the index or from the scan of messages not indexed yet: BM25
// (Robertson/Lucene form) over the scored fields, with the statistics of
// everything searchable (the index snapshot plus the scanned tail):
//
//	score(d) = Σ_t Σ_f idf_f(t) · tf·(k1+1) / (tf + k1·(1 − b + b·len_f(d)/avgdl_f))
//	idf_f(t) = ln(1 + (N_f − df_f(t) + 0.5) / (df_f(t) + 0.5))
//
// where f ranges over the scored fields (body, attachments), N_f is the
// number of documents with field f, avgdl_f their mean length in tokens,
// and len_f(d) the document's. Then the qualifiers: a message whose author
// the query names is worth (1 + speakerBoost) times its score, one said in
// a month or year the query names (1 + dateBoost) times (in proportion to
// the date terms it matches). Qualifiers never make a message match.
//
// Top-k retrieval is exact and does not score every posting (MaxScore,
// Turtle & Flood 1995): clauses are sorted by their score's upper bound,
// and once the k-th best score exceeds what the cheapest clauses could add
// together, those stop producing candidates; they are only probed for
// documents the others found. A term in more than half of the documents
// (and in more than commonFloor of them) is dropped from the query: its
// idf is below ln 2, its posting list the longest, and what it adds to a
// ranking is noise (Result.Dropped says so, so the caller can rephrase).
const (
	bm25K1 = 1.2
	// bm25B is lower than the usual 0.75: a chat turn is short, and a long
	// one is usually long because it says more, not because it repeats
	// itself, so its length says less about its relevance.
	bm25B        = 0.5
	speakerBoost = 0.5
	dateBoost    = 0.5
)

// commonFloor is the document frequency below which no term is dropped as
// common: scanning that many postings costs about 5 ms, and small
// conversations keep exact rankings. A variable so tests can lower it.
var commonFloor uint64 = 1 << 16

// clause is one query term in one scored field. Its score for a document
// holding the term tf times in a field of dl tokens is
// w·tf / (tf + k + kl·dl): the BM25 term above, constants folded.
type clause struct {
	term, field int // indexes into plan.terms and scoredFields
	w, k, kl    float64
	ub          float64 // upper bound of its score (tf → ∞)
}

// plan is a ranked query bound to the statistics of what it searches.
type plan struct {
	terms    []queryTerm
	clauses  []clause // in (term, field) order: scores sum in this order everywhere
	speakers []int    // terms that name an author
	dates    []int    // terms that name a month or year
	dropped  []string // query words dropped as common
}

// docTerms is what a document holds of the query's terms, computed from
// its text (unindexed messages, neighbours) rather than from postings.
type docTerms struct {
	len    [len(scoredFields)]int
	tf     [len(scoredFields)][]uint64 // per field, per query term
	author []bool                      // per query term: in the author field
	date   []bool                      // per query term: in the date field
}

func (dt docTerms) matches() bool {
	for _, tfs := range dt.tf {
		for _, n := range tfs {
			if n > 0 {
				return true
			}
		}
	}
	return false
}

// analyzeDoc returns what d holds of terms.
func (a textAnalyzer) analyzeDoc(d docText, terms []queryTerm) docTerms {
	var dt docTerms
	for f, text := range [...]string{d.body, d.attach} {
		dt.tf[f] = make([]uint64, len(terms))
		toks := a.terms(text)
		dt.len[f] = len(toks)
		for _, tok := range toks {
			for i, t := range terms {
				if t.term == tok {
					dt.tf[f][i]++
				}
			}
		}
	}
	dt.author = a.contains(d.author, terms)
	dt.date = a.contains(d.date, terms)
	return dt
}

// contains reports, for each query term, whether text holds it.
func (a textAnalyzer) contains(text string, terms []queryTerm) []bool {
	out := make([]bool, len(terms))
	for _, tok := range a.terms(text) {
		for i, t := range terms {
			out[i] = out[i] || t.term == tok
		}
	}
	return out
}

// frequencies are the document frequencies of the query's terms.
type frequencies struct {
	scored [len(scoredFields)][]uint64 // per field, per term
	author []uint64
	date   []uint64
}

func newFrequencies(n int) frequencies {
	var fr frequencies
	for f := range fr.scored {
		fr.scored[f] = make([]uint64, n)
	}
	fr.author, fr.date = make([]uint64, n), make([]uint64, n)
	return fr
}

// count adds a document's terms.
func (fr *frequencies) count(dt docTerms) {
	for f := range fr.scored {
		for i, n := range dt.tf[f] {
			if n > 0 {
				fr.scored[f][i]++
			}
		}
	}
	for i := range dt.author {
		if dt.author[i] {
			fr.author[i]++
		}
		if dt.date[i] {
			fr.date[i]++
		}
	}
}

// indexFrequencies reads the document frequencies of terms in snapshot r,
// or in the conversation of scope when not nil. Qualifier fields only need
// to know whether a term occurs: their counts stop at 1.
func indexFrequencies(r index.IndexReader, terms []queryTerm, scope *scopeIndex) (frequencies, error) {
	fr := newFrequencies(len(terms))
	for i, t := range terms {
		for _, x := range []struct {
			field string
			dst   *uint64
			limit uint64
		}{{fieldBody, &fr.scored[0][i], 0}, {fieldAttach, &fr.scored[1][i], 0}, {fieldAuthor, &fr.author[i], 1}, {fieldDate, &fr.date[i], 1}} {
			var err error
			if scope == nil {
				*x.dst, err = countAll(r, t.term, x.field)
			} else {
				*x.dst, err = countIn(r, t.term, x.field, scope.num, x.limit)
			}
			if err != nil {
				return fr, err
			}
		}
	}
	return fr, nil
}

// countAll returns the number of documents with term in field.
func countAll(r index.IndexReader, term, field string) (uint64, error) {
	tfr, err := r.TermFieldReader(context.Background(), []byte(term), field, false, false, false)
	if err != nil {
		return 0, err
	}
	defer tfr.Close()
	return tfr.Count(), nil
}

// countIn returns the number of documents of conversation num with term in
// field, up to limit (0: no limit), leapfrogging the two posting lists.
func countIn(r index.IndexReader, term, field string, num uint64, limit uint64) (uint64, error) {
	p, err := openPosting(r, term, field, false)
	if err != nil {
		return 0, err
	}
	defer p.r.Close()
	if p.done {
		return 0, nil
	}
	c, err := openPosting(r, convTerm(num), fieldConv, false)
	if err != nil {
		return 0, err
	}
	defer c.r.Close()
	var n uint64
	for !p.done && !c.done && (limit == 0 || n < limit) {
		switch d := bytes.Compare(p.cur.ID, c.cur.ID); {
		case d == 0:
			n++
			if err = p.next(); err == nil {
				err = c.next()
			}
		case d < 0:
			err = p.seek(c.cur.ID)
		default:
			err = c.seek(p.cur.ID)
		}
		if err != nil {
			return 0, err
		}
	}
	return n, nil
}

// newPlan binds terms to the statistics st and frequencies fr.
func newPlan(terms []queryTerm, st indexStats, fr frequencies) *plan {
	p := &plan{terms: terms}
	for i, t := range terms {
		if fr.author[i] > 0 {
			p.speakers = append(p.speakers, i)
		}
		if fr.date[i] > 0 {
			p.dates = append(p.dates, i)
		}
		if df := fr.scored[0][i]; 2*df > st.fields[0].docs && df > commonFloor {
			p.dropped = append(p.dropped, t.word)
			continue
		}
		for f, fs := range st.fields {
			df := fr.scored[f][i]
			if df == 0 {
				continue
			}
			idf := math.Log(1 + (float64(fs.docs)-float64(df)+0.5)/(float64(df)+0.5))
			w := idf * (bm25K1 + 1)
			p.clauses = append(p.clauses, clause{term: i, field: f, w: w, k: bm25K1 * (1 - bm25B), kl: bm25K1 * bm25B / fs.avgdl(), ub: w})
		}
	}
	return p
}

// clauseScore is clause c's BM25 score for a document holding its term tf
// times in a field of dl tokens.
func (p *plan) clauseScore(c int, tf uint64, dl int) float64 {
	cl := &p.clauses[c]
	t := float64(tf)
	return cl.w * t / (t + cl.k + cl.kl*float64(dl))
}

// mult is the qualifiers' factor for a document written by a named author
// (speaker) in a month or year matching dates of the query's date terms.
func (p *plan) mult(speaker bool, dates int) float64 {
	m := 1.0
	if speaker {
		m *= 1 + speakerBoost
	}
	if dates > 0 {
		m *= 1 + dateBoost*float64(dates)/float64(len(p.dates))
	}
	return m
}

// maxMult is the largest factor the qualifiers can give.
func (p *plan) maxMult() float64 {
	return p.mult(len(p.speakers) > 0, len(p.dates))
}

// total sums clause contributions in clause order, so every path gives
// the same float.
func total(contrib []float64) float64 {
	s := 0.0
	for _, v := range contrib {
		s += v
	}
	return s
}

// scoreDoc scores a document from its text.
func (p *plan) scoreDoc(dt docTerms) float64 {
	contrib := make([]float64, len(p.clauses))
	for c, cl := range p.clauses {
		if tf := dt.tf[cl.field][cl.term]; tf > 0 {
			contrib[c] = p.clauseScore(c, tf, dt.len[cl.field])
		}
	}
	s := total(contrib)
	if s == 0 {
		return 0
	}
	speaker := false
	for _, i := range p.speakers {
		speaker = speaker || dt.author[i]
	}
	dates := 0
	for _, i := range p.dates {
		if dt.date[i] {
			dates++
		}
	}
	return s * p.mult(speaker, dates)
}

// candidate is a scored message: conversation number and seq.
type candidate struct {
	num   uint64
	seq   int64
	score float64
}

// better orders candidates: higher score, then older conversation, then
// lower seq. The tie-break makes rankings deterministic whatever the
// index's layout.
func better(a, b candidate) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	if a.num != b.num {
		return a.num < b.num
	}
	return a.seq < b.seq
}

func cmpCandidates(a, b candidate) int {
	switch {
	case better(a, b):
		return -1
	case better(b, a):
		return 1
	}
	return 0
}

// topK keeps the k best candidates offered; the worst is at the root.
type topK struct {
	k  int
	cs []candidate
}

func (h *topK) Len() int           { return len(h.cs) }
func (h *topK) Less(i, j int) bool { return better(h.cs[j], h.cs[i]) }
func (h *topK) Swap(i, j int)      { h.cs[i], h.cs[j] = h.cs[j], h.cs[i] }
func (h *topK) Push(x any)         { h.cs = append(h.cs, x.(candidate)) }
func (h *topK) Pop() any           { c := h.cs[len(h.cs)-1]; h.cs = h.cs[:len(h.cs)-1]; return c }

// threshold is the score a candidate must reach to be considered: the
// k-th best so far (0 until there are k).
func (h *topK) threshold() float64 {
	if len(h.cs) < h.k {
		return 0
	}
	return h.cs[0].score
}

func (h *topK) offer(c candidate) {
	switch {
	case len(h.cs) < h.k:
		heap.Push(h, c)
	case better(c, h.cs[0]):
		h.cs[0] = c
		heap.Fix(h, 0)
	}
}

// sorted returns the candidates best first.
func (h *topK) sorted() []candidate {
	out := slices.Clone(h.cs)
	slices.SortFunc(out, cmpCandidates)
	return out
}

// postings are a plan's posting lists in an index snapshot.
type postings struct {
	clauses  []*posting // with frequencies and lengths
	speakers []*posting // membership only
	dates    []*posting
}

func (p *plan) open(r index.IndexReader) (*postings, error) {
	ps := &postings{}
	for _, cl := range p.clauses {
		q, err := openPosting(r, p.terms[cl.term].term, scoredFields[cl.field], true)
		if err != nil {
			ps.close()
			return nil, err
		}
		ps.clauses = append(ps.clauses, q)
	}
	for _, x := range []struct {
		terms []int
		field string
		dst   *[]*posting
	}{{p.speakers, fieldAuthor, &ps.speakers}, {p.dates, fieldDate, &ps.dates}} {
		for _, i := range x.terms {
			q, err := openPosting(r, p.terms[i].term, x.field, false)
			if err != nil {
				ps.close()
				return nil, err
			}
			*x.dst = append(*x.dst, q)
		}
	}
	return ps, nil
}

func (ps *postings) close() {
	closeAll(ps.clauses)
	closeAll(ps.speakers)
	closeAll(ps.dates)
}

// qualifiers returns the qualifiers' factor for document doc (the
// postings only move forward: docs must come in index order).
func (p *plan) qualifiers(ps *postings, doc []byte) (float64, error) {
	speaker := false
	for _, q := range ps.speakers {
		ok, err := q.at(doc)
		if err != nil {
			return 0, err
		}
		speaker = speaker || ok
	}
	matched := 0
	for _, q := range ps.dates {
		ok, err := q.at(doc)
		if err != nil {
			return 0, err
		}
		if ok {
			matched++
		}
	}
	return p.mult(speaker, matched), nil
}

// indexPass offers the best documents of snapshot r to top: MaxScore over
// the plan's clauses, restricted to the documents of filter (nil: all);
// qualify is asked for documents that need a check the index cannot make
// (a date range boundary) and resolve turns a document into its place.
func (p *plan) indexPass(r index.IndexReader, top *topK, filter *filterSet, needsCheck func(id []byte) bool,
	check func(num uint64, seq int64) (bool, error)) error {
	if len(p.clauses) == 0 {
		return nil
	}
	ps, err := p.open(r)
	if err != nil {
		return err
	}
	defer ps.close()
	posts := ps.clauses

	// order sorts clauses by upper bound; prefix[i] bounds what
	// order[:i] can add. order[ess:] are the essential clauses: only they
	// produce candidates.
	order := make([]int, len(p.clauses))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(p.clauses[a].ub, p.clauses[b].ub) })
	prefix := make([]float64, len(order)+1)
	for i, c := range order {
		prefix[i+1] = prefix[i] + p.clauses[c].ub
	}
	m := p.maxMult()
	ess := 0
	advanceEss := func() {
		for th := top.threshold(); ess < len(order) && m*prefix[ess+1] < th; {
			ess++
		}
	}
	advanceEss()

	contrib := make([]float64, len(p.clauses))
	touched := make([]int, 0, len(p.clauses))
	qualified := len(ps.speakers)+len(ps.dates) > 0
	var doc []byte
	for {
		var d []byte
		for _, c := range order[ess:] {
			if q := posts[c]; !q.done && (d == nil || bytes.Compare(q.cur.ID, d) < 0) {
				d = q.cur.ID
			}
		}
		if d == nil {
			return nil
		}
		doc = append(doc[:0], d...)
		if filter != nil {
			f, err := filter.seek(doc)
			if err != nil || f == nil {
				return err
			}
			if !bytes.Equal(f, doc) {
				for _, c := range order[ess:] {
					if err := posts[c].seek(f); err != nil {
						return err
					}
				}
				continue
			}
		}
		for _, c := range touched {
			contrib[c] = 0
		}
		touched = touched[:0]
		s := 0.0
		for _, c := range order[ess:] {
			q := posts[c]
			if q.done || !bytes.Equal(q.cur.ID, doc) {
				continue
			}
			contrib[c] = p.clauseScore(c, q.cur.Freq, q.length())
			s += contrib[c]
			touched = append(touched, c)
			if err := q.next(); err != nil {
				return err
			}
		}
		th := top.threshold()
		pruned := false
		for i := ess - 1; i >= 0; i-- {
			if m*(s+prefix[i+1]) < th {
				pruned = true
				break
			}
			c := order[i]
			q := posts[c]
			if ok, err := q.at(doc); err != nil {
				return err
			} else if ok {
				contrib[c] = p.clauseScore(c, q.cur.Freq, q.length())
				s += contrib[c]
				touched = append(touched, c)
			}
		}
		if pruned {
			continue
		}
		mult := 1.0
		if qualified {
			var err error
			if mult, err = p.qualifiers(ps, doc); err != nil {
				return err
			}
		}
		// s sums in bound order; the score sums in clause order, as every
		// path does. They differ by rounding at most.
		if s*mult < th*(1-1e-9) {
			continue
		}
		score := total(contrib) * mult
		if score < th {
			continue
		}
		id, err := r.ExternalID(doc)
		if err != nil {
			return err
		}
		num, seq, ok := parseDocID(id)
		if !ok {
			return corrupt("index document id %q", id)
		}
		if needsCheck != nil && needsCheck(doc) {
			if ok, err := check(num, seq); err != nil || !ok {
				if err != nil {
					return err
				}
				continue
			}
		}
		top.offer(candidate{num: num, seq: seq, score: score})
		advanceEss()
	}
}
