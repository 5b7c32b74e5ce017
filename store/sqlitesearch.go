package store

import (
	"cmp"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
)

// Ranked search on SQLite keeps its own postings in the store's file, in
// segments, and ranks with rank.go's plan, so it returns badger's hits,
// order and scores (TestRanksAsBadger).
//
// A B-tree keyed by term takes a page write for every distinct term of
// every batch — with a conversation's vocabulary spread over thousands of
// pages, megabytes of WAL a second for a stream of appends. So the index is
// written as segments instead, the way bleve's scorch and Lucene write
// theirs: each indexing step writes one segment keyed (segment, term,
// conversation), appended at the end of the table in a few pages, and
// every segment is searched. The newest segments are merged when F of one
// size tier follow each other (tier = ⌊log₈ messages⌋), so a posting is
// rewritten a few times at most; segments of tier 4 (4,096 messages) and
// more are left alone, so no merge holds the write lock for long (eight
// segments of 2,000 messages: about 300 ms), and a store holds about one
// segment per 16,000 messages beyond the last few.
//
// A segment's row for (term, conversation) holds the term's document
// frequency in each field and the postings: per message, in sequence
// order, the sequence (a delta), which fields hold the term, and for the
// scored fields its frequency and the field's length in tokens.
//
// Appends do not write postings: they mark their conversation pending
// (rlmpl_pending, in the append's transaction) and a background indexer in
// the appending process indexes it after Options.IndexDelay, in batches of
// Options.IndexBatch, in a transaction that writes the segment, the
// conversation's statistics and watermark (rlmpl_stats.indexed) together.
// Any process's indexer takes what is pending (one left by a process that
// died is indexed by the next to open the store or append to it). A search
// reads one snapshot: the segments, the statistics and watermarks, and the
// messages after each watermark, which it scans and scores with the same
// formula and statistics (read-your-writes, as on badger).

const (
	// segFan is F: how many segments of one tier are merged into one.
	segFan = 8
	// segTierCap is the tier from which segments are no longer merged.
	segTierCap = 4
)

// Posting flags: which fields of the message hold the term.
const (
	inBody = 1 << iota
	inAttach
	inAuthor
	inDate
)

// sqliteSearch is the searcher of an SQLite store.
type sqliteSearch struct {
	db    *DB
	kv    *sqliteKV
	batch int
	delay time.Duration

	// work is held by each indexing step (tests hold it to keep messages
	// unindexed).
	work sync.Mutex

	mu  sync.Mutex // protects err
	err error      // the last indexing error (cleared by a good step)

	kick chan struct{}
	stop chan struct{}
	done chan struct{}

	// The statements of a search, prepared once; freq and post by
	// scope: every conversation [0], or one [1].
	segs, statsOne, statsAll, pending *sql.Stmt
	freq, post                        [2]*sql.Stmt
}

var _ searcher = (*sqliteSearch)(nil)

// openSQLiteSearch checks the index's language against this store's (the
// first process to open a store sets it: processes sharing an index must
// analyze alike) and starts the indexer, which first indexes what is
// pending.
func openSQLiteSearch(db *DB, kv *sqliteKV) (*sqliteSearch, error) {
	err := kv.write(func(tx *sql.Tx) error {
		var lang string
		err := tx.QueryRowContext(kv.ctx, `SELECT value FROM rlmpl_meta WHERE key = 'language'`).Scan(&lang)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			_, err = tx.ExecContext(kv.ctx, `INSERT INTO rlmpl_meta (key, value) VALUES ('language', ?)`, db.opts.Language)
			return err
		case err != nil:
			return err
		case lang != db.opts.Language:
			return invalid("Options.Language", "this SQLite store's search index is built for language %q (got %q): every process sharing it must use that one", lang, db.opts.Language)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	s := &sqliteSearch{db: db, kv: kv, batch: db.opts.IndexBatch, delay: db.opts.IndexDelay,
		kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	err = prepareAll(kv.ctx, kv.db, []prepared{
		{&s.segs, `SELECT seg FROM rlmpl_seg ORDER BY seg`},
		{&s.statsOne, `SELECT docs, body_docs, body_tokens, attach_docs, attach_tokens, indexed FROM rlmpl_stats WHERE conv = ?`},
		{&s.statsAll, `SELECT coalesce(sum(docs), 0), coalesce(sum(body_docs), 0), coalesce(sum(body_tokens), 0),
			coalesce(sum(attach_docs), 0), coalesce(sum(attach_tokens), 0) FROM rlmpl_stats`},
		{&s.pending, `SELECT p.conv, coalesce(s.indexed, 0) FROM rlmpl_pending p LEFT JOIN rlmpl_stats s ON s.conv = p.conv ORDER BY p.conv`},
		{&s.freq[0], `SELECT term, sum(body), sum(attach), sum(author), sum(date) FROM rlmpl_post` + postWhere(false) + ` GROUP BY term`},
		{&s.freq[1], `SELECT term, sum(body), sum(attach), sum(author), sum(date) FROM rlmpl_post` + postWhere(true) + ` GROUP BY term`},
		{&s.post[0], `SELECT term, conv, data FROM rlmpl_post` + postWhere(false) + ` ORDER BY term, conv, seg`},
		{&s.post[1], `SELECT term, conv, data FROM rlmpl_post` + postWhere(true) + ` ORDER BY term, conv, seg`},
	})
	if err != nil {
		return nil, fmt.Errorf("store: search: %w", err)
	}
	go s.run()
	s.poke()
	return s, nil
}

// add marks conversation num pending in the transaction writing r.
func (s *sqliteSearch) add(t kvTxn, num uint64, _ Record) error {
	st := t.(*sqliteTxn)
	if st.pending[num] {
		return nil
	}
	if _, err := st.tx.ExecContext(s.kv.ctx, `INSERT OR IGNORE INTO rlmpl_pending (conv) VALUES (?)`, int64(num)); err != nil {
		return err
	}
	if st.pending == nil {
		st.pending = map[uint64]bool{}
	}
	st.pending[num] = true
	return nil
}

func (s *sqliteSearch) appended(*convState) { s.poke() }

func (s *sqliteSearch) wrote(int) {}

func (s *sqliteSearch) poke() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

func (s *sqliteSearch) run() {
	defer close(s.done)
	indexLoop(s.kick, s.stop, s.delay, s.batch, s.step, func(err error) {
		s.mu.Lock()
		s.err = err
		s.mu.Unlock()
	}, s.db.opts.Logger)
}

func (s *sqliteSearch) close() error {
	close(s.stop)
	<-s.done
	return nil
}

// postingDoc is one message's entry in a term's postings.
type postingDoc struct {
	conv  uint64
	seq   int64
	flags byte
	tf    [len(scoredFields)]uint32
	len   [len(scoredFields)]uint32
}

// segRow is what one segment holds of a term in one conversation.
type segRow struct {
	df   [4]int64 // documents with the term in body, attachments, author, date
	docs []postingDoc
}

func (r *segRow) add(d postingDoc) {
	r.docs = append(r.docs, d)
	for f := range r.df {
		if d.flags&(1<<f) != 0 {
			r.df[f]++
		}
	}
}

// encode writes the postings: per document the seq delta, the flags, and
// for each scored field holding the term its frequency and length.
func (r *segRow) encode() []byte {
	var b []byte
	prev := int64(0)
	for _, d := range r.docs {
		b = binary.AppendUvarint(b, uint64(d.seq-prev))
		b = append(b, d.flags)
		for f := range d.tf {
			if d.flags&(1<<f) != 0 {
				b = binary.AppendUvarint(b, uint64(d.tf[f]))
				b = binary.AppendUvarint(b, uint64(d.len[f]))
			}
		}
		prev = d.seq
	}
	return b
}

// decodePostings appends the postings of conversation conv in b to out.
func decodePostings(out []postingDoc, conv uint64, b []byte) ([]postingDoc, error) {
	prev := int64(0)
	for len(b) > 0 {
		delta, n := binary.Uvarint(b)
		if n <= 0 || len(b) < n+1 {
			return out, corrupt("postings of conversation %d", conv)
		}
		d := postingDoc{conv: conv, seq: prev + int64(delta), flags: b[n]}
		b = b[n+1:]
		for f := range d.tf {
			if d.flags&(1<<f) == 0 {
				continue
			}
			tf, n1 := binary.Uvarint(b)
			if n1 <= 0 {
				return out, corrupt("postings of conversation %d", conv)
			}
			l, n2 := binary.Uvarint(b[n1:])
			if n2 <= 0 {
				return out, corrupt("postings of conversation %d", conv)
			}
			d.tf[f], d.len[f] = uint32(tf), uint32(l)
			b = b[n1+n2:]
		}
		out = append(out, d)
		prev = d.seq
	}
	return out, nil
}

// postingKey names a segment row.
type postingKey struct {
	term string
	conv uint64
}

// docPostings adds message r of conversation num to rows, and returns its
// scored fields' lengths.
func (a textAnalyzer) docPostings(rows map[postingKey]*segRow, num uint64, r Record) [len(scoredFields)]int {
	d := textOf(r)
	docs := map[string]*postingDoc{}
	entry := func(term string) *postingDoc {
		e := docs[term]
		if e == nil {
			e = &postingDoc{conv: num, seq: r.Seq}
			docs[term] = e
		}
		return e
	}
	var lens [len(scoredFields)]int
	for f, text := range [...]string{d.body, d.attach} {
		toks := a.terms(text)
		lens[f] = len(toks)
		for _, tok := range toks {
			e := entry(tok)
			e.flags |= 1 << f
			e.tf[f]++
		}
	}
	for f, text := range [...]string{2: d.author, 3: d.date} {
		for _, tok := range a.terms(text) {
			entry(tok).flags |= 1 << f
		}
	}
	for term, e := range docs {
		for f := range lens {
			if e.flags&(1<<f) != 0 {
				e.len[f] = uint32(lens[f])
			}
		}
		k := postingKey{term, num}
		row := rows[k]
		if row == nil {
			row = &segRow{}
			rows[k] = row
		}
		row.add(*e)
	}
	return lens
}

// convIndexRow is rlmpl_stats' row of a conversation: its indexed
// messages' statistics and the watermark.
type convIndexRow struct {
	stats   indexStats
	indexed int64
}

func (s *sqliteSearch) convIndexRow(tx *sql.Tx, num uint64) (convIndexRow, error) {
	var r convIndexRow
	var v [5]int64
	err := tx.StmtContext(s.kv.ctx, s.statsOne).QueryRowContext(s.kv.ctx, int64(num)).Scan(&v[0], &v[1], &v[2], &v[3], &v[4], &r.indexed)
	if errors.Is(err, sql.ErrNoRows) {
		return r, nil
	}
	r.stats = statsOf(v)
	return r, err
}

func statsOf(v [5]int64) indexStats {
	return indexStats{docs: uint64(v[0]), fields: [len(scoredFields)]fieldStats{
		{docs: uint64(v[1]), tokens: uint64(v[2])}, {docs: uint64(v[3]), tokens: uint64(v[4])}}}
}

// step indexes up to one batch of pending messages in one write
// transaction, as one segment, and returns how many.
func (s *sqliteSearch) step() (int, error) {
	s.work.Lock()
	defer s.work.Unlock()
	n := 0
	err := s.kv.write(func(tx *sql.Tx) error {
		n = 0
		t := &sqliteTxn{kv: s.kv, tx: tx}
		var nums []uint64
		rows, err := tx.QueryContext(s.kv.ctx, `SELECT conv FROM rlmpl_pending ORDER BY conv`)
		if err != nil {
			return err
		}
		for rows.Next() {
			var num int64
			if err := rows.Scan(&num); err != nil {
				rows.Close()
				return err
			}
			nums = append(nums, uint64(num))
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		postings := map[postingKey]*segRow{}
		for _, num := range nums {
			if n >= s.batch {
				break
			}
			ci, err := s.convIndexRow(tx, num)
			if err != nil {
				return err
			}
			h, err := getHead(t, num)
			if err != nil {
				return err
			}
			if to := min(h.lastSeq, ci.indexed+int64(s.batch-n)); to > ci.indexed {
				cs, err := s.db.convByNum(num)
				if err != nil {
					return err
				}
				err = readRange(t, cs, ci.indexed+1, to, false, func(r Record) bool {
					ci.stats.count(s.db.an.docPostings(postings, num, r))
					ci.indexed = r.Seq
					n++
					return true
				})
				if err != nil {
					return err
				}
				st := ci.stats
				if _, err := tx.ExecContext(s.kv.ctx, `INSERT OR REPLACE INTO rlmpl_stats
					(conv, docs, body_docs, body_tokens, attach_docs, attach_tokens, indexed) VALUES (?, ?, ?, ?, ?, ?, ?)`,
					int64(num), int64(st.docs), int64(st.fields[0].docs), int64(st.fields[0].tokens),
					int64(st.fields[1].docs), int64(st.fields[1].tokens), ci.indexed); err != nil {
					return err
				}
			}
			if ci.indexed >= h.lastSeq {
				if _, err := tx.ExecContext(s.kv.ctx, `DELETE FROM rlmpl_pending WHERE conv = ?`, int64(num)); err != nil {
					return err
				}
			}
		}
		if n == 0 {
			return nil
		}
		if err := s.writeSegment(tx, n, postings); err != nil {
			return err
		}
		return s.merge(tx)
	})
	if err != nil {
		return 0, fmt.Errorf("store: index: %w", err)
	}
	return n, nil
}

// writeSegment writes rows as a new segment of docs messages, after every
// other: rows in key order, appended at the end of the table.
func (s *sqliteSearch) writeSegment(tx *sql.Tx, docs int, rows map[postingKey]*segRow) error {
	var seg int64
	if err := tx.QueryRowContext(s.kv.ctx, `SELECT coalesce(max(seg), 0) + 1 FROM rlmpl_seg`).Scan(&seg); err != nil {
		return err
	}
	return s.insertSegment(tx, seg, docs, rows)
}

func (s *sqliteSearch) insertSegment(tx *sql.Tx, seg int64, docs int, rows map[postingKey]*segRow) error {
	if _, err := tx.ExecContext(s.kv.ctx, `INSERT INTO rlmpl_seg (seg, docs) VALUES (?, ?)`, seg, docs); err != nil {
		return err
	}
	keys := slices.SortedFunc(maps.Keys(rows), func(a, b postingKey) int {
		return cmp.Or(cmp.Compare(a.term, b.term), cmp.Compare(a.conv, b.conv))
	})
	// Rows go in statements of up to insertRows rows: a statement a row
	// costs more than the B-tree appends it makes.
	var full *sql.Stmt
	defer func() {
		if full != nil {
			full.Close()
		}
	}()
	for len(keys) > 0 {
		n := min(len(keys), insertRows)
		args := make([]any, 0, 8*n)
		for _, k := range keys[:n] {
			r := rows[k]
			args = append(args, seg, k.term, int64(k.conv), r.df[0], r.df[1], r.df[2], r.df[3], r.encode())
		}
		var err error
		if n == insertRows {
			if full == nil {
				if full, err = tx.PrepareContext(s.kv.ctx, insertPostings(n)); err != nil {
					return err
				}
			}
			_, err = full.ExecContext(s.kv.ctx, args...)
		} else {
			_, err = tx.ExecContext(s.kv.ctx, insertPostings(n), args...)
		}
		if err != nil {
			return err
		}
		keys = keys[n:]
	}
	return nil
}

// insertRows is how many segment rows one statement inserts.
const insertRows = 128

// insertPostings is the statement inserting n segment rows.
func insertPostings(n int) string {
	var sb strings.Builder
	sb.WriteString(`INSERT INTO rlmpl_post (seg, term, conv, body, attach, author, date, data) VALUES `)
	for i := range n {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(`(?, ?, ?, ?, ?, ?, ?, ?)`)
	}
	return sb.String()
}

// tier is a segment's size class.
func tier(docs int64) int {
	t := 0
	for docs >= segFan {
		docs /= segFan
		t++
	}
	return t
}

// merge merges the newest segments while F of them in a row share the
// tier of the newest (below segTierCap) into one, which takes the place
// (the number) of the oldest of them: segment order stays message order.
func (s *sqliteSearch) merge(tx *sql.Tx) error {
	for {
		rows, err := tx.QueryContext(s.kv.ctx, `SELECT seg, docs FROM rlmpl_seg ORDER BY seg DESC LIMIT ?`, segFan)
		if err != nil {
			return err
		}
		var segs, docs []int64
		for rows.Next() {
			var seg, d int64
			if err := rows.Scan(&seg, &d); err != nil {
				rows.Close()
				return err
			}
			segs, docs = append(segs, seg), append(docs, d)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if len(segs) < segFan || tier(docs[0]) >= segTierCap {
			return nil
		}
		total := int64(0)
		for _, d := range docs {
			if tier(d) != tier(docs[0]) {
				return nil
			}
			total += d
		}
		if err := s.mergeSegments(tx, segs[len(segs)-1], segs[0], total); err != nil {
			return err
		}
	}
}

// mergeSegments replaces segments lo..hi (numbers) by one numbered lo.
func (s *sqliteSearch) mergeSegments(tx *sql.Tx, lo, hi, docs int64) error {
	merged := map[postingKey]*segRow{}
	rows, err := tx.QueryContext(s.kv.ctx, `SELECT term, conv, data FROM rlmpl_post WHERE seg >= ? AND seg <= ? ORDER BY seg`, lo, hi)
	if err != nil {
		return err
	}
	var buf []postingDoc
	for rows.Next() {
		var k postingKey
		var conv int64
		var data []byte
		if err := rows.Scan(&k.term, &conv, &data); err != nil {
			rows.Close()
			return err
		}
		k.conv = uint64(conv)
		if buf, err = decodePostings(buf[:0], k.conv, data); err != nil {
			rows.Close()
			return err
		}
		r := merged[k]
		if r == nil {
			r = &segRow{}
			merged[k] = r
		}
		for _, d := range buf {
			r.add(d)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, q := range []string{`DELETE FROM rlmpl_post WHERE seg >= ? AND seg <= ?`, `DELETE FROM rlmpl_seg WHERE seg >= ? AND seg <= ?`} {
		if _, err := tx.ExecContext(s.kv.ctx, q, lo, hi); err != nil {
			return err
		}
	}
	return s.insertSegment(tx, lo, int(docs), merged)
}

// waitIndexed waits until nothing is pending in the store (this
// process's appends and every other's), kicking the indexer.
func (s *sqliteSearch) waitIndexed(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		var pending int
		if err := s.kv.db.QueryRowContext(s.kv.ctx, `SELECT count(*) FROM rlmpl_pending`).Scan(&pending); err != nil {
			return err
		}
		if pending == 0 {
			return nil
		}
		s.poke()
		if time.Now().After(deadline) {
			s.mu.Lock()
			err := s.err
			s.mu.Unlock()
			return fmt.Errorf("store: index still behind after %v (last error: %v)", timeout, err)
		}
		time.Sleep(time.Millisecond)
	}
}

// rebuild empties the index and marks every conversation pending.
func (s *sqliteSearch) rebuild() error {
	err := s.kv.write(func(tx *sql.Tx) error {
		for _, q := range []string{`DELETE FROM rlmpl_post`, `DELETE FROM rlmpl_seg`, `DELETE FROM rlmpl_stats`} {
			if _, err := tx.ExecContext(s.kv.ctx, q); err != nil {
				return err
			}
		}
		t := &sqliteTxn{kv: s.kv, tx: tx}
		lo := []byte{kindHead}
		return t.Iterate(lo, prefixEnd(lo), false, func(k, _ []byte) (bool, error) {
			num, ok := parseNumKey(k)
			if !ok {
				return false, corrupt("head key %x", k)
			}
			_, err := tx.ExecContext(s.kv.ctx, `INSERT OR IGNORE INTO rlmpl_pending (conv) VALUES (?)`, int64(num))
			return err == nil, err
		})
	})
	if err != nil {
		return fmt.Errorf("store: reindex: %w", err)
	}
	s.poke()
	return nil
}

// jsonList is v as a JSON array, for json_each.
func jsonList(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// search is the ranked search of an SQLite store (searcher): the
// segments' postings and the scan of the messages after each watermark,
// all as of snapshot t.
func (s *sqliteSearch) search(t kvTxn, cs *convState, terms []queryTerm, opts SearchOptions) ([]Hit, []string, error) {
	if len(terms) == 0 {
		return []Hit{}, nil, nil // only stop words
	}
	st := t.(*sqliteTxn)
	db := s.db
	f := filterOf(opts)
	segs, err := s.segments(st.tx)
	if err != nil {
		return nil, nil, fmt.Errorf("store: search: %w", err)
	}
	// The statistics of the scope (one conversation, or all) and the
	// unindexed tails in it.
	var stats indexStats
	type tail struct {
		cs       *convState
		from, to int64
	}
	var tails []tail
	addTail := func(c *convState, indexed int64) error {
		h, err := getHead(t, c.num)
		if err == nil && h.lastSeq > indexed {
			tails = append(tails, tail{c, indexed + 1, h.lastSeq})
		}
		return err
	}
	if cs != nil {
		ci, err := s.convIndexRow(st.tx, cs.num)
		if err == nil {
			stats = ci.stats
			err = addTail(cs, ci.indexed)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("store: search: %w", err)
		}
	} else if err := s.allTails(st, &stats, addTail); err != nil {
		return nil, nil, fmt.Errorf("store: search: %w", err)
	}
	fr, err := s.frequencies(st.tx, segs, cs, terms)
	if err != nil {
		return nil, nil, fmt.Errorf("store: search: %w", err)
	}
	var found []scanned
	for _, tl := range tails {
		err := readRange(t, tl.cs, tl.from, tl.to, false, func(rec Record) bool {
			dt := db.an.analyzeDoc(textOf(rec), terms)
			stats.count(dt.len)
			fr.count(dt)
			if dt.matches() && f.match(rec) {
				found = append(found, scanned{tl.cs.num, rec, dt})
			}
			return true
		})
		if err != nil {
			return nil, nil, fmt.Errorf("store: search: %w", err)
		}
	}

	p := newPlan(terms, stats, fr)
	top := &topK{k: max(minPool, opts.Offset+opts.MaxResults+1)}
	if cs != nil && stats.docs < smallScope {
		top.k = max(top.k, int(stats.docs)+1) // as badger: every match of a small conversation
	}
	records := map[docKey]Record{}
	for _, sc := range found {
		if score := p.scoreDoc(sc.dt); score > 0 {
			k := docKey{sc.num, sc.rec.Seq}
			records[k] = sc.rec
			top.offer(candidate{num: k.num, seq: k.seq, score: score})
		}
	}
	lists, err := s.postings(st.tx, segs, cs, p)
	if err != nil {
		return nil, nil, fmt.Errorf("store: search: %w", err)
	}
	check := func(c candidate) (bool, error) {
		if f.none() {
			return true, nil
		}
		if len(top.cs) == top.k && !better(c, top.cs[0]) {
			return false, nil // it would not enter: no need to read it
		}
		k := docKey{c.num, c.seq}
		conv, err := db.convByNum(c.num)
		if err != nil {
			return false, err
		}
		rec, err := readRecord(t, conv, c.seq)
		if err != nil {
			return false, err
		}
		records[k] = rec
		return f.match(rec), nil
	}
	if err := scorePostings(p, lists, len(terms), top, check); err != nil {
		return nil, nil, fmt.Errorf("store: search: %w", err)
	}
	pool := top.sorted()
	if spans := poolSpans(pool, opts.Window); len(spans) > 0 {
		if err := st.prefetch(spans); err != nil {
			return nil, nil, fmt.Errorf("store: search: %w", err)
		}
	}
	hits, err := db.poolHits(t, p, pool, len(pool) == top.k, opts, f, records)
	return hits, p.dropped, err
}

// segments lists the segments of the snapshot.
func (s *sqliteSearch) segments(tx *sql.Tx) ([]int64, error) {
	rows, err := tx.StmtContext(s.kv.ctx, s.segs).QueryContext(s.kv.ctx)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var segs []int64
	for rows.Next() {
		var seg int64
		if err := rows.Scan(&seg); err != nil {
			return nil, err
		}
		segs = append(segs, seg)
	}
	return segs, rows.Err()
}

// allTails sums every conversation's statistics into stats and calls tail
// for each pending conversation with its watermark.
func (s *sqliteSearch) allTails(st *sqliteTxn, stats *indexStats, tail func(*convState, int64) error) error {
	var v [5]int64
	if err := st.tx.StmtContext(s.kv.ctx, s.statsAll).QueryRowContext(s.kv.ctx).Scan(&v[0], &v[1], &v[2], &v[3], &v[4]); err != nil {
		return err
	}
	*stats = statsOf(v)
	rows, err := st.tx.StmtContext(s.kv.ctx, s.pending).QueryContext(s.kv.ctx)
	if err != nil {
		return err
	}
	type pending struct{ num, indexed int64 }
	var ps []pending
	for rows.Next() {
		var p pending
		if err := rows.Scan(&p.num, &p.indexed); err != nil {
			rows.Close()
			return err
		}
		ps = append(ps, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, p := range ps {
		c, err := s.db.convByNum(uint64(p.num))
		if err != nil {
			return err
		}
		if err := tail(c, p.indexed); err != nil {
			return err
		}
	}
	return nil
}

// postWhere is the condition of the segment rows of the query's terms in
// the snapshot's segments ($1, $2: JSON arrays), in one conversation ($3)
// or all.
func postWhere(scoped bool) string {
	w := ` WHERE seg IN (SELECT value FROM json_each(?)) AND term IN (SELECT value FROM json_each(?))`
	if scoped {
		w += ` AND conv = ?`
	}
	return w
}

// scope is the index of the statements of a search in cs (nil: all).
func scope(cs *convState) int {
	if cs == nil {
		return 0
	}
	return 1
}

func postArgs(segs []int64, terms []string, cs *convState) []any {
	args := []any{jsonList(segs), jsonList(terms)}
	if cs != nil {
		args = append(args, int64(cs.num))
	}
	return args
}

// frequencies reads the document frequencies of terms in the indexed
// messages of the scope.
func (s *sqliteSearch) frequencies(tx *sql.Tx, segs []int64, cs *convState, terms []queryTerm) (frequencies, error) {
	fr := newFrequencies(len(terms))
	names := make([]string, len(terms))
	for i, t := range terms {
		names[i] = t.term
	}
	rows, err := tx.StmtContext(s.kv.ctx, s.freq[scope(cs)]).QueryContext(s.kv.ctx, postArgs(segs, names, cs)...)
	if err != nil {
		return fr, err
	}
	defer rows.Close()
	for rows.Next() {
		var term string
		var n [4]int64
		if err := rows.Scan(&term, &n[0], &n[1], &n[2], &n[3]); err != nil {
			return fr, err
		}
		i := slices.Index(names, term)
		fr.scored[0][i], fr.scored[1][i] = uint64(n[0]), uint64(n[1])
		fr.author[i], fr.date[i] = uint64(n[2]), uint64(n[3])
	}
	return fr, rows.Err()
}

// postings reads the postings of the terms p scores or qualifies by, one
// list per query term (nil for the others), each in (conversation, seq)
// order.
func (s *sqliteSearch) postings(tx *sql.Tx, segs []int64, cs *convState, p *plan) ([][]postingDoc, error) {
	used := make([]bool, len(p.terms))
	for _, c := range p.clauses {
		used[c.term] = true
	}
	var names []string
	for i, t := range p.terms {
		if used[i] || slices.Contains(p.speakers, i) || slices.Contains(p.dates, i) {
			names = append(names, t.term)
		}
	}
	lists := make([][]postingDoc, len(p.terms))
	if len(names) == 0 || len(segs) == 0 {
		return lists, nil
	}
	rows, err := tx.StmtContext(s.kv.ctx, s.post[scope(cs)]).QueryContext(s.kv.ctx, postArgs(segs, names, cs)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var term string
		var conv int64
		var data sql.RawBytes
		if err := rows.Scan(&term, &conv, &data); err != nil {
			return nil, err
		}
		for i, t := range p.terms {
			if t.term == term {
				if lists[i], err = decodePostings(lists[i], uint64(conv), data); err != nil {
					return nil, err
				}
			}
		}
	}
	return lists, rows.Err()
}

// scorePostings walks the lists (one per query term, each in
// (conversation, seq) order) together, scores each message that holds a
// term with p, and offers those check admits to top.
func scorePostings(p *plan, lists [][]postingDoc, nterms int, top *topK, check func(candidate) (bool, error)) error {
	at := make([]int, len(lists))
	var dt docTerms
	for f := range dt.tf {
		dt.tf[f] = make([]uint64, nterms)
	}
	dt.author, dt.date = make([]bool, nterms), make([]bool, nterms)
	less := func(a, b postingDoc) bool { return a.conv < b.conv || a.conv == b.conv && a.seq < b.seq }
	for {
		var cur *postingDoc
		for i, l := range lists {
			if at[i] < len(l) && (cur == nil || less(l[at[i]], *cur)) {
				cur = &l[at[i]]
			}
		}
		if cur == nil {
			return nil
		}
		doc := *cur
		dt.len = [len(scoredFields)]int{}
		for i, l := range lists {
			for f := range dt.tf {
				dt.tf[f][i] = 0
			}
			dt.author[i], dt.date[i] = false, false
			if at[i] >= len(l) || l[at[i]].conv != doc.conv || l[at[i]].seq != doc.seq {
				continue
			}
			e := l[at[i]]
			at[i]++
			for f := range dt.tf {
				if e.flags&(1<<f) != 0 {
					dt.tf[f][i], dt.len[f] = uint64(e.tf[f]), int(e.len[f])
				}
			}
			dt.author[i], dt.date[i] = e.flags&inAuthor != 0, e.flags&inDate != 0
		}
		score := p.scoreDoc(dt)
		if score == 0 {
			continue
		}
		c := candidate{num: doc.conv, seq: doc.seq, score: score}
		ok, err := check(c)
		if err != nil {
			return err
		}
		if ok {
			top.offer(c)
		}
	}
}
