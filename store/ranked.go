package store

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	index "github.com/blevesearch/bleve_index_api"
)

// minPool is the least number of best-scored messages a ranked search
// collects before lifting by context (context.go): enough for a hit's
// neighbours and session to be seen even when few hits are asked for.
const minPool = 20

// smallScope is the size below which a search scoped to a conversation
// ranks all its matches, and reads its indexed documents whole when no
// filter applies (scopeDocs).
const smallScope = 128

// docKey identifies a message across conversations.
type docKey struct {
	num uint64
	seq int64
}

// tail is the unindexed part of a conversation as a search starts: the
// messages after what the index snapshot holds, up to head.
type tail struct {
	cs   *convState
	head int64
}

// pendingTails returns the conversations with messages not yet in the
// index, in number order. Their messages at or below the head read here
// are either in an index snapshot opened afterwards or in its tail.
func (ix *indexer) pendingTails() []tail {
	ix.mu.Lock()
	var ts []tail
	for cs := range ix.dirty {
		if h := cs.head.Load(); cs.indexed.Load() < h {
			ts = append(ts, tail{cs, h})
		}
	}
	ix.mu.Unlock()
	slices.SortFunc(ts, func(a, b tail) int { return cmp.Compare(a.cs.num, b.cs.num) })
	return ts
}

// scanned is an unindexed message that matches the query.
type scanned struct {
	num uint64
	rec Record
	dt  docTerms
}

// searchRanked returns the ranked hits: at least Offset+MaxResults+1 of
// them when there are that many, with the query words dropped as common.
func (db *DB) searchRanked(t kvTxn, cs *convState, terms []queryTerm, opts SearchOptions) ([]Hit, []string, error) {
	if pt, ok := t.(*pgTxn); ok {
		return db.searchPG(pt, cs, terms, opts)
	}
	ix := db.ix
	if len(terms) == 0 {
		return []Hit{}, nil, nil // only stop words
	}
	f := filterOf(opts)
	tails := ix.pendingTails()

	ix.idxMu.RLock()
	defer ix.idxMu.RUnlock()
	adv, err := ix.idx.Advanced()
	if err != nil {
		return nil, nil, fmt.Errorf("store: search: %w", err)
	}
	r, err := adv.Reader()
	if err != nil {
		return nil, nil, fmt.Errorf("store: search: %w", err)
	}
	defer r.Close()

	// The statistics are those of the collection searched: the scoped
	// conversation, or everything.
	st, err := readStats(r)
	if err != nil {
		return nil, nil, err
	}
	var scope *scopeIndex
	if cs != nil {
		ci, err := readConv(r, cs.num)
		if err != nil {
			return nil, nil, err
		}
		scope = &scopeIndex{num: cs.num, held: ci.held, alone: ci.stats.docs == st.docs}
		st = ci.stats
		tails = slices.DeleteFunc(tails, func(tl tail) bool { return tl.cs != cs })
	}
	counted := scope
	if scope != nil && scope.alone {
		counted = nil // its frequencies are the index's
	}
	var small *scopeDocs
	var fr frequencies
	if counted != nil && st.docs < smallScope && f.none() {
		small, fr, err = readScopeDocs(r, scope.num, terms)
	} else {
		fr, err = indexFrequencies(r, terms, counted)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("store: search: %w", err)
	}
	found, err := ix.scanTails(t, r, tails, terms, f, &st, &fr)
	if err != nil {
		return nil, nil, err
	}

	p := newPlan(terms, st, fr)
	top := &topK{k: max(minPool, opts.Offset+opts.MaxResults+1)}
	if scope != nil && st.docs < smallScope {
		// Every match of a small conversation goes in the pool: its
		// neighbours' scores are then known, not analyzed from their text.
		top.k = max(top.k, int(st.docs)+1)
	}
	records := map[docKey]Record{}
	for _, s := range found {
		if score := p.scoreDoc(s.dt); score > 0 {
			k := docKey{s.num, s.rec.Seq}
			records[k] = s.rec
			top.offer(candidate{num: k.num, seq: k.seq, score: score})
		}
	}
	if small != nil {
		err = small.offer(r, p, top)
	} else {
		err = db.searchIndex(t, r, scope, f, p, top, records)
	}
	if err != nil {
		return nil, nil, err
	}
	pool := top.sorted()
	hits, err := db.poolHits(t, p, pool, len(pool) == top.k, opts, f, records)
	return hits, p.dropped, err
}

// poolHits returns the hits of pool (the best-scored messages, best
// first; full when more matched): in its order with NoContext, else
// ranked with the lifts of their context (rankWithContext).
func (db *DB) poolHits(t kvTxn, p *plan, pool []candidate, full bool, opts SearchOptions, f filter, records map[docKey]Record) ([]Hit, error) {
	if opts.NoContext {
		return db.hitsOf(t, pool, records)
	}
	return db.rankWithContext(t, p, pool, full, opts.Offset+opts.MaxResults+1, f, records)
}

// scanTails reads the unindexed messages of tails (those after what
// snapshot r holds), counts them in the statistics st and frequencies fr
// as they will count once indexed, and returns those that match the query
// and pass f.
func (ix *indexer) scanTails(t kvTxn, r index.IndexReader, tails []tail, terms []queryTerm, f filter, st *indexStats, fr *frequencies) ([]scanned, error) {
	var found []scanned
	for _, tl := range tails {
		ci, err := readConv(r, tl.cs.num)
		if err != nil {
			return nil, err
		}
		err = readRange(t, tl.cs, ci.held+1, tl.head, false, func(rec Record) bool {
			dt := ix.an.analyzeDoc(textOf(rec), terms)
			st.count(dt.len)
			fr.count(dt)
			if dt.matches() && f.match(rec) {
				found = append(found, scanned{tl.cs.num, rec, dt})
			}
			return true
		})
		if err != nil {
			return nil, err
		}
	}
	return found, nil
}

// scopeIndex is what an index snapshot holds of the conversation a search
// is scoped to.
type scopeIndex struct {
	num   uint64
	held  int64 // its messages 1..held are indexed
	alone bool  // no other conversation is indexed: no need to scope
}

// scopeDocs are the indexed documents of a small conversation, each with
// what it holds of the query's terms. They are read in one walk of the
// conversation's posting list and one of each term's in each field, which
// give both the frequencies within the conversation and every score: a
// larger scope counts each term in each field (countIn), then ranks in a
// second pass (indexPass), each a leapfrog with the conversation's list.
type scopeDocs struct {
	ids []index.IndexInternalID
	dts []docTerms
}

// readScopeDocs returns the indexed documents of conversation num in
// snapshot r, and the frequencies of terms among them.
func readScopeDocs(r index.IndexReader, num uint64, terms []queryTerm) (*scopeDocs, frequencies, error) {
	fr := newFrequencies(len(terms))
	c, err := openPosting(r, convTerm(num), fieldConv, false)
	if err != nil {
		return nil, fr, err
	}
	sd := &scopeDocs{}
	for !c.done && err == nil {
		sd.ids = append(sd.ids, slices.Clone(c.cur.ID))
		err = c.next()
	}
	c.r.Close()
	if err != nil {
		return nil, fr, err
	}
	n, nt := len(sd.ids), len(terms)
	tfs, flags := make([]uint64, n*nt*len(scoredFields)), make([]bool, n*nt*2)
	sd.dts = make([]docTerms, n)
	for j := range sd.dts {
		dt := &sd.dts[j]
		for f := range dt.tf {
			dt.tf[f], tfs = tfs[:nt:nt], tfs[nt:]
		}
		dt.author, dt.date, flags = flags[:nt:nt], flags[nt:2*nt:2*nt], flags[2*nt:]
	}
	// walk calls hit for each document of the conversation with term in
	// field, the posting on it.
	walk := func(term, field string, withFreq bool, hit func(dt *docTerms, p *posting)) error {
		p, err := openPosting(r, term, field, withFreq)
		if err != nil {
			return err
		}
		defer p.r.Close()
		for j := 0; j < n && !p.done; j++ {
			if ok, err := p.at(sd.ids[j]); err != nil {
				return err
			} else if ok {
				hit(&sd.dts[j], p)
			}
		}
		return nil
	}
	for i, t := range terms {
		for f, field := range scoredFields {
			if err := walk(t.term, field, true, func(dt *docTerms, p *posting) {
				dt.tf[f][i], dt.len[f] = p.cur.Freq, p.length()
				fr.scored[f][i]++
			}); err != nil {
				return nil, fr, err
			}
		}
		// As in indexFrequencies, a qualifier's frequency stops at 1.
		if err := walk(t.term, fieldAuthor, false, func(dt *docTerms, _ *posting) { dt.author[i], fr.author[i] = true, 1 }); err != nil {
			return nil, fr, err
		}
		if err := walk(t.term, fieldDate, false, func(dt *docTerms, _ *posting) { dt.date[i], fr.date[i] = true, 1 }); err != nil {
			return nil, fr, err
		}
	}
	return sd, fr, nil
}

// offer offers every document that p scores above zero to top.
func (sd *scopeDocs) offer(r index.IndexReader, p *plan, top *topK) error {
	for j, dt := range sd.dts {
		score := p.scoreDoc(dt)
		if score == 0 {
			continue
		}
		id, err := r.ExternalID(sd.ids[j])
		if err != nil {
			return err
		}
		num, seq, ok := parseDocID(id)
		if !ok {
			return corrupt("index document id %q", id)
		}
		top.offer(candidate{num: num, seq: seq, score: score})
	}
	return nil
}

// searchIndex offers the best indexed documents that pass the filters
// (and the scope, unless nil) to top.
func (db *DB) searchIndex(t kvTxn, r index.IndexReader, scope *scopeIndex, f filter, p *plan, top *topK, records map[docKey]Record) error {
	fs := &filterSet{}
	defer fs.close()
	add := func(field string, terms ...string) error {
		var u union
		for _, term := range terms {
			q, err := openPosting(r, term, field, false)
			if err != nil {
				closeAll(u)
				return err
			}
			u = append(u, q)
		}
		fs.groups = append(fs.groups, u)
		return nil
	}
	if scope != nil {
		if scope.held == 0 {
			return nil // none of its messages is indexed yet
		}
		if !scope.alone {
			if err := add(fieldConv, convTerm(scope.num)); err != nil {
				return err
			}
		}
	}
	if f.roles != nil {
		names := make([]string, len(f.roles))
		for i, role := range f.roles {
			names[i] = role.String()
		}
		if err := add(fieldRole, names...); err != nil {
			return err
		}
	}
	if f.session != "" {
		if err := add(fieldSession, f.session); err != nil {
			return err
		}
	}
	var needsCheck func([]byte) bool
	if !f.since.IsZero() || !f.until.IsZero() {
		months, edges, err := monthsOf(r, f.since, f.until)
		if err != nil {
			return err
		}
		if err := add(fieldMonth, months...); err != nil {
			return err
		}
		u := fs.groups[len(fs.groups)-1]
		// Only a message of a month the range cuts needs its time checked.
		needsCheck = func(id []byte) bool {
			i := u.member(id)
			return i >= 0 && edges[i]
		}
	}
	check := func(num uint64, seq int64) (bool, error) {
		c, err := db.convByNum(num)
		if err != nil {
			return false, err
		}
		rec, err := readRecord(t, c, seq)
		if err != nil {
			return false, err
		}
		records[docKey{num, seq}] = rec
		return f.inTime(rec.When()), nil
	}
	var filter *filterSet
	if len(fs.groups) > 0 {
		filter = fs
	}
	return p.indexPass(r, top, filter, needsCheck, check)
}

// monthsOf returns the month terms of snapshot r within [since, until)
// (zero bounds are open) and, for each, whether the range cuts it.
func monthsOf(r index.IndexReader, since, until time.Time) ([]string, []bool, error) {
	lo, hi := "0000-00", "9999-99"
	if !since.IsZero() {
		lo = monthTerm(since)
	}
	if !until.IsZero() {
		hi = monthTerm(until.Add(-time.Nanosecond))
	}
	d, err := r.FieldDictRange(fieldMonth, []byte(lo), []byte(hi))
	if err != nil {
		return nil, nil, err
	}
	defer d.Close()
	var months []string
	var edges []bool
	for {
		e, err := d.Next()
		if err != nil {
			return nil, nil, err
		}
		if e == nil {
			return months, edges, nil
		}
		months = append(months, e.Term)
		edges = append(edges, !since.IsZero() && e.Term == lo || !until.IsZero() && e.Term == hi)
	}
}

// hitsOf returns the candidates as hits, in order, reading their records.
func (db *DB) hitsOf(t kvTxn, cands []candidate, records map[docKey]Record) ([]Hit, error) {
	hits := make([]Hit, len(cands))
	for i, c := range cands {
		rec, err := db.recordOf(t, docKey{c.num, c.seq}, records)
		if err != nil {
			return nil, err
		}
		hits[i] = Hit{Record: rec, Score: c.score}
	}
	return hits, nil
}

// recordOf returns message k, from records when it was read already,
// without its token counts (withTokenCounts adds them to the hits
// returned).
func (db *DB) recordOf(t kvTxn, k docKey, records map[docKey]Record) (Record, error) {
	if rec, ok := records[k]; ok {
		return rec, nil
	}
	c, err := db.convByNum(k.num)
	if err != nil {
		return Record{}, err
	}
	rec, found, err := getMessage(t, c, k.seq)
	if err == nil && !found {
		err = notFound("message %d of conversation %q", k.seq, c.id)
	}
	if err == nil {
		records[k] = rec
	}
	return rec, err
}

// withTokenCounts reads the token counts of hits.
func (db *DB) withTokenCounts(t kvTxn, hits []Hit) error {
	for i := range hits {
		cs, err := db.conv(hits[i].Conversation)
		if err != nil {
			return err
		}
		if hits[i].TokenCounts, err = readTokenCounts(t, cs, hits[i].Seq); err != nil {
			return err
		}
	}
	return nil
}
