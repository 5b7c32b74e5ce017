package store

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
)

// Ranked search on PostgreSQL runs on the database's own full-text index,
// not on a per-process side index: every process sees what every other
// has committed, as soon as it commits (migrations/0002_search.sql).
//
// The transaction that appends a message also writes its document: the
// terms the store's analyzer makes of it (the same terms badger's bleve
// index holds, so both backends rank alike) as a tsvector under a GIN
// index, their frequencies per field as jsonb, and its share of the BM25
// statistics (rlmpl_doc_stats: documents and tokens per field;
// rlmpl_df: document frequencies per term), per conversation. A search
// then reads the statistics of its scope, lets the GIN index find the
// messages holding a query term, has the database order them by BM25 (an
// expression over the frequencies) and return the best few, and scores
// those again in Go with the formula of rank.go, so a score is the same
// float on every backend. Context lifting and windows (context.go) are
// shared with badger.
//
// Limits PostgreSQL sets: a term longer than 2,046 bytes is not a lexeme
// (such terms are left out of documents and queries), and a tsvector
// holds at most 1 MiB, so a document whose distinct terms would need more
// keeps those that fit, in term order (a message of 1 MiB of distinct
// tokens; Hit.Partial does not say so).

// maxLexeme is PostgreSQL's longest lexeme, in bytes.
const maxLexeme = 2046

// maxTSVector is what a document's tsvector may take (PostgreSQL's limit
// is 1 MiB - 1, header included).
const maxTSVector = 1<<20 - 1024

// pgLexeme reports whether term can be a PostgreSQL lexeme and jsonb key.
func pgLexeme(term string) bool {
	return term != "" && len(term) <= maxLexeme && !strings.ContainsRune(term, 0) && utf8.ValidString(term)
}

// pgDoc is a message's search document.
type pgDoc struct {
	lens  [len(scoredFields)]int
	terms []string   // distinct, sorted
	freq  [][4]int32 // per term: tf in body and attachments, in author and date (0 or 1)
}

// pgDocOf analyzes r as the bleve indexer and the scan of unindexed
// messages do (textOf).
func (a textAnalyzer) pgDocOf(r Record) pgDoc {
	d := textOf(r)
	freq := map[string]*[4]int32{}
	add := func(text string, field int, count bool) int {
		toks := a.terms(text)
		for _, tok := range toks {
			if !pgLexeme(tok) {
				continue
			}
			c := freq[tok]
			if c == nil {
				c = new([4]int32)
				freq[tok] = c
			}
			if count {
				c[field]++
			} else {
				c[field] = 1
			}
		}
		return len(toks)
	}
	var doc pgDoc
	doc.lens[0] = add(d.body, 0, true)
	doc.lens[1] = add(d.attach, 1, true)
	add(d.author, 2, false)
	add(d.date, 3, false)
	size := 0
	for _, term := range slices.Sorted(maps.Keys(freq)) {
		c := freq[term]
		n := 0
		for _, v := range c {
			if v > 0 {
				n++
			}
		}
		// A tsvector entry: 4 bytes, the lexeme (2-aligned), a count and
		// two bytes per position.
		if size += 4 + len(term) + len(term)%2 + 2 + 2*n; size > maxTSVector {
			break
		}
		doc.terms = append(doc.terms, term)
		doc.freq = append(doc.freq, *c)
	}
	return doc
}

// pgQuote quotes a lexeme for a tsvector or tsquery literal.
func pgQuote(sb *strings.Builder, term string) {
	sb.WriteByte('\'')
	for i := 0; i < len(term); i++ {
		switch term[i] {
		case '\'':
			sb.WriteString("''")
		case '\\':
			sb.WriteString(`\\`)
		default:
			sb.WriteByte(term[i])
		}
	}
	sb.WriteByte('\'')
}

// fieldWeights are the tsvector weights of body, attachments, author and
// date; a lexeme has one position per field it is in, 1 to 4.
const fieldWeights = "ABCD"

// tsvector is the document's tsvector literal.
func (d pgDoc) tsvector() string {
	var sb strings.Builder
	for i, term := range d.terms {
		if i > 0 {
			sb.WriteByte(' ')
		}
		pgQuote(&sb, term)
		sep := byte(':')
		for f, n := range d.freq[i] {
			if n > 0 {
				sb.WriteByte(sep)
				sb.WriteString(strconv.Itoa(f + 1))
				sb.WriteByte(fieldWeights[f])
				sep = ','
			}
		}
	}
	return sb.String()
}

// pgIndexDoc writes a message's document with its share of the
// statistics, unless the message has one already (a backfill running
// again), in one statement.
const pgIndexDoc = `WITH d AS (
	INSERT INTO rlmpl_doc (conv, seq, role, session, at, body_len, attach_len, terms, tf)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8::tsvector, $9::jsonb)
	ON CONFLICT DO NOTHING RETURNING conv
), s AS (
	INSERT INTO rlmpl_doc_stats AS s (conv, docs, body_docs, body_tokens, attach_docs, attach_tokens)
	SELECT conv, 1, $10, $6, $11, $7 FROM d
	ON CONFLICT (conv) DO UPDATE SET docs = s.docs + 1,
		body_docs = s.body_docs + excluded.body_docs, body_tokens = s.body_tokens + excluded.body_tokens,
		attach_docs = s.attach_docs + excluded.attach_docs, attach_tokens = s.attach_tokens + excluded.attach_tokens
)
INSERT INTO rlmpl_df AS f (conv, term, body, attach, author, date, body_max_tf, body_min_len, attach_max_tf, attach_min_len)
SELECT d.conv, t.term, t.b, t.a, t.n, t.w, t.bt,
	CASE WHEN t.bt > 0 THEN $6 ELSE 2147483647 END, t.at, CASE WHEN t.at > 0 THEN $7 ELSE 2147483647 END
FROM d, unnest($12::text[], $13::int[], $14::int[], $15::int[], $16::int[], $17::int[], $18::int[]) AS t(term, b, a, n, w, bt, at)
ON CONFLICT (conv, term) DO UPDATE SET body = f.body + excluded.body, attach = f.attach + excluded.attach,
	author = f.author + excluded.author, date = f.date + excluded.date,
	body_max_tf = greatest(f.body_max_tf, excluded.body_max_tf), body_min_len = least(f.body_min_len, excluded.body_min_len),
	attach_max_tf = greatest(f.attach_max_tf, excluded.attach_max_tf), attach_min_len = least(f.attach_min_len, excluded.attach_min_len)`

// indexDoc queues the document of message r of conversation num in the
// transaction.
func (t *pgTxn) indexDoc(an textAnalyzer, num uint64, r Record) error {
	d := an.pgDocOf(r)
	tf := make(map[string][4]int32, len(d.terms))
	df := [4][]int32{}
	var scored [len(scoredFields)][]int32
	for i, term := range d.terms {
		tf[term] = d.freq[i]
		for f, n := range d.freq[i] {
			df[f] = append(df[f], min(n, 1))
		}
		for f := range scored {
			scored[f] = append(scored[f], d.freq[i][f])
		}
	}
	js, err := json.Marshal(tf)
	if err != nil {
		return err
	}
	has := func(n int) int32 { return int32(min(n, 1)) }
	t.pending.Queue(pgIndexDoc, int64(num), r.Seq, int16(r.Message.Role), r.Session, r.When().UnixNano(),
		int32(d.lens[0]), int32(d.lens[1]), d.tsvector(), string(js), has(d.lens[0]), has(d.lens[1]),
		nonNil(d.terms), nonNil(df[0]), nonNil(df[1]), nonNil(df[2]), nonNil(df[3]), nonNil(scored[0]), nonNil(scored[1]))
	return nil
}

// nonNil keeps pgx from sending an empty slice as NULL.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// pgSearch is the searcher of a PostgreSQL store: the documents live in
// the database, written by the transaction that appends their message.
type pgSearch struct {
	db *DB
	kv *pgKV
}

var _ searcher = (*pgSearch)(nil)

// openPGSearch checks the store's documents against this store's
// language and writes those it lacks (open).
func openPGSearch(db *DB, kv *pgKV) (*pgSearch, error) {
	s := &pgSearch{db: db, kv: kv}
	if err := s.open(); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *pgSearch) add(t kvTxn, num uint64, r Record) error {
	return t.(*pgTxn).indexDoc(s.db.an, num, r)
}

func (s *pgSearch) appended(*convState) {}

// waitIndexed: a message's document commits with it.
func (s *pgSearch) waitIndexed(time.Duration) error { return nil }

func (s *pgSearch) close() error { return nil }

func (s *pgSearch) search(t kvTxn, cs *convState, terms []queryTerm, opts SearchOptions) ([]Hit, []string, error) {
	return s.db.searchPG(t.(*pgTxn), cs, terms, opts)
}

// searchPG is the ranked search of a PostgreSQL store.
func (db *DB) searchPG(t *pgTxn, cs *convState, terms []queryTerm, opts SearchOptions) ([]Hit, []string, error) {
	terms = slices.DeleteFunc(terms, func(t queryTerm) bool { return !pgLexeme(t.term) })
	if len(terms) == 0 {
		return []Hit{}, nil, nil // only stop words
	}
	if err := t.flush(); err != nil {
		return nil, nil, err
	}
	st, fr, bounds, err := t.searchStats(cs, terms)
	if err != nil {
		return nil, nil, fmt.Errorf("store: search: %w", err)
	}
	p := newPlan(terms, st, fr)
	f := filterOf(opts)
	top := &topK{k: max(minPool, opts.Offset+opts.MaxResults+1)}
	if len(p.clauses) > 0 {
		df := make([]uint64, len(terms))
		for i := range df {
			df[i] = fr.scored[0][i] + fr.scored[1][i]
		}
		if err := t.candidates(p, cs, f, df, bounds, top); err != nil {
			return nil, nil, fmt.Errorf("store: search: %w", err)
		}
	}
	pool := top.sorted()
	// The hits, their neighbours (context) and the windows asked for, in
	// one round trip.
	if spans := poolSpans(pool, opts.Window); len(spans) > 0 {
		if err := t.prefetch(spans); err != nil {
			return nil, nil, fmt.Errorf("store: search: %w", err)
		}
	}
	hits, err := db.poolHits(t, p, pool, len(pool) == top.k, opts, f, map[docKey]Record{})
	return hits, p.dropped, err
}

// tfBound is what bounds a term's BM25 score in a field: its largest
// frequency in a document and the shortest document holding it.
type tfBound struct {
	maxTF  uint64
	minLen int64
}

// searchStats reads the BM25 statistics and the query terms' document
// frequencies and score bounds of conversation cs, or of the whole store
// when nil.
func (t *pgTxn) searchStats(cs *convState, terms []queryTerm) (st indexStats, fr frequencies, bounds [len(scoredFields)][]tfBound, err error) {
	fr = newFrequencies(len(terms))
	for f := range bounds {
		bounds[f] = make([]tfBound, len(terms))
	}
	names := make([]string, len(terms))
	for i, qt := range terms {
		names[i] = qt.term
	}
	var statsRow pgx.Row
	var dfRows pgx.Rows
	if cs != nil {
		statsRow = t.tx.QueryRow(t.ctx, `SELECT docs, body_docs, body_tokens, attach_docs, attach_tokens
			FROM rlmpl_doc_stats WHERE conv = $1`, int64(cs.num))
	} else {
		statsRow = t.tx.QueryRow(t.ctx, `SELECT coalesce(sum(docs), 0)::bigint, coalesce(sum(body_docs), 0)::bigint,
			coalesce(sum(body_tokens), 0)::bigint, coalesce(sum(attach_docs), 0)::bigint, coalesce(sum(attach_tokens), 0)::bigint
			FROM rlmpl_doc_stats`)
	}
	var v [5]int64
	if err = statsRow.Scan(&v[0], &v[1], &v[2], &v[3], &v[4]); err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return
	}
	st.docs = uint64(v[0])
	st.fields[0] = fieldStats{docs: uint64(v[1]), tokens: uint64(v[2])}
	st.fields[1] = fieldStats{docs: uint64(v[3]), tokens: uint64(v[4])}
	if cs != nil {
		dfRows, err = t.tx.Query(t.ctx, `SELECT term, body, attach, author, date, body_max_tf, body_min_len, attach_max_tf, attach_min_len
			FROM rlmpl_df WHERE conv = $1 AND term = ANY($2)`, int64(cs.num), names)
	} else {
		dfRows, err = t.tx.Query(t.ctx, `SELECT term, sum(body)::bigint, sum(attach)::bigint, sum(author)::bigint, sum(date)::bigint,
			max(body_max_tf), min(body_min_len), max(attach_max_tf), min(attach_min_len)
			FROM rlmpl_df WHERE term = ANY($1) GROUP BY term`, names)
	}
	if err != nil {
		return
	}
	defer dfRows.Close()
	for dfRows.Next() {
		var term string
		var n [4]int64
		var b [4]int32
		if err = dfRows.Scan(&term, &n[0], &n[1], &n[2], &n[3], &b[0], &b[1], &b[2], &b[3]); err != nil {
			return
		}
		i := slices.Index(names, term)
		fr.scored[0][i], fr.scored[1][i] = uint64(n[0]), uint64(n[1])
		fr.author[i], fr.date[i] = uint64(n[2]), uint64(n[3])
		bounds[0][i] = tfBound{uint64(b[0]), int64(b[1])}
		bounds[1][i] = tfBound{uint64(b[2]), int64(b[3])}
	}
	err = dfRows.Err()
	return
}

// candidates offers to top the best documents of p's clauses that pass f
// (and the scope cs, unless nil), scored by p.
//
// A query term in many documents makes the database score all of them, so
// the common terms are set aside as MaxScore does (rank.go): the
// documents of the rarer terms are ranked first, and those holding only
// common terms are ranked too only when their best possible score (the
// common clauses' upper bounds, times the qualifiers') could still reach
// the k-th best found. df is each term's document frequency in the scope,
// bounds its largest frequency and shortest document per field: a common
// term in short documents only, or never repeated, bounds their scores
// far below its idf.
func (t *pgTxn) candidates(p *plan, cs *convState, f filter, df []uint64, bounds [len(scoredFields)][]tfBound, top *topK) error {
	n := 2*top.k + 16 // the database's floats may order a few near-ties otherwise
	ub := make([]float64, len(p.terms))
	for c, cl := range p.clauses {
		if b := bounds[cl.field][cl.term]; b.maxTF > 0 {
			ub[cl.term] += p.clauseScore(c, b.maxTF, int(b.minLen))
		}
	}
	// The terms with clauses, rarest first; the rare ones (a few times
	// what is asked for) are ranked at once, the others one at a time
	// while the documents holding only those left could still enter.
	var order []int
	for i := range p.terms {
		if slices.ContainsFunc(p.clauses, func(c clause) bool { return c.term == i }) {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(df[a], df[b]) })
	first := 1
	for first < len(order) && df[order[first]] <= uint64(4*n) {
		first++
	}
	seen := map[docKey]bool{}
	for done := 0; done < len(order); {
		next := done + 1
		if done == 0 {
			next = first
		}
		if done > 0 {
			bound := 0.0
			for _, i := range order[done:] {
				bound += ub[i]
			}
			if len(top.cs) == top.k && bound*p.maxMult() < top.threshold() {
				return nil // no document of the terms left alone can enter
			}
		}
		if err := t.rankDocs(p, cs, f, order[done:next], order[:done], n, seen, top); err != nil {
			return err
		}
		done = next
	}
	return nil
}

// rankDocs offers to top the best n documents holding one of the terms
// match (in the fields p has clauses for) and none of the terms not, as
// the database orders them by BM25, scored by p, skipping those seen.
func (t *pgTxn) rankDocs(p *plan, cs *convState, f filter, match, not []int, n int, seen map[docKey]bool, top *topK) error {
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	var sql strings.Builder
	sql.WriteString("SELECT d.conv, d.seq, d.body_len, d.attach_len")
	for i := range p.terms {
		// These bind $1..$len(terms), which tf below names.
		fmt.Fprintf(&sql, ", coalesce(m.tf -> %s::text, '[0,0,0,0]')", arg(p.terms[i].term))
	}
	// m.tf is the document's frequencies read once: each d.tf -> term
	// would read (detoast) all of them again, which for a message of
	// megabytes made a query's time grow with its terms times the
	// message's size. OFFSET 0 keeps the planner from inlining it.
	sql.WriteString(" FROM rlmpl_doc d CROSS JOIN LATERAL (SELECT d.tf || '{}'::jsonb AS tf OFFSET 0) m")
	sql.WriteString(" WHERE d.terms @@ " + arg(p.tsquery(match)) + "::tsquery")
	if len(not) > 0 {
		sql.WriteString(" AND NOT d.terms @@ " + arg(p.tsquery(not)) + "::tsquery")
	}
	if cs != nil {
		sql.WriteString(" AND d.conv = " + arg(int64(cs.num)))
	}
	if f.roles != nil {
		roles := make([]int16, len(f.roles))
		for i, r := range f.roles {
			roles[i] = int16(r)
		}
		sql.WriteString(" AND d.role = ANY(" + arg(roles) + "::smallint[])")
	}
	if f.session != "" {
		sql.WriteString(" AND d.session = " + arg(f.session))
	}
	if !f.since.IsZero() {
		sql.WriteString(" AND d.at >= " + arg(unixNanoClamped(f.since)))
	}
	if !f.until.IsZero() {
		sql.WriteString(" AND d.at < " + arg(unixNanoClamped(f.until)))
	}
	// ORDER BY the score of rank.go written in SQL: each clause's BM25
	// term, times the qualifiers' factor.
	tf := func(term, field int) string {
		return fmt.Sprintf("coalesce((m.tf -> $%d::text ->> %d)::float8, 0)", term+1, field)
	}
	var score []string
	for _, c := range p.clauses {
		lens := "d.body_len"
		if c.field == 1 {
			lens = "d.attach_len"
		}
		x := tf(c.term, c.field)
		score = append(score, fmt.Sprintf("%s::float8 * %s / (%s + %s::float8 + %s::float8 * %s)", arg(c.w), x, x, arg(c.k), arg(c.kl), lens))
	}
	expr := "(" + strings.Join(score, " + ") + ")"
	if len(p.speakers) > 0 {
		var named []string
		for _, i := range p.speakers {
			named = append(named, tf(i, 2)+" > 0")
		}
		expr += fmt.Sprintf(" * CASE WHEN %s THEN %s::float8 ELSE 1 END", strings.Join(named, " OR "), arg(1+speakerBoost))
	}
	if len(p.dates) > 0 {
		var sum []string
		for _, i := range p.dates {
			sum = append(sum, tf(i, 3))
		}
		expr += fmt.Sprintf(" * (1 + %s::float8 * (%s))", arg(dateBoost/float64(len(p.dates))), strings.Join(sum, " + "))
	}
	fmt.Fprintf(&sql, " ORDER BY %s DESC, d.conv, d.seq LIMIT %s", expr, arg(n))
	rows, err := t.tx.Query(t.ctx, sql.String(), args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	freq := make([][4]int32, len(p.terms))
	dest := make([]any, 4+len(p.terms))
	var num, seq int64
	var bodyLen, attachLen int32
	dest[0], dest[1], dest[2], dest[3] = &num, &seq, &bodyLen, &attachLen
	for i := range freq {
		dest[4+i] = &freq[i]
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		k := docKey{uint64(num), seq}
		if seen[k] {
			continue
		}
		seen[k] = true
		dt := docTerms{len: [len(scoredFields)]int{int(bodyLen), int(attachLen)}}
		for fi := range dt.tf {
			dt.tf[fi] = make([]uint64, len(p.terms))
		}
		dt.author, dt.date = make([]bool, len(p.terms)), make([]bool, len(p.terms))
		for i, c := range freq {
			dt.tf[0][i], dt.tf[1][i] = uint64(c[0]), uint64(c[1])
			dt.author[i], dt.date[i] = c[2] > 0, c[3] > 0
		}
		if s := p.scoreDoc(dt); s > 0 {
			top.offer(candidate{num: k.num, seq: k.seq, score: s})
		}
	}
	return rows.Err()
}

// tsquery is the tsquery literal matching the terms (indexes into
// p.terms) in the fields p has clauses for.
func (p *plan) tsquery(terms []int) string {
	weights := make([]string, len(p.terms))
	for _, c := range p.clauses {
		weights[c.term] += fieldWeights[c.field : c.field+1]
	}
	var q strings.Builder
	for _, i := range terms {
		if q.Len() > 0 {
			q.WriteString(" | ")
		}
		pgQuote(&q, p.terms[i].term)
		q.WriteString(":" + weights[i])
	}
	return q.String()
}

// unixNanoClamped is t in Unix nanoseconds, clamped to int64: a bound
// outside the years a message may carry (1678–2261) bounds nothing.
func unixNanoClamped(t time.Time) int64 {
	switch {
	case t.Year() < 1678:
		return math.MinInt64
	case t.Year() > 2261:
		return math.MaxInt64
	}
	return t.UnixNano()
}

// open checks the store's search documents against this store's language
// and, the first time a store opens a schema migrated from version 1,
// writes the documents of the messages stored before. It holds the
// migration lock meanwhile: other processes opening the store wait
// instead of writing the same documents.
func (s *pgSearch) open() error {
	db, kv := s.db, s.kv
	return kv.withMigrationLock(func(conn *pgx.Conn) error {
		var lang *string
		var complete bool
		if err := conn.QueryRow(kv.ctx, `SELECT language, complete FROM rlmpl_search WHERE id = 1`).Scan(&lang, &complete); err != nil {
			return err
		}
		switch {
		case lang == nil:
			if _, err := conn.Exec(kv.ctx, `UPDATE rlmpl_search SET language = $1 WHERE id = 1`, db.opts.Language); err != nil {
				return err
			}
		case *lang != db.opts.Language:
			return invalid("Options.Language", "this PostgreSQL store's search index is built for language %q (got %q): every process sharing it must use that one", *lang, db.opts.Language)
		}
		if complete {
			return nil
		}
		return s.completeDocs(conn)
	})
}

// rebuild writes the search documents again from the log ([DB.Reindex]).
// Appends meanwhile (from any process) write their own documents, which
// the rebuild then finds and skips.
func (s *pgSearch) rebuild() error {
	kv := s.kv
	return kv.withMigrationLock(func(conn *pgx.Conn) error {
		if _, err := conn.Exec(kv.ctx, `UPDATE rlmpl_search SET complete = false WHERE id = 1`); err != nil {
			return err
		}
		if _, err := conn.Exec(kv.ctx, `TRUNCATE rlmpl_doc, rlmpl_doc_stats, rlmpl_df`); err != nil {
			return err
		}
		return s.completeDocs(conn)
	})
}

// completeDocs writes the documents the store lacks and records that it
// lacks none: an open that finds the record unset (a crash midway) writes
// the rest.
func (s *pgSearch) completeDocs(conn *pgx.Conn) error {
	if err := s.indexAllPG(); err != nil {
		return err
	}
	_, err := conn.Exec(s.kv.ctx, `UPDATE rlmpl_search SET complete = true WHERE id = 1`)
	return err
}

// bulkWrite is the number of messages one call writes past which the
// search tables are analyzed at once: the planner then sees a bulk load's
// shape (a conversation grown by 100,000 messages; a term now common)
// before autovacuum's next pass, which may be a minute away.
const bulkWrite = 5000

// wrote analyzes the search tables after a call that wrote n messages,
// when n is a bulk load. A failure only leaves the planner's statistics
// for autovacuum to refresh.
func (s *pgSearch) wrote(n int) {
	if n >= bulkWrite {
		if _, err := s.kv.pool.Exec(s.kv.ctx, `ANALYZE rlmpl_doc, rlmpl_df, rlmpl_doc_stats`); err != nil {
			s.db.opts.Logger.Warn("store: analyze after a bulk load failed", "err", err)
		}
	}
}

// indexAllPG writes the documents of every stored message that has none,
// a conversation at a time, 512 messages a transaction.
func (s *pgSearch) indexAllPG() error {
	db := s.db
	n := 0
	defer func() { s.wrote(n) }()
	var nums []uint64
	err := db.kv.View(func(t kvTxn) error {
		lo := []byte{kindHead}
		return t.Iterate(lo, prefixEnd(lo), false, func(k, _ []byte) (bool, error) {
			num, ok := parseNumKey(k)
			if !ok {
				return false, corrupt("head key %x", k)
			}
			nums = append(nums, num)
			return true, nil
		})
	})
	if err != nil {
		return err
	}
	const page = 512
	for _, num := range nums {
		cs, err := db.convByNum(num)
		if err != nil {
			return err
		}
		for lo := int64(1); ; lo += page {
			var recs []Record
			err := db.kv.Update(func(t kvTxn) error {
				recs = recs[:0]
				err := readRange(t, cs, lo, lo+page-1, false, func(r Record) bool {
					recs = append(recs, r)
					return true
				})
				for _, r := range recs {
					if err == nil {
						err = t.(*pgTxn).indexDoc(db.an, num, r)
					}
				}
				return err
			})
			if err != nil {
				return fmt.Errorf("store: index conversation %q: %w", cs.id, err)
			}
			n += len(recs)
			if len(recs) < page {
				break
			}
		}
	}
	return nil
}
