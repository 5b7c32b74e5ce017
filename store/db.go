package store

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Options configures [Open]. A nil *Options opens an in-memory store.
type Options struct {
	// Spec names the store ([ParseSpec]: memory, badger on disk,
	// PostgreSQL, SQLite). When it is zero, Dir, InMemory or Postgres name
	// the store instead, as Go shorthands of badger:Dir, memory and a
	// postgres spec: exactly one of the four is set.
	Spec Spec
	// Dir is a badger store's directory (created if missing). It holds
	// LOCK, the badger log under kv/ and the derived full-text index under
	// index/.
	Dir string
	// InMemory keeps everything in memory (badger InMemory and a
	// memory-only index): same code path, nothing survives Close.
	InMemory bool
	// Postgres keeps the store in a PostgreSQL database, shared by every
	// process that opens it, search documents included (see
	// [PostgresOptions]). With a postgres Spec it gives the pool and
	// timeouts, its DSN empty (or the spec's).
	Postgres *PostgresOptions
	// NoSync turns off the sync of each commit. Zero means synced: an
	// acknowledged append survives a kernel crash or power loss. Without
	// sync an append still survives the death of the process. Ignored in
	// memory and on PostgreSQL (the server's commits are synchronous).
	NoSync bool
	// Logger receives the backend's warnings and index maintenance
	// messages. Nil discards them.
	Logger *slog.Logger
	// Now is the clock for created_at. Nil means time.Now.
	Now func() time.Time
	// NewID generates the id of a conversation created without one. Nil
	// means "conversation_" followed by a random UUID.
	NewID func() string
	// IndexBatch is the largest number of messages a background indexer
	// (badger, SQLite) adds to the full-text index in one batch. Zero
	// means 2000.
	IndexBatch int
	// Language selects how the full-text index turns text into terms:
	// [LanguageEnglish] (stemming, possessives, stop words) or
	// [LanguageNone]. Empty means LanguageEnglish. The index records its
	// language: opening a store with another one rebuilds the index from
	// the log (as [DB.Reindex] does), so queries and documents are never
	// analyzed differently (a store shared by processes refuses it
	// instead: they would rebuild it in turn).
	Language string
	// IndexDelay is how long a background indexer waits after the first
	// unindexed append before indexing, so that bursts share a batch
	// (searches scan the unindexed tail meanwhile). Zero means 50ms. Each
	// batch is a segment the index writes, syncs and later merges on the
	// disk synced appends use: a longer delay gives a stream of appends
	// more of the disk (docs/performance.md measures two delays) and
	// searches a longer tail to scan. Negative means no wait.
	IndexDelay time.Duration
}

func (o *Options) withDefaults() (Options, error) {
	var r Options
	if o != nil {
		r = *o
	} else {
		r.InMemory = true
	}
	spec, err := r.spec()
	if err != nil {
		return r, err
	}
	r.Spec = spec
	switch {
	case r.IndexBatch < 0:
		return r, invalid("Options.IndexBatch", "must be >= 0 (got %d)", r.IndexBatch)
	case r.Language != "" && r.Language != LanguageEnglish && r.Language != LanguageNone:
		return r, invalid("Options.Language", "must be %q or %q (got %q)", LanguageEnglish, LanguageNone, r.Language)
	}
	if r.Language == "" {
		r.Language = LanguageEnglish
	}
	if r.Logger == nil {
		r.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if r.Now == nil {
		r.Now = time.Now
	}
	if r.NewID == nil {
		r.NewID = newUUIDConversationID
	}
	if r.IndexBatch == 0 {
		r.IndexBatch = 2000
	}
	if r.IndexDelay == 0 {
		r.IndexDelay = 50 * time.Millisecond
	}
	return r, nil
}

// spec is the store o names: Spec (checked as ParseSpec checks its
// text), or the spec of its Go shorthand. The backend's driver then checks
// its own options (and fills them: a postgres spec's Options.Postgres).
func (o *Options) spec() (Spec, error) {
	var spec Spec
	switch {
	case o.InMemory && o.Dir != "":
		return Spec{}, invalid("Options.Dir", "must be empty when InMemory is set (got %q)", o.Dir)
	case o.Postgres != nil && (o.InMemory || o.Dir != ""):
		return Spec{}, invalid("Options.Postgres", "must be nil when Dir or InMemory is set")
	case !o.Spec.IsZero() && (o.InMemory || o.Dir != ""):
		return Spec{}, invalid("Options.Spec", "must be zero when Dir or InMemory is set (got %v)", o.Spec)
	case !o.Spec.IsZero():
		d := drivers.get(o.Spec.Scheme)
		if d == nil {
			return Spec{}, invalid("Options.Spec", "unknown scheme %q (known: %s)", o.Spec.Scheme, strings.Join(drivers.schemes(), ", "))
		}
		var err error
		if spec, err = d.spec(o.Spec.Scheme+":"+o.Spec.Target, o.Spec.Target); err != nil {
			return Spec{}, err
		}
	case o.InMemory:
		spec = Spec{Scheme: schemeMemory}
	case o.Dir != "":
		spec = Spec{Scheme: schemeBadger, Target: o.Dir}
	case o.Postgres != nil:
		spec = Spec{Scheme: schemePostgres, Target: o.Postgres.DSN}
	default:
		return Spec{}, invalid("Options.Dir", "must be set unless Spec, InMemory or Postgres is set")
	}
	switch d := drivers.get(spec.Scheme); {
	case d.options != nil:
		return spec, d.options(spec, o)
	case o.Postgres != nil:
		return spec, invalid("Options.Postgres", "gives the pool and timeouts of a postgres spec (the spec is %v)", spec)
	}
	return spec, nil
}

func newUUIDConversationID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return "conversation_" + h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// DB is an open conversation store. It is safe for concurrent use by
// multiple goroutines: appends to one conversation are serialized,
// concurrent appends share syncs (badger, SQLite) or run in parallel on
// different conversations (PostgreSQL), and reads never block writes.
// Only one process may open a badger directory at a time; any number may
// open a PostgreSQL or SQLite store (their appends are serialized per
// conversation by the database).
type DB struct {
	opts   Options
	kv     kvStore
	search searcher
	peers  peers
	// shared: other processes may write the store (Spec.Shared), so what
	// this one knows of a conversation's head may be behind (catchUp).
	shared   bool
	tooLarge func(n int) error // nil: any size
	an       textAnalyzer

	// life is held shared by every call and exclusively by Close, so Close
	// waits for calls in flight and later calls see closed.
	life   sync.RWMutex
	closed bool

	// closing is closed by Close, waking waiters (Wait).
	closing chan struct{}
	watch   watch

	createMu sync.Mutex // serializes Create: conversation numbers and id checks
	convs    sync.Map   // id → *convState (conversations are never deleted, so entries never go stale)
	nums     sync.Map   // num → *convState
}

// convState is the in-memory state of one conversation.
type convState struct {
	id        string
	num       uint64
	createdAt int64

	mu sync.Mutex // serializes Import
	// turn is the in-process half of the turn lock (LockConversation): a
	// semaphore of one, so a waiter can give up when its context ends.
	turn chan struct{}

	head      atomic.Int64 // last committed seq
	indexed   atomic.Int64 // last seq in the full-text index that searches see (badger's indexer)
	persisted atomic.Int64 // last seq whose index batch is on disk (the stored watermark)
}

// Open opens (creating if needed) the store described by o. A nil o opens
// an in-memory store. It returns an error wrapping [ErrLocked], naming the
// directory, when another process has a badger directory open, and
// [ErrInvalid] for bad options.
func Open(o *Options) (*DB, error) {
	opts, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	be, err := drivers.get(opts.Spec.Scheme).open(opts)
	if err != nil {
		return nil, err
	}
	db := &DB{opts: opts, kv: be.kv, peers: be.peers, shared: opts.Spec.Shared(), tooLarge: be.tooLarge, closing: make(chan struct{})}
	if db.an, err = newTextAnalyzer(opts.Language); err == nil {
		db.search, err = be.search(db)
	}
	if err != nil {
		_ = be.kv.Close()
		return nil, err
	}
	return db, nil
}

// Close stops the background indexer, waits for calls in flight and closes
// the store. Later calls return [ErrClosed]; a second Close returns nil.
func (db *DB) Close() error {
	db.life.Lock()
	defer db.life.Unlock()
	if db.closed {
		return nil
	}
	db.closed = true
	close(db.closing)
	var errs []error
	errs = append(errs, db.search.close())
	if err := db.kv.Close(); err != nil {
		errs = append(errs, fmt.Errorf("store: close: %w", err))
	}
	return errors.Join(errs...)
}

// enter marks the start of a call; the caller must call db.life.RUnlock
// (via leave) when it returns nil.
func (db *DB) enter() error {
	db.life.RLock()
	if db.closed {
		db.life.RUnlock()
		return ErrClosed
	}
	return nil
}

func (db *DB) leave() { db.life.RUnlock() }

func (db *DB) now() int64 { return db.opts.Now().UnixNano() }

func timeOf(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns).UTC()
}

func notFound(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrNotFound, fmt.Sprintf(format, args...))
}

// conv returns the state of conversation id, loading it on first use.
func (db *DB) conv(id string) (*convState, error) {
	if v, ok := db.convs.Load(id); ok {
		return v.(*convState), nil
	}
	var rec conversationRec
	var head headRec
	var mark int64
	err := db.kv.View(func(t kvTxn) error {
		b, err := t.Get(convKey(id))
		if err != nil {
			return err
		}
		if rec, err = decodeConversation(b); err != nil {
			return err
		}
		if head, err = getHead(t, rec.num); err != nil {
			return err
		}
		mark, err = getMark(t, rec.num)
		return err
	})
	if errors.Is(err, errKeyNotFound) {
		return nil, notFound("conversation %q", id)
	}
	if err != nil {
		return nil, fmt.Errorf("store: conversation %q: %w", id, err)
	}
	return db.remember(id, rec, head.lastSeq, mark), nil
}

// lockWrites orders this process's writes to cs where the backend needs
// it (kvStore.lockWrites) and returns the unlock.
func (db *DB) lockWrites(cs *convState) (unlock func()) { return db.kv.lockWrites(cs.num) }

// advance moves cs's head forward to seq (never back: on a shared backend
// a catch-up may have seen a later head than an append of this process).
func (cs *convState) advance(seq int64) {
	for {
		h := cs.head.Load()
		if seq <= h || cs.head.CompareAndSwap(h, seq) {
			return
		}
	}
}

func (db *DB) remember(id string, rec conversationRec, head, mark int64) *convState {
	cs := &convState{id: id, num: rec.num, createdAt: rec.createdAt, turn: make(chan struct{}, 1)}
	cs.head.Store(head)
	cs.indexed.Store(mark)
	cs.persisted.Store(mark)
	v, loaded := db.convs.LoadOrStore(id, cs)
	if !loaded {
		db.nums.Store(rec.num, cs)
	}
	return v.(*convState)
}

// convByNum returns the state of the conversation numbered num.
func (db *DB) convByNum(num uint64) (*convState, error) {
	if v, ok := db.nums.Load(num); ok {
		return v.(*convState), nil
	}
	var id string
	err := db.kv.View(func(t kvTxn) error {
		b, err := t.Get(numKey(num))
		id = string(b)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: conversation number %d: %w", num, err)
	}
	return db.conv(id)
}

func getMark(t kvTxn, num uint64) (int64, error) {
	b, err := t.Get(markKey(num))
	if errors.Is(err, errKeyNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	v, err := decodeU64(b, "index watermark")
	return int64(v), err
}

func getHead(t kvTxn, num uint64) (headRec, error) {
	b, err := t.Get(headKey(num))
	if errors.Is(err, errKeyNotFound) {
		return headRec{}, nil
	}
	if err != nil {
		return headRec{}, err
	}
	return decodeHead(b)
}
