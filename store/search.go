package store

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"
)

// SearchOptions are the options of [DB.Search]. The zero value is a ranked
// search returning the 32 best hits.
type SearchOptions struct {
	// MaxResults bounds the hits returned. Zero means 32.
	MaxResults int
	// Offset skips that many hits (paging: pass the next offset Search
	// returned).
	Offset int
	// Exact selects substring matching instead of BM25 ranking: hits are the
	// messages whose content contains the query, in conversation then
	// sequence order, with Score 0. NB: exact mode scans the conversation
	// (or every conversation) until it has enough hits: O(messages), as
	// upstream; ranked search is indexed.
	Exact bool
	// CaseSensitive makes exact mode case-sensitive. Ranked search always
	// folds case (the analyzer lower-cases).
	CaseSensitive bool
}

// Hit is one search result: the matching record and its BM25 score (0 in
// exact mode).
type Hit struct {
	Record
	Score float64
}

// DefaultMaxResults is the number of hits Search returns when
// SearchOptions.MaxResults is zero (the upstream default).
const DefaultMaxResults = 32

// Search finds the messages of conversation conv ("" means every
// conversation) whose content matches q. Only Content.PlainText() is
// searched — never a "[seq] role:" rendering, names or tool calls — so
// "user" does not match every user message.
//
// Ranked mode (the default) analyzes q with the standard analyzer (lower
// case, English stop words dropped) and returns the messages containing any
// of its terms, best BM25 score first (ties by conversation, then seq).
// Messages appended but not yet indexed are scanned and scored with the
// index's statistics (their length normalization is approximate), so a
// search always sees every append that returned before it started
// (read-your-writes).
//
// It returns the hits and the offset of the next page (0 when there are no
// more hits), an error wrapping [ErrNotFound] for an unknown conversation
// and [ErrInvalid] for an empty query or negative bounds.
func (db *DB) Search(conv, q string, opts SearchOptions) ([]Hit, int, error) {
	if strings.TrimSpace(q) == "" {
		return nil, 0, invalid("query", "must not be empty")
	}
	if opts.MaxResults < 0 {
		return nil, 0, invalid("max_results", "must be >= 0 (got %d)", opts.MaxResults)
	}
	if opts.Offset < 0 {
		return nil, 0, invalid("offset", "must be >= 0 (got %d)", opts.Offset)
	}
	if opts.MaxResults == 0 {
		opts.MaxResults = DefaultMaxResults
	}
	if err := db.enter(); err != nil {
		return nil, 0, err
	}
	defer db.leave()
	var cs *convState
	if conv != "" {
		var err error
		if cs, err = db.conv(conv); err != nil {
			return nil, 0, err
		}
	}
	if opts.Exact {
		return db.searchExact(cs, q, opts)
	}
	return db.searchRanked(cs, q, opts)
}

func (db *DB) searchExact(cs *convState, q string, opts SearchOptions) ([]Hit, int, error) {
	if !opts.CaseSensitive {
		q = strings.ToLower(q)
	}
	want := opts.Offset + opts.MaxResults + 1
	var hits []Hit
	match := func(r Record) bool {
		text := r.Message.Content.PlainText()
		if !opts.CaseSensitive {
			text = strings.ToLower(text)
		}
		if strings.Contains(text, q) {
			hits = append(hits, Hit{Record: r})
		}
		return len(hits) < want
	}
	err := db.kv.View(func(t kvTxn) error {
		if cs != nil {
			return readRange(t, cs, 1, cs.head.Load(), false, match)
		}
		// Every conversation, in number order: walk the head keys.
		lo := []byte{kindHead}
		var nums []uint64
		if err := t.Iterate(lo, prefixEnd(lo), false, func(k, _ []byte) (bool, error) {
			num, ok := parseNumKey(k)
			if !ok {
				return false, corrupt("head key %x", k)
			}
			nums = append(nums, num)
			return true, nil
		}); err != nil {
			return err
		}
		for _, num := range nums {
			c, err := db.convByNum(num)
			if err != nil {
				return err
			}
			if err := readRange(t, c, 1, c.head.Load(), false, match); err != nil {
				return err
			}
			if len(hits) >= want {
				break
			}
		}
		return nil
	})
	if err != nil {
		return nil, 0, wrapRead(err)
	}
	return page(hits, opts)
}

func page(hits []Hit, opts SearchOptions) ([]Hit, int, error) {
	if opts.Offset >= len(hits) {
		return []Hit{}, 0, nil
	}
	end := min(len(hits), opts.Offset+opts.MaxResults)
	next := 0
	if end < len(hits) {
		next = end
	}
	return hits[opts.Offset:end], next, nil
}

// analyze returns the distinct index terms of s, in first-seen order.
func (ix *indexer) analyze(s string) []string {
	var out []string
	for _, tok := range ix.an.Analyze([]byte(s)) {
		t := string(tok.Term)
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

type scored struct {
	cs    *convState
	seq   int64
	score float64
}

// tail is the unindexed part (mark, head] of a conversation as seen when a
// search starts.
type tail struct {
	cs         *convState
	mark, head int64
}

func (db *DB) searchRanked(cs *convState, q string, opts SearchOptions) ([]Hit, int, error) {
	ix := db.ix
	terms := ix.analyze(q)
	if len(terms) == 0 {
		return []Hit{}, 0, nil // only stop words
	}
	// Snapshot the unindexed tails before querying the index: every message
	// at or below a mark is in the index the query sees.
	var tails []tail
	if cs != nil {
		if m, h := cs.indexed.Load(), cs.head.Load(); m < h {
			tails = append(tails, tail{cs, m, h})
		}
	} else {
		ix.mu.Lock()
		for c := range ix.dirty {
			if m, h := c.indexed.Load(), c.head.Load(); m < h {
				tails = append(tails, tail{c, m, h})
			}
		}
		ix.mu.Unlock()
	}
	marks := make(map[*convState]int64, len(tails))
	pending := int64(0)
	for _, t := range tails {
		marks[t.cs] = t.mark
		pending += t.head - t.mark
	}

	want := opts.Offset + opts.MaxResults + 1
	disj := make([]query.Query, len(terms))
	for i, t := range terms {
		tq := bleve.NewTermQuery(t)
		tq.SetField(fieldBody)
		disj[i] = tq
	}
	var bq query.Query = bleve.NewDisjunctionQuery(disj...)
	if cs != nil {
		// Scope with a conjunction, not a filter: the conjunction searcher
		// leapfrogs over the conversation's short posting list instead of
		// visiting every match in the index. Boost 0 keeps the scope term
		// out of the score and the query norm, so scores equal the
		// unscoped ones.
		scope := bleve.NewTermQuery(convTerm(cs.num))
		scope.SetField(fieldConv)
		scope.SetBoost(0)
		bq = bleve.NewConjunctionQuery(bq, scope)
	}
	// Index hits above a tail's mark are dropped (the tail scan scores
	// them), so ask for that many more.
	size := want + int(min(pending, 10000))
	req := bleve.NewSearchRequestOptions(bq, size, 0, false)

	ix.idxMu.RLock()
	res, err := ix.idx.Search(req)
	var st termStats
	if err == nil && len(tails) > 0 {
		st, err = ix.termStats(terms)
	}
	ix.idxMu.RUnlock()
	if err != nil {
		return nil, 0, fmt.Errorf("store: search: %w", err)
	}

	all := make([]scored, 0, len(res.Hits))
	total := int(res.Total)
	for _, h := range res.Hits {
		num, seq, ok := parseDocID(h.ID)
		if !ok {
			return nil, 0, corrupt("index document id %q", h.ID)
		}
		c, err := db.convByNum(num)
		if err != nil {
			return nil, 0, err
		}
		if m, ok := marks[c]; ok && seq > m {
			total--
			continue
		}
		all = append(all, scored{c, seq, h.Score})
	}
	if len(tails) > 0 {
		n, err := db.scoreTails(tails, terms, st, &all)
		if err != nil {
			return nil, 0, err
		}
		total += n
	}
	slices.SortFunc(all, func(a, b scored) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		if c := cmpU64(a.cs.num, b.cs.num); c != 0 {
			return c
		}
		return cmpU64(uint64(a.seq), uint64(b.seq))
	})
	if opts.Offset >= len(all) {
		return []Hit{}, 0, nil
	}
	all = all[opts.Offset:min(len(all), opts.Offset+opts.MaxResults)]
	hits := make([]Hit, 0, len(all))
	err = db.kv.View(func(t kvTxn) error {
		for _, s := range all {
			r, err := readRecord(t, s.cs, s.seq)
			if err != nil {
				return err
			}
			hits = append(hits, Hit{Record: r, Score: s.score})
		}
		return nil
	})
	if err != nil {
		return nil, 0, wrapRead(err)
	}
	next := 0
	if end := opts.Offset + len(hits); total > end {
		next = end
	}
	return hits, next, nil
}

type termStats struct {
	docs uint64
	df   []uint64
}

func (ix *indexer) termStats(terms []string) (termStats, error) {
	adv, err := ix.idx.Advanced()
	if err != nil {
		return termStats{}, err
	}
	r, err := adv.Reader()
	if err != nil {
		return termStats{}, err
	}
	defer r.Close()
	st := termStats{df: make([]uint64, len(terms))}
	if st.docs, err = r.DocCount(); err != nil {
		return termStats{}, err
	}
	for i, t := range terms {
		tfr, err := r.TermFieldReader(context.Background(), []byte(t), fieldBody, false, false, false)
		if err != nil {
			return termStats{}, err
		}
		st.df[i] = tfr.Count()
		tfr.Close()
	}
	return st, nil
}

// scoreTails scans the tails and appends the matching messages to all,
// scored like bleve's BM25 disjunction (idf from the index plus the tails,
// sqrt term frequency, k1 = 1.2, b = 0.75, query norm and coordination);
// the length norm uses the tails' own mean length. It returns the number
// of matches.
func (db *DB) scoreTails(tails []tail, terms []string, st termStats, all *[]scored) (int, error) {
	type doc struct {
		cs  *convState
		seq int64
		tf  []int
		len int
	}
	var docs []doc
	df := make([]uint64, len(terms))
	totalLen, scanned := 0, 0
	err := db.kv.View(func(t kvTxn) error {
		for _, tl := range tails {
			err := readRange(t, tl.cs, tl.mark+1, tl.head, false, func(r Record) bool {
				toks := db.ix.an.Analyze([]byte(r.Message.Content.PlainText()))
				scanned++
				totalLen += len(toks)
				d := doc{cs: tl.cs, seq: r.Seq, len: len(toks)}
				for _, tok := range toks {
					for i, qt := range terms {
						if string(tok.Term) == qt {
							if d.tf == nil {
								d.tf = make([]int, len(terms))
							}
							if d.tf[i] == 0 {
								df[i]++
							}
							d.tf[i]++
						}
					}
				}
				if d.tf != nil {
					docs = append(docs, d)
				}
				return true
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, wrapRead(err)
	}
	if len(docs) == 0 {
		return 0, nil
	}
	const k1, b = 1.2, 0.75
	n := float64(st.docs) + float64(scanned)
	avg := math.Max(1, float64(totalLen)/float64(scanned))
	idf := make([]float64, len(terms))
	sumSq := 0.0
	for i := range terms {
		d := float64(st.df[i] + df[i])
		idf[i] = math.Log(1 + (n-d+0.5)/(d+0.5))
		sumSq += idf[i] * idf[i]
	}
	qnorm := 1 / math.Sqrt(sumSq)
	for _, d := range docs {
		s, matched := 0.0, 0
		for i := range terms {
			if d.tf[i] == 0 {
				continue
			}
			matched++
			tf := math.Sqrt(float64(d.tf[i]))
			s += idf[i] * (tf * k1) / (tf + k1*(1-b+b*float64(d.len)/avg)) * idf[i] * qnorm
		}
		if len(terms) > 1 {
			s *= float64(matched) / float64(len(terms))
		}
		*all = append(*all, scored{d.cs, d.seq, s})
	}
	return len(docs), nil
}
