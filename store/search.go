package store

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// SearchOptions are the options of [DB.Find] and [DB.Search]. The zero
// value is a ranked search returning the 32 best hits with their context
// taken into account, and no windows.
type SearchOptions struct {
	// MaxResults bounds the hits returned. Zero means 32.
	MaxResults int
	// Offset skips that many hits (paging: pass the next offset returned).
	Offset int
	// Exact selects substring matching instead of ranking: hits are the
	// messages whose content contains the query, in conversation then
	// sequence order, with Score 0. NB: exact mode scans the conversation
	// (or every conversation) until it has enough hits: O(messages), as
	// upstream; ranked search is indexed.
	Exact bool
	// CaseSensitive makes exact mode case-sensitive. Ranked search always
	// folds case (the analyzer lower-cases).
	CaseSensitive bool

	// Roles keeps only messages of these roles. Empty means every role.
	Roles []Role
	// Session keeps only messages of this session ([AppendOptions.Session]).
	// Empty means every session.
	Session string
	// Since and Until keep only messages with Since <= [Record.When] <
	// Until. A zero bound is open.
	Since, Until time.Time

	// NoContext ranks every message by its own score alone. By default a
	// hit's context counts: a hit lifts the matching messages next to it in
	// its session (the reply to a question that matches, the question of an
	// answer that does), and a session whose messages match together lifts
	// each of them; the best two hits keep their ranks whatever the lifts.
	NoContext bool

	// Window asks for the messages around each hit: up to Window on each
	// side, in the hit's session ([Hit.Window]). Zero means none; at most
	// 50.
	Window int
	// MaxBytes bounds the bytes of the whole result as Size measures them:
	// the hits always come back (MaxResults bounds them), window messages
	// are added, nearest first and best hit first, while they fit. Zero
	// means no bound.
	MaxBytes int
	// Size measures a message for MaxBytes. Nil means the length of its
	// plain text ([Content.PlainText]).
	Size func(Record) int
}

// maxWindow bounds SearchOptions.Window.
const maxWindow = 50

// Hit is one search result.
type Hit struct {
	Record
	// Score is the message's own relevance: its BM25 score with the
	// qualifiers (rank.go), the same whether the message was found in the
	// index or in the scan of messages not yet indexed; 0 in exact mode.
	Score float64
	// Lift is what the hit's context added to its score for ranking (0
	// with NoContext, in exact mode, and for the two best hits, which keep
	// their ranks).
	Lift float64
	// Window holds the messages around the hit when SearchOptions.Window
	// asked for them: same conversation and session, ascending seq, the hit
	// itself excluded. A message appears once in a result: one that is a
	// hit, or in the window of a better hit, is not repeated.
	Window []Record
	// Partial reports, in ranked mode, that the message's text or its
	// captions and tool calls are longer than ranked search reads (their
	// first MiB): words after that were not searched. Exact mode reads
	// everything.
	Partial bool
}

// Result is what [DB.Find] returns.
type Result struct {
	Hits []Hit
	// Next is the offset of the next page, 0 when there are no more hits.
	Next int
	// Truncated reports that MaxBytes left out a window message (never set
	// when everything asked for came back).
	Truncated bool
	// Dropped lists the query words ranked search ignored because they are
	// in most messages (rank.go); a query made only of such words, like one
	// made only of stop words, finds nothing.
	Dropped []string
}

// Bounds of a search query, the same on every backend. Past them a
// query is a document pasted as a question: ranking it costs in
// proportion to its terms (each scored against every message holding it;
// PostgreSQL orders by one expression per term), and PostgreSQL refuses a
// statement of more than 1,664 result columns or too deep an expression.
// BenchmarkLongQueries measures the longest accepted: 9 ms on badger, 75
// ms on PostgreSQL (a 1,000-term query took 2.2 s there).
const (
	// MaxQueryBytes bounds a query's length in bytes (both modes).
	MaxQueryBytes = 8 << 10
	// MaxQueryTerms bounds the distinct terms of a ranked query, after
	// analysis (stop words do not count, a repeated word counts once).
	MaxQueryTerms = 128
)

// DefaultMaxResults is the number of hits a search returns when
// SearchOptions.MaxResults is zero (the upstream default).
const DefaultMaxResults = 32

func (o SearchOptions) validate() (SearchOptions, error) {
	switch {
	case o.MaxResults < 0:
		return o, invalid("max_results", "must be >= 0 (got %d)", o.MaxResults)
	case o.Offset < 0:
		return o, invalid("offset", "must be >= 0 (got %d)", o.Offset)
	case o.Window < 0 || o.Window > maxWindow:
		return o, invalid("window", "must be between 0 and %d (got %d)", maxWindow, o.Window)
	case o.MaxBytes < 0:
		return o, invalid("max_bytes", "must be >= 0 (got %d)", o.MaxBytes)
	case !o.Since.IsZero() && !o.Until.IsZero() && !o.Until.After(o.Since):
		return o, invalid("until", "must be after since (%v is not after %v)", o.Until, o.Since)
	}
	for i, r := range o.Roles {
		if !r.Valid() {
			return o, invalid(fmt.Sprintf("roles[%d]", i), "must be system, user, assistant or tool (got %v)", r)
		}
	}
	if o.Session != "" {
		if err := checkID("session", o.Session); err != nil {
			return o, err
		}
	}
	if o.MaxResults == 0 {
		o.MaxResults = DefaultMaxResults
	}
	if o.Size == nil {
		o.Size = func(r Record) int { return len(r.Message.Content.PlainText()) }
	}
	return o, nil
}

// filter is the part of SearchOptions that decides which messages may be
// hits.
type filter struct {
	roles        []Role // nil: all
	session      string
	since, until time.Time
}

func filterOf(o SearchOptions) filter {
	f := filter{session: o.Session, since: o.Since, until: o.Until}
	for r := RoleSystem; r <= RoleTool; r++ {
		if len(o.Roles) > 0 && !slices.Contains(o.Roles, r) {
			f.roles = o.Roles // some role is left out
			break
		}
	}
	return f
}

// none reports whether f lets every message through.
func (f filter) none() bool {
	return f.roles == nil && f.session == "" && f.since.IsZero() && f.until.IsZero()
}

// inTime reports whether t is in the filter's date range.
func (f filter) inTime(t time.Time) bool {
	return (f.since.IsZero() || !t.Before(f.since)) && (f.until.IsZero() || t.Before(f.until))
}

func (f filter) match(r Record) bool {
	return (f.roles == nil || slices.Contains(f.roles, r.Message.Role)) &&
		(f.session == "" || r.Session == f.session) && f.inTime(r.When())
}

// Search is [DB.Find] returning only the hits and the next offset.
func (db *DB) Search(conv, q string, opts SearchOptions) ([]Hit, int, error) {
	res, err := db.Find(conv, q, opts)
	return res.Hits, res.Next, err
}

// Find searches the messages of conversation conv ("" means every
// conversation) for q. It matches what messages say — their text, image
// captions, tool calls and results — never a "[seq] role:" rendering, so
// "user" does not match every user message.
//
// Ranked mode (the default) analyzes q with the store's language
// ([Options].Language) and returns the messages holding any of its terms,
// best first (rank.go says how they are scored, context.go how their
// context lifts them; ties go to the older conversation, then the lower
// seq). Messages appended but not yet indexed are scanned and scored with
// the same formula and statistics, so a search sees every append that
// returned before it started (read-your-writes) and scores it as it will
// once indexed.
//
// A query is at most [MaxQueryBytes] long, and in ranked mode holds at
// most [MaxQueryTerms] distinct terms, on every backend: a longer one is
// refused, not cut, so the caller knows what was searched.
//
// It returns an error wrapping [ErrNotFound] for an unknown conversation
// and [ErrInvalid] (a *[ValidationError] naming the field) for an empty
// or too long query or bad options.
func (db *DB) Find(conv, q string, opts SearchOptions) (Result, error) {
	if strings.TrimSpace(q) == "" {
		return Result{}, invalid("query", "must not be empty")
	}
	if len(q) > MaxQueryBytes {
		return Result{}, invalid("query", "must be at most %d bytes (got %d)", MaxQueryBytes, len(q))
	}
	opts, err := opts.validate()
	if err != nil {
		return Result{}, err
	}
	var terms []queryTerm
	if !opts.Exact {
		if terms = db.an.queryTerms(q); len(terms) > MaxQueryTerms {
			return Result{}, invalid("query", "must hold at most %d distinct terms (got %d)", MaxQueryTerms, len(terms))
		}
	}
	if err := db.enter(); err != nil {
		return Result{}, err
	}
	defer db.leave()
	var cs *convState
	if conv != "" {
		if cs, err = db.conv(conv); err != nil {
			return Result{}, err
		}
	}
	if err := db.catchUp(cs); err != nil {
		return Result{}, wrapRead(err)
	}
	var res Result
	err = db.kv.View(func(t kvTxn) error {
		var hits []Hit
		var err error
		if opts.Exact {
			hits, err = db.searchExact(t, cs, q, opts)
		} else {
			hits, res.Dropped, err = db.searchRanked(t, cs, terms, opts)
		}
		if err != nil {
			return err
		}
		if opts.Offset >= len(hits) {
			res.Hits = []Hit{}
			return nil
		}
		end := min(len(hits), opts.Offset+opts.MaxResults)
		if end < len(hits) {
			res.Next = end
		}
		res.Hits = hits[opts.Offset:end]
		if !opts.Exact {
			if err := db.withTokenCounts(t, res.Hits); err != nil {
				return err
			}
			for i := range res.Hits {
				res.Hits[i].Partial = textOf(res.Hits[i].Record).partial
			}
		}
		if opts.Window > 0 {
			res.Truncated, err = db.addWindows(t, res.Hits, opts)
		}
		return err
	})
	if err != nil {
		return Result{}, wrapRead(err)
	}
	return res, nil
}

// catchUp brings what this process knows of conversation cs (every
// conversation when nil) up to what other processes have committed, on a
// shared backend (PostgreSQL): this process's head moves forward, so an
// exact search reads every message committed before it started. It costs
// one read of the head record(s); badger has no other writers and skips
// it.
func (db *DB) catchUp(cs *convState) error {
	if db.opts.Postgres == nil {
		return nil
	}
	heads := map[uint64]int64{}
	err := db.kv.View(func(t kvTxn) error {
		if cs != nil {
			h, err := getHead(t, cs.num)
			heads[cs.num] = h.lastSeq
			return err
		}
		lo := []byte{kindHead}
		return t.Iterate(lo, prefixEnd(lo), false, func(k, v []byte) (bool, error) {
			num, ok := parseNumKey(k)
			if !ok {
				return false, corrupt("head key %x", k)
			}
			h, err := decodeHead(v)
			heads[num] = h.lastSeq
			return true, err
		})
	})
	if err != nil {
		return err
	}
	for num, head := range heads {
		c, err := db.convByNum(num)
		if err != nil {
			return err
		}
		c.advance(head)
	}
	return nil
}

// searchExact returns the first Offset+MaxResults+1 messages containing q.
func (db *DB) searchExact(t kvTxn, cs *convState, q string, opts SearchOptions) ([]Hit, error) {
	if !opts.CaseSensitive {
		q = strings.ToLower(q)
	}
	f := filterOf(opts)
	want := opts.Offset + opts.MaxResults + 1
	var hits []Hit
	match := func(r Record) bool {
		text := r.Message.Content.PlainText()
		if !opts.CaseSensitive {
			text = strings.ToLower(text)
		}
		if strings.Contains(text, q) && f.match(r) {
			hits = append(hits, Hit{Record: r})
		}
		return len(hits) < want
	}
	if cs != nil {
		return hits, readRange(t, cs, 1, cs.head.Load(), false, match)
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
		return nil, err
	}
	for _, num := range nums {
		c, err := db.convByNum(num)
		if err != nil {
			return nil, err
		}
		if err := readRange(t, c, 1, c.head.Load(), false, match); err != nil {
			return nil, err
		}
		if len(hits) >= want {
			break
		}
	}
	return hits, nil
}
