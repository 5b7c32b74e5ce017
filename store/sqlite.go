package store

import (
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// The SQLite backend: one file that every process of a machine may open at
// once, with no server (modernc.org/sqlite, pure Go). The log is one table
// (kvStore), WAL journaling lets readers run beside the writer, writers of
// every process queue on a lock file (PATH-lock, lockfile_linux.go) and
// share syncs within a process (group commit), the full-text index is
// segments of postings in the same file fed by a background indexer
// (sqlitesearch.go), and a conversation's turns take turns across
// processes on a byte of the lock file. Spec: sqlite:PATH.
//
// Durability: every commit is synced (synchronous=FULL: the WAL is synced
// before COMMIT returns), so an acknowledged append survives a kernel crash
// or power loss; with NoSync, synchronous=NORMAL, an acknowledged append
// survives the death of the process (kill -9) but not a power loss. A full
// disk is SQLite's SQLITE_FULL: the write is rolled back and refused with
// [ErrNoSpace]; reads go on.
const schemeSQLite = "sqlite"

func init() {
	register(&driver{
		scheme: schemeSQLite, local: true, shared: true, kind: "sqlite",
		target: pathTarget("file", "sqlite:PATH"),
		text:   func(path string) string { return schemeSQLite + ":" + path },
		open:   openSQLiteBackend,
		probe:  func(_ context.Context, o Options) (Presence, error) { return probeSQLite(o.Spec.Target) },
	})
}

// sqliteSchema is the version of the store's tables this binary writes.
const sqliteSchema = 1

// sqliteHeader starts every SQLite database file.
const sqliteHeader = "SQLite format 3\x00"

// The store's tables: the ordered KV of the log, the store's own facts,
// and the search index (sqlitesearch.go).
const sqliteTables = `
CREATE TABLE IF NOT EXISTS rlmpl_kv (k BLOB PRIMARY KEY, v BLOB NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS rlmpl_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS rlmpl_seg (seg INTEGER PRIMARY KEY, docs INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS rlmpl_post (seg INTEGER NOT NULL, term TEXT NOT NULL, conv INTEGER NOT NULL,
	body INTEGER NOT NULL, attach INTEGER NOT NULL, author INTEGER NOT NULL, date INTEGER NOT NULL, data BLOB NOT NULL,
	PRIMARY KEY (seg, term, conv)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS rlmpl_stats (conv INTEGER PRIMARY KEY, docs INTEGER NOT NULL,
	body_docs INTEGER NOT NULL, body_tokens INTEGER NOT NULL, attach_docs INTEGER NOT NULL, attach_tokens INTEGER NOT NULL,
	indexed INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS rlmpl_pending (conv INTEGER PRIMARY KEY);
`

// sqliteConns is the size of the connection pool: readers in parallel,
// one writer at a time (writeMu), and the listener's connection.
const sqliteConns = 6

// sqliteBusy is how long a statement waits for a lock another connection
// holds (SQLite's busy_timeout): another process's checkpoint, or a writer
// that does not queue on the lock file.
const sqliteBusy = 30 * time.Second

func openSQLiteBackend(o Options) (backend, error) {
	path, err := filepath.Abs(o.Spec.Target)
	if err != nil {
		return backend{}, fmt.Errorf("store: open %s: %w", o.Spec, err)
	}
	kv, err := openSQLite(path, !o.NoSync)
	if err != nil {
		if errors.Is(err, ErrInvalid) || errors.Is(err, ErrSchemaNewer) {
			return backend{}, err
		}
		return backend{}, fmt.Errorf("store: open %s: %w", o.Spec, err)
	}
	return backend{kv: kv, peers: kv, search: func(db *DB) (searcher, error) { return openSQLiteSearch(db, kv) }}, nil
}

// probeSQLite reports what path holds, reading it without creating or
// changing anything: nothing (or an empty file), an SQLite file holding a
// store, or anything else (another file, another database).
func probeSQLite(path string) (Presence, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return Absent, nil
	}
	if err != nil {
		return Absent, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || fi.IsDir() {
		return Foreign, err
	}
	head := make([]byte, len(sqliteHeader))
	switch n, err := io.ReadFull(f, head); {
	case n == 0:
		return Absent, nil
	case err != nil || string(head) != sqliteHeader:
		return Foreign, nil
	}
	db, err := sql.Open("sqlite", sqliteDSN(path, "mode=ro", "_pragma=busy_timeout(10000)"))
	if err != nil {
		return Absent, err
	}
	defer db.Close()
	var tables, ours int
	err = db.QueryRow(`SELECT count(*), count(*) FILTER (WHERE name = 'rlmpl_meta') FROM sqlite_master WHERE type = 'table'`).Scan(&tables, &ours)
	switch {
	case err != nil:
		return Absent, err
	case ours > 0:
		return Present, nil
	case tables == 0:
		return Absent, nil
	}
	return Foreign, nil
}

// isSQLiteFile reports whether path is a database file of SQLite, or one
// of the files SQLite and this store keep beside it (-wal, -shm,
// -journal, -lock): a store's files are never a program's to remove.
func isSQLiteFile(path string) bool {
	for _, suffix := range []string{"-wal", "-shm", "-journal", "-lock"} {
		if db, ok := strings.CutSuffix(path, suffix); ok && isSQLiteFile(db) {
			return true
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, len(sqliteHeader))
	_, err = io.ReadFull(f, head)
	return err == nil && string(head) == sqliteHeader
}

// sqliteDSN is modernc's DSN of the database at path: a file: URI (the
// path's %, ? and # escaped) with query parameters.
func sqliteDSN(path string, params ...string) string {
	esc := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(filepath.ToSlash(path))
	return "file:" + esc + "?" + strings.Join(params, "&")
}

// sqliteKV implements kvStore, and peers, on one SQLite file.
//
// Update runs in BEGIN IMMEDIATE transactions on one connection at a time
// (writeMu) holding the lock file's write lock, so the store's writes read
// what they depend on (a head, the next conversation number) with no
// other writer of any process in between: sequences stay dense across
// processes with no retry. Concurrent Updates share a transaction and its
// sync (group.go). View runs in a deferred, read-only transaction: one WAL
// snapshot, like badger's.
type sqliteKV struct {
	path  string
	db    *sql.DB
	lock  *lockFile
	group groupCommit
	// writeMu is held by the transaction writing: the group's leader or
	// the indexer.
	writeMu sync.Mutex

	// The statements of kvTxn, prepared once.
	get, set, del    *sql.Stmt
	ascTo, ascOpen   *sql.Stmt
	descTo, descOpen *sql.Stmt
	prefetch         *sql.Stmt

	ctx       context.Context // cancelled by Close
	cancel    context.CancelFunc
	pollEvery time.Duration // how often a listener reads the data version unwatched

	listenMu   sync.Mutex // protects the fields below
	listening  bool
	listenDone chan struct{} // closed when the listener ends
}

var (
	_ kvStore = (*sqliteKV)(nil)
	_ peers   = (*sqliteKV)(nil)
)

// sqlitePoll is how often a process waiting for a conversation reads the
// database's data version (PRAGMA data_version: it changes when another
// connection commits) where it cannot watch the WAL being written
// (walWatch). SQLite has no notifications; this poll, a few microseconds
// each, is then what another process's append waits for at most.
const sqlitePoll = 5 * time.Millisecond

func openSQLite(path string, sync bool) (*sqliteKV, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	syncMode := "FULL"
	if !sync {
		syncMode = "NORMAL"
	}
	db, err := sql.Open("sqlite", sqliteDSN(path,
		"_txlock=immediate",
		fmt.Sprintf("_pragma=busy_timeout(%d)", sqliteBusy.Milliseconds()),
		"_pragma=journal_mode(WAL)",
		"_pragma=synchronous("+syncMode+")",
		"_pragma=foreign_keys(0)"))
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(sqliteConns)
	db.SetMaxIdleConns(sqliteConns)
	db.SetConnMaxIdleTime(0)
	lock, err := openLockFile(path + "-lock")
	if err != nil {
		db.Close()
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	kv := &sqliteKV{path: path, db: db, lock: lock, ctx: ctx, cancel: cancel, pollEvery: sqlitePoll}
	if err := kv.init(); err != nil {
		kv.Close()
		return nil, err
	}
	return kv, nil
}

// init creates the tables (once, in a write transaction: several
// processes may open a new file at once), checks the schema version and
// prepares the statements.
func (s *sqliteKV) init() error {
	err := s.write(func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(s.ctx, sqliteTables); err != nil {
			return err
		}
		var v string
		err := tx.QueryRowContext(s.ctx, `SELECT value FROM rlmpl_meta WHERE key = 'version'`).Scan(&v)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			_, err = tx.ExecContext(s.ctx, `INSERT INTO rlmpl_meta (key, value) VALUES ('version', ?)`, fmt.Sprint(sqliteSchema))
			return err
		case err != nil:
			return err
		case v != fmt.Sprint(sqliteSchema):
			return fmt.Errorf("%w: %s is at version %s, this binary knows version %d; upgrade rlmpl", ErrSchemaNewer, s.path, v, sqliteSchema)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return prepareAll(s.ctx, s.db, []prepared{
		{&s.get, `SELECT v FROM rlmpl_kv WHERE k = ?`},
		{&s.set, `INSERT INTO rlmpl_kv (k, v) VALUES (?, ?) ON CONFLICT (k) DO UPDATE SET v = excluded.v`},
		{&s.del, `DELETE FROM rlmpl_kv WHERE k = ?`},
		{&s.ascTo, `SELECT k, v FROM rlmpl_kv WHERE k >= ? AND k < ? ORDER BY k LIMIT ?`},
		{&s.ascOpen, `SELECT k, v FROM rlmpl_kv WHERE k >= ? ORDER BY k LIMIT ?`},
		{&s.descTo, `SELECT k, v FROM rlmpl_kv WHERE k >= ? AND k < ? ORDER BY k DESC LIMIT ?`},
		{&s.descOpen, `SELECT k, v FROM rlmpl_kv WHERE k >= ? ORDER BY k DESC LIMIT ?`},
		{&s.prefetch, `SELECT r.key, k, v FROM json_each(?) AS r
			JOIN rlmpl_kv ON k >= unhex(r.value ->> 0) AND k < unhex(r.value ->> 1) ORDER BY r.key, k`},
	})
}

// prepared is a statement to prepare once, and where to keep it.
type prepared struct {
	stmt **sql.Stmt
	sql  string
}

// prepareAll prepares the statements ps on db.
func prepareAll(ctx context.Context, db *sql.DB, ps []prepared) error {
	for _, p := range ps {
		var err error
		if *p.stmt, err = db.PrepareContext(ctx, p.sql); err != nil {
			return err
		}
	}
	return nil
}

func (s *sqliteKV) View(fn func(kvTxn) error) error {
	tx, err := s.db.BeginTx(s.ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return s.failed(err)
	}
	defer tx.Rollback()
	return s.failed(fn(&sqliteTxn{kv: s, tx: tx}))
}

// Update joins fn to the group commit (group.go).
func (s *sqliteKV) Update(fn func(kvTxn) error) error {
	return s.group.update(fn, func(fn func(kvTxn) error) error {
		return s.write(func(tx *sql.Tx) error { return fn(&sqliteTxn{kv: s, tx: tx}) })
	})
}

// write runs fn in one BEGIN IMMEDIATE transaction, committed when fn
// returns nil, holding the process's writeMu and every process's write
// lock.
func (s *sqliteKV) write(fn func(*sql.Tx) error) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if err := s.lock.lockWrites(); err != nil {
		return err
	}
	defer s.lock.unlockWrites()
	tx, err := s.db.BeginTx(s.ctx, nil)
	if err != nil {
		return s.failed(err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return s.failed(err)
	}
	return s.failed(tx.Commit())
}

// failed names a full disk: SQLite rolled the write back.
func (s *sqliteKV) failed(err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_FULL {
		return fmt.Errorf("%w: %s: %v", ErrNoSpace, s.path, err)
	}
	return err
}

// lockWrites: Updates already run one after another (write, group.go).
func (s *sqliteKV) lockWrites(uint64) func() { return func() {} }

func (s *sqliteKV) Close() error {
	s.cancel()
	s.listenMu.Lock()
	done := s.listenDone
	s.listenMu.Unlock()
	if done != nil {
		<-done
	}
	return errors.Join(s.db.Close(), s.lock.close())
}

// listen implements peers: a goroutine reads the data version when the
// WAL is written (walWatch: every commit of every process writes it), or
// every pollEvery where that cannot be watched, and calls lost when it
// changed (SQLite does not say which conversations did, so every waiter
// reads its head again). A watched store still reads it every
// pollEvery×20, should an event be missed.
func (s *sqliteKV) listen(_ func(uint64), lost func()) error {
	s.listenMu.Lock()
	defer s.listenMu.Unlock()
	if s.listening {
		return nil
	}
	conn, err := s.db.Conn(s.ctx)
	if err != nil {
		return fmt.Errorf("store: listen: %w", err)
	}
	version := func() (int64, error) {
		var v int64
		err := conn.QueryRowContext(s.ctx, `PRAGMA data_version`).Scan(&v)
		return v, err
	}
	last, err := version()
	if err != nil {
		conn.Close()
		return fmt.Errorf("store: listen: %w", err)
	}
	writes := make(chan struct{}, 1)
	every := s.pollEvery
	w, err := newWALWatch(s.path)
	watching := make(chan struct{}) // closed when the watch's reader ends
	if err == nil {
		every *= 20
		go func() {
			defer close(watching)
			for w.wait() {
				select {
				case writes <- struct{}{}:
				default:
				}
			}
		}()
	} else {
		close(watching)
	}
	s.listening, s.listenDone = true, make(chan struct{})
	go func() {
		defer close(s.listenDone)
		defer conn.Close()
		defer func() { w.close(); <-watching }()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-s.ctx.Done():
				return
			case <-writes:
			case <-t.C:
			}
			if v, err := version(); err == nil && v != last {
				last = v
				lost()
			}
		}
	}()
	return nil
}

// lockTurn implements peers: a byte of the lock file (lockfile_linux.go).
func (s *sqliteKV) lockTurn(ctx context.Context, _ string, num uint64) (func(), error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(s.ctx, cancel)
	defer stop()
	unlock, err := s.lock.lockTurn(ctx, num)
	if err != nil && s.ctx.Err() != nil {
		return nil, ErrClosed
	}
	return unlock, err
}

func (s *sqliteKV) tryLockTurn(_ context.Context, _ string, num uint64) (func(), bool, error) {
	return s.lock.tryLockTurn(num)
}

// sqliteTxn is a transaction of a sqliteKV. Writes go to the database at
// once (no round trip to save), so reads see them.
type sqliteTxn struct {
	kv    *sqliteKV
	tx    *sql.Tx
	ahead kvReadAhead
	// pending are the conversations this transaction marked unindexed
	// (sqlitesearch.go).
	pending map[uint64]bool
}

func (t *sqliteTxn) stmt(s *sql.Stmt) *sql.Stmt { return t.tx.StmtContext(t.kv.ctx, s) }

func (t *sqliteTxn) Get(key []byte) ([]byte, error) {
	if held, v, err := t.ahead.get(key); held {
		return v, err
	}
	var v []byte
	err := t.stmt(t.kv.get).QueryRowContext(t.kv.ctx, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errKeyNotFound
	}
	if v == nil && err == nil {
		v = []byte{}
	}
	return v, err
}

func (t *sqliteTxn) Set(key, value []byte) error {
	if value == nil {
		value = []byte{} // database/sql sends a nil slice as NULL
	}
	t.ahead.drop()
	_, err := t.stmt(t.kv.set).ExecContext(t.kv.ctx, key, value)
	return err
}

func (t *sqliteTxn) Delete(key []byte) error {
	t.ahead.drop()
	_, err := t.stmt(t.kv.del).ExecContext(t.kv.ctx, key)
	return err
}

// prefetch reads the ranges [lo, hi) (each hi non-nil) in one statement,
// so that the Gets and Iterates a search makes within them (a hit, its
// neighbours, their token counts) cost no statement each.
func (t *sqliteTxn) prefetch(ranges [][2][]byte) error {
	bounds := make([][2]string, len(ranges))
	for i, r := range ranges {
		bounds[i] = [2]string{hex.EncodeToString(r[0]), hex.EncodeToString(r[1])}
	}
	rows, err := t.stmt(t.kv.prefetch).QueryContext(t.kv.ctx, jsonList(bounds))
	if err != nil {
		return err
	}
	defer rows.Close()
	read := t.ahead.start(ranges)
	for rows.Next() {
		var i int
		var k, v []byte
		if err := rows.Scan(&i, &k, &v); err != nil {
			return err
		}
		if v == nil {
			v = []byte{}
		}
		read.add(i, k, v)
	}
	return rows.Err()
}

// Iterate reads the range in pages (iteratePaged), as on PostgreSQL.
func (t *sqliteTxn) Iterate(lo, hi []byte, reverse bool, fn func(key, value []byte) (bool, error)) error {
	if done, err := t.ahead.iterate(lo, hi, reverse, fn); done {
		return err
	}
	return iteratePaged(lo, hi, reverse, t.page, fn)
}

func (t *sqliteTxn) page(lo, hi []byte, reverse bool, n int) (keys, vals [][]byte, err error) {
	var rows *sql.Rows
	ctx := t.kv.ctx
	switch {
	case hi == nil && reverse:
		rows, err = t.stmt(t.kv.descOpen).QueryContext(ctx, lo, n)
	case hi == nil:
		rows, err = t.stmt(t.kv.ascOpen).QueryContext(ctx, lo, n)
	case reverse:
		rows, err = t.stmt(t.kv.descTo).QueryContext(ctx, lo, hi, n)
	default:
		rows, err = t.stmt(t.kv.ascTo).QueryContext(ctx, lo, hi, n)
	}
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var k, v []byte
		if err := rows.Scan(&k, &v); err != nil {
			return nil, nil, err
		}
		if v == nil {
			v = []byte{}
		}
		keys, vals = append(keys, k), append(vals, v)
	}
	return keys, vals, rows.Err()
}
