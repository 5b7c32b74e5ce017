// Package store is rlmpl's durable conversation store: conversation
// headers, append-only messages with dense per-conversation sequences,
// idempotency keys, cached token counts, O(1) counters, and a derived
// BM25 full-text index. The transcript is the source of truth; nothing in
// this package rewrites or deletes a stored message.
//
// # Ownership
//
// The store owns the key layout (keys.go), the versioned record codec
// (codec.go: a corrupt value is [ErrCorrupt], a newer one [ErrVersion],
// never a panic), transactions, and the full-text index. It stores
// messages in the normalized OpenAI chat shape ([Message],
// [Message.Normalize]) and knows nothing of Prolog: callers convert terms to
// [Message] values and back. It deliberately leaves to the caller what a
// message means (turn structure, receipts, packing) and token counting
// (counts are stored, not computed: [AppendOptions.TokenCounts],
// [DB.SetTokenCount]).
//
// # Backends
//
// A store spec names the store ([ParseSpec]: memory, a name or path,
// badger:PATH, sqlite:PATH, postgres://…; [Options].Spec) and picks its
// backend once, at [Open]. Each backend is a file that registers its
// scheme and implements three seams (backend.go): the ordered KV (kv.go:
// point Get/Set, ordered range iteration both ways, View/Update
// transactions), the searcher (how the messages' documents are kept and a
// query ranked), and the peers (how a store meets the other processes
// that open it). Nothing outside a backend's files asks which backend it
// has. The backends: badger (badger.go with index.go: one process's
// directory, or memory), SQLite (sqlite.go with sqlitesearch.go: one file
// the processes of a machine share, WAL) and PostgreSQL (pg.go with
// pgsearch.go: one bytea table, SERIALIZABLE writes retried on
// serialization failures, schema migrations embedded in migrate.go).
//
// # Concurrency
//
// A [DB] is safe for concurrent use. Appends to one conversation are
// serialized, so sequences are dense (no gaps, no duplicates) and no
// transaction conflict reaches callers: on badger and SQLite, concurrent
// appends — to one conversation or many — join one transaction and share
// its sync (group commit), applied in their order, and SQLite's writers of
// every process queue on one lock; on PostgreSQL a per-conversation mutex
// queues this process's appends and the database serializes them with
// other processes'. Reads run on snapshots and do not block writes. The
// store starts goroutines of its own (badger's and SQLite's background
// indexer, a waiting SQLite or PostgreSQL store's listener) besides
// badger's; [DB.Close] stops them and waits for calls in flight. Only one
// process may open a badger directory: a second one gets [ErrLocked]
// naming it.
//
// # Durability
//
// With a directory and the default Options, every commit is synced
// (msync of badger's write-ahead log; SQLite's synchronous=FULL, the WAL
// synced) before Append returns, so an acknowledged append survives a
// kernel crash or power loss; with NoSync it still survives the death of
// the process (the kill -9 tests check every acknowledged append after
// each kill). [Options].InMemory keeps
// everything in memory on the same code path. Appends cost O(1) whatever
// the conversation's length: the next sequence and the [Stats] counters
// live in one per-conversation head record, never recomputed from the
// messages. Every selector of [DB.Messages] is a key range (role(R) has
// its own index), so reads cost O(result).
//
// # Index consistency
//
// On PostgreSQL the search documents live in the database and commit with
// their messages (pgsearch.go): there is no index to lag, rebuild or
// recover. SQLite's index is in its file, written in segments by the
// indexer of the appending process (sqlitesearch.go), with watermarks in
// the same transactions. What follows is badger's.
//
// The full-text index (bleve postings, storing nothing) is derived from the
// log and rebuildable from it ([DB.Reindex]). The indexer follows the log
// per conversation: after a short delay (Options.IndexDelay) it indexes the
// appended messages in batches and, once a batch is on disk, records a
// per-conversation watermark in badger. After a crash it resumes from the
// watermarks; a lost or foreign index directory is rebuilt, and so is one
// built for another schema or [Options].Language. The index lags the log
// slightly, but a search also scans the messages the index does not hold
// yet, so it sees every append that returned before it started
// (read-your-writes).
//
// # Search
//
// [DB.Find] (and [DB.Search], its short form) ranks messages by BM25 over
// what they say — text, image captions, tool calls and results, never a
// "[seq] role:" rendering — computed by the store itself from the index's
// postings and its own statistics, so a memory store, a persistent store
// and the scan of unindexed messages score alike (rank.go). A query naming
// an author or a month lifts that author's or month's messages; a hit's
// neighbours and session lift it (context.go); filters keep roles, a
// session, a date range ([SearchOptions]); windows return the turns around
// each hit within a byte budget. Top-k retrieval prunes (MaxScore) and
// drops terms found in most messages, so its cost follows the rare terms of
// a query, not the common ones; a conversation of fewer than 128 indexed
// messages is read whole instead, one walk per term and field giving both
// its statistics and every score. `make eval-retrieval` measures it against
// plain BM25 (internal/longconv).
//
// # Usage
//
//	db, err := store.Open(&store.Options{Dir: dir})
//	if err != nil {
//		return err // errors.Is(err, store.ErrLocked) if another process has dir
//	}
//	defer db.Close()
//	if _, err := db.Create("demo", nil); err != nil && !errors.Is(err, store.ErrExists) {
//		return err
//	}
//	rec, err := db.Append("demo", store.Message{Role: store.RoleUser, Content: store.TextContent("hello")},
//		store.AppendOptions{IdempotencyKey: "turn-1"}) // a retry returns the same record
//	if err != nil {
//		return err
//	}
//	tail, err := db.Messages("demo", store.Recent(20), 0)
//	res, err := db.Find("demo", "what did we say hello to?", store.SearchOptions{MaxResults: 5, Window: 1})
package store
