package store

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// PostgresOptions selects a store on PostgreSQL ([Options.Postgres]): the
// same records, errors and guarantees as badger, shared by every process
// that opens the same database and schema.
type PostgresOptions struct {
	// DSN is a libpq connection string or a postgres:// URL. The store's
	// tables live in the connection's current schema (set search_path in
	// the DSN to keep several stores in one database).
	DSN string
	// MaxConns is the size of the connection pool. Zero means 4.
	MaxConns int32
	// StatementTimeout bounds each statement on the server. The client
	// waits for a statement's reply at most StatementTimeout +
	// ConnectTimeout (a frozen connection: the server never saw it, or its
	// answer never came) before it drops the connection. Zero means 30s.
	StatementTimeout time.Duration
	// ConnectTimeout bounds establishing a connection, a pooled
	// connection's health check, the network's share of a statement's
	// wait (above) and the retries of a call whose connection was lost.
	// Zero means 10s.
	ConnectTimeout time.Duration
}

func (o PostgresOptions) withDefaults() (PostgresOptions, error) {
	switch {
	case o.DSN == "":
		return o, invalid("Options.Postgres.DSN", "must be set")
	case o.MaxConns < 0:
		return o, invalid("Options.Postgres.MaxConns", "must be >= 0 (got %d)", o.MaxConns)
	case o.StatementTimeout < 0:
		return o, invalid("Options.Postgres.StatementTimeout", "must be >= 0 (got %v)", o.StatementTimeout)
	case o.ConnectTimeout < 0:
		return o, invalid("Options.Postgres.ConnectTimeout", "must be >= 0 (got %v)", o.ConnectTimeout)
	}
	if o.MaxConns == 0 {
		o.MaxConns = 4
	}
	if o.StatementTimeout == 0 {
		o.StatementTimeout = 30 * time.Second
	}
	if o.ConnectTimeout == 0 {
		o.ConnectTimeout = 10 * time.Second
	}
	return o, nil
}

// The PostgreSQL backend: one bytea table (kvStore), search documents in
// the database written with their messages (pgsearch.go), NOTIFY and
// advisory locks between the processes that share it (peers: watch.go,
// turnlock.go). Spec: postgres://…, postgresql://…, or postgres: and a
// libpq keyword string.
const schemePostgres = "postgres"

func init() {
	register(&driver{
		scheme: schemePostgres, aliases: []string{"postgresql"}, shared: true, kind: "postgres",
		target: func(text, rest string) (string, error) {
			if strings.HasPrefix(rest, "//") {
				return text, nil // a URL is its own DSN
			}
			if strings.TrimSpace(rest) == "" {
				return "", invalid("spec", "%q names no database (postgres://USER@HOST/DB, or postgres: and a libpq connection string)", text)
			}
			return rest, nil
		},
		text: func(dsn string) string {
			if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
				return RedactDSN(dsn)
			}
			return schemePostgres + ":" + RedactDSN(dsn)
		},
		options: postgresOptions,
		open:    openPostgresBackend,
		probe:   probePostgres,
		status: func(ctx context.Context, o Options) (SchemaStatus, error) {
			return PostgresSchemaStatus(ctx, *o.Postgres)
		},
		migrate: func(ctx context.Context, o Options) (SchemaStatus, error) { return MigratePostgres(ctx, *o.Postgres) },
	})
}

// postgresOptions gives a postgres spec its Options.Postgres: the pool and
// timeouts o sets (their defaults filled in), and the spec's DSN.
func postgresOptions(spec Spec, o *Options) error {
	pg := PostgresOptions{}
	if o.Postgres != nil {
		if o.Postgres.DSN != "" && o.Postgres.DSN != spec.Target {
			return invalid("Options.Postgres.DSN", "must be empty or the spec's with a postgres spec")
		}
		pg = *o.Postgres
	}
	pg.DSN = spec.Target
	pg, err := pg.withDefaults()
	o.Postgres = &pg
	return err
}

func openPostgresBackend(o Options) (backend, error) {
	kv, err := openPostgres(*o.Postgres)
	if err != nil {
		if errors.Is(err, ErrInvalid) || errors.Is(err, ErrSchemaNewer) {
			return backend{}, err
		}
		return backend{}, fmt.Errorf("store: open %v: %w", o.Postgres, err)
	}
	return backend{kv: kv, peers: kv, search: func(db *DB) (searcher, error) { return openPGSearch(db, kv) }}, nil
}

// probePostgres reads the schema's version without creating anything: a
// schema that holds no store is Absent.
func probePostgres(ctx context.Context, o Options) (Presence, error) {
	st, err := PostgresSchemaStatus(ctx, *o.Postgres)
	if err != nil {
		return Absent, err
	}
	if st.Version == 0 {
		return Absent, nil
	}
	return Present, nil
}

// pgKV implements kvStore on one PostgreSQL table, rlmpl_kv(k bytea
// primary key, v bytea): bytea sorts bytewise, as the seam requires.
//
// Update runs at SERIALIZABLE and retries serialization failures and
// deadlocks: the store's writes read what they depend on (a conversation's
// head record, the next conversation number) through the same transaction,
// so PostgreSQL's conflict detection keeps sequences dense across
// processes with no locking protocol of our own. View runs at REPEATABLE
// READ, READ ONLY: one snapshot, like badger's.
type pgKV struct {
	pool *pgxpool.Pool
	// ctx is cancelled by Close, so a statement still running then (none
	// should be: DB.Close waits for calls in flight) ends.
	ctx    context.Context
	cancel context.CancelFunc
	// retryFor bounds the retries of a transaction that lost its
	// connection, and a ping (PostgresOptions.ConnectTimeout).
	retryFor time.Duration
	// silence is how long the listening connection may stay silent before
	// it is pinged (PostgresOptions.StatementTimeout).
	silence time.Duration
	// channel is the NOTIFY channel of the store's schema: rlmpl_ and the
	// md5 of the schema's name.
	channel string

	idleLocks chan *pgx.Conn // turn-lock connections kept between turns (turnlock.go)
	writers   sync.Map       // conversation number → *sync.Mutex (lockWrites)

	listenOnce sync.Mutex // protects the fields below
	listening  bool
	done       chan struct{} // closed when the listener goroutine ends
}

var (
	_ kvStore = (*pgKV)(nil)
	_ peers   = (*pgKV)(nil)
)

// lockWrites queues this process's writes to conversation num: PostgreSQL
// runs transactions side by side, and two appends to one conversation
// would fail serialization and retry.
func (p *pgKV) lockWrites(num uint64) func() {
	v, _ := p.writers.LoadOrStore(num, new(sync.Mutex))
	mu := v.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock
}

// maxSerializationRetries bounds the retry of an Update that PostgreSQL
// aborted as a serialization failure or deadlock, with the statement
// timeout: it retries while either allows (on a loaded machine four
// processes appending to one conversation could lose 100 races in a row);
// the backoff between attempts grows from 1ms to 64ms with jitter, so a
// hot conversation's writers spread out instead of colliding again.
const maxSerializationRetries = 100

// poolConfig is the connection configuration of the store o names.
func poolConfig(o PostgresOptions) (*pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(o.DSN)
	if err != nil {
		// pgx's message may quote the DSN, password included.
		return nil, invalid("Options.Postgres.DSN", "not a PostgreSQL connection string or URL")
	}
	cfg.MaxConns = o.MaxConns
	cfg.ConnConfig.ConnectTimeout = o.ConnectTimeout
	// A connection that stops answering (a partition without a reset, a
	// stalled server) must not hold a call: every statement waits at most
	// the statement timeout plus the connect timeout for its reply, a
	// pooled connection idle for a second is pinged before use and dropped
	// when it does not answer within the connect timeout, and an idle
	// connection whose peer is gone is found by TCP keepalive (probes
	// after 15s of silence, 5s apart, 3 unanswered end it).
	cfg.ConnConfig.Tracer = replyDeadline(o.StatementTimeout + o.ConnectTimeout)
	cfg.PingTimeout = o.ConnectTimeout
	cfg.ConnConfig.DialFunc = (&net.Dialer{KeepAliveConfig: net.KeepAliveConfig{
		Enable: true, Idle: 15 * time.Second, Interval: 5 * time.Second, Count: 3,
	}}).DialContext
	cfg.BeforeClose = closeConn
	rp := cfg.ConnConfig.RuntimeParams
	// An acknowledged write is on disk whatever the server's default.
	rp["synchronous_commit"] = "on"
	rp["statement_timeout"] = strconv.FormatInt(o.StatementTimeout.Milliseconds(), 10)
	// The store's statements are short; JIT compiling one the planner
	// overestimates (a range join it guesses at half a million rows) cost
	// 12–80 ms for a query that runs in 1.
	rp["jit"] = "off"
	if rp["application_name"] == "" {
		rp["application_name"] = "rlmpl"
	}
	return cfg, nil
}

func openPostgres(o PostgresOptions) (*pgKV, error) {
	cfg, err := poolConfig(o)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		cancel()
		return nil, err
	}
	kv := &pgKV{pool: pool, ctx: ctx, cancel: cancel, retryFor: o.ConnectTimeout, silence: o.StatementTimeout, idleLocks: make(chan *pgx.Conn, maxIdleLockConns)}
	if err := kv.migrate(); err != nil {
		kv.Close()
		if errors.Is(err, ErrNoSchema) {
			return nil, err // what to do, not a failure to reach the server
		}
		return nil, unavailable(err)
	}
	if err := pool.QueryRow(ctx, `SELECT 'rlmpl_' || md5(current_schema())`).Scan(&kv.channel); err != nil {
		kv.Close()
		return nil, unavailable(err)
	}
	return kv, nil
}

func (p *pgKV) View(fn func(kvTxn) error) error {
	return p.do(pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, fn)
}

func (p *pgKV) Update(fn func(kvTxn) error) error {
	return p.do(pgx.TxOptions{IsoLevel: pgx.Serializable}, fn)
}

// do runs fn in a transaction of mode o and retries what is safe to retry:
//
//   - a serialization failure or deadlock (PostgreSQL aborted the
//     transaction; up to maxSerializationRetries times or for the
//     statement timeout, whichever lasts longer, 1ms to 64ms apart);
//   - a lost connection (the server restarting, a terminated backend, a
//     network fault, a statement whose reply did not come in time: see
//     replyDeadline) before COMMIT was sent, or at COMMIT when pgx knows
//     the COMMIT never reached the server (pgconn.SafeToRetry), or in a
//     read-only transaction: the transaction did not commit, so running
//     it again writes nothing twice. Retries back off from 50ms to 1s and
//     stop after retryFor (the connect timeout), returning the error
//     wrapped in ErrUnavailable.
//
// A connection lost during COMMIT otherwise leaves the outcome unknown:
// the error (ErrUnavailable) goes to the caller, whose idempotency key
// makes its own retry safe.
func (p *pgKV) do(o pgx.TxOptions, fn func(kvTxn) error) error {
	backoff, connBackoff := time.Millisecond, 50*time.Millisecond
	ctx := p.ctx
	var lostAt time.Time
	start := time.Now()
	for i := 0; ; i++ {
		committing, err := p.run(ctx, o, fn)
		if pgconn.Timeout(err) && p.ctx.Err() == nil {
			p.reset()
		}
		switch {
		case err == nil:
			return nil
		case p.ctx.Err() != nil:
			return err
		case retryable(err) && (i < maxSerializationRetries || time.Since(start) < p.silence):
			sleep(p.ctx, backoff/2+rand.N(backoff))
			backoff = min(2*backoff, 64*time.Millisecond)
		case connLost(err) && (!committing || o.AccessMode == pgx.ReadOnly || pgconn.SafeToRetry(err)):
			if lostAt.IsZero() {
				// Retries run under the retry bound, however many
				// connections they try.
				lostAt = time.Now()
				var cancel context.CancelFunc
				ctx, cancel = context.WithDeadline(p.ctx, lostAt.Add(p.retryFor))
				defer cancel()
			}
			left := p.retryFor - time.Since(lostAt)
			if left <= 0 {
				return unavailable(err)
			}
			sleep(p.ctx, min(connBackoff, left))
			connBackoff = min(2*connBackoff, time.Second)
		default:
			return unavailable(err)
		}
	}
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// retryable reports a serialization failure or a deadlock: PostgreSQL
// aborted the transaction and running it again may succeed.
func retryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01")
}

// run runs fn in one transaction: committed when fn returns nil, rolled
// back otherwise (fn's error is returned as is, so sentinels survive).
// committing is true when the error came from COMMIT, whose outcome a
// lost connection leaves unknown.
func (p *pgKV) run(ctx context.Context, o pgx.TxOptions, fn func(kvTxn) error) (committing bool, err error) {
	tx, err := p.pool.BeginTx(ctx, o)
	if err != nil {
		return false, err
	}
	t := &pgTxn{ctx: ctx, tx: tx, channel: p.channel}
	if err := fn(t); err != nil {
		_ = tx.Rollback(ctx)
		return false, err
	}
	if err := t.flush(); err != nil {
		_ = tx.Rollback(ctx)
		return false, err
	}
	if err := tx.Commit(ctx); err != nil {
		return true, err
	}
	p.announce(t.moved)
	return true, nil
}

// announce NOTIFYs the store's listeners that the conversations nums
// moved, after their transaction committed, in a transaction of its own
// with synchronous_commit off: PostgreSQL serializes the commits of
// transactions that notify (a database-wide lock held through commit), so
// a NOTIFY inside a synced append would put every writer's WAL flush
// under that lock (docs/performance.md has both, 8 writers). A
// notification is not data: one lost (the process dies right after the commit, or this
// statement fails) delays waiters to the next append, nothing else.
func (p *pgKV) announce(nums []uint64) {
	if len(nums) == 0 {
		return
	}
	var sb strings.Builder
	sb.WriteString("BEGIN; SET LOCAL synchronous_commit = off;")
	for _, n := range nums {
		// The channel is rlmpl_ and hex; the payload digits: nothing to quote.
		fmt.Fprintf(&sb, " NOTIFY %s, '%d';", p.channel, n)
	}
	sb.WriteString(" COMMIT")
	_, _ = p.pool.Exec(p.ctx, sb.String(), pgx.QueryExecModeSimpleProtocol)
}

// reset drops every connection of the store, pooled or kept for turn
// locks, once one has stopped answering: the others were opened over the
// same path and are as suspect (those in use are dropped when released),
// and waiting for each to fail in turn would multiply the wait.
func (p *pgKV) reset() {
	p.pool.Reset()
	p.closeLockConns()
}

// closeConn closes conn and its socket at once. When pgx gives up on a
// connection (a statement or ping past its deadline) it drains the socket
// for up to 15s before closing it, and the pool waits for that when it
// closes or resets: a frozen connection would hold Close that long.
func closeConn(conn *pgx.Conn) {
	conn.Close(context.Background())
	conn.PgConn().Conn().Close()
}

// replyDeadline is how long the client waits for the reply to one
// statement, batch or COMMIT (the statement timeout plus the connect
// timeout), enforced as a pgx tracer: pgx runs each statement under the
// context its start hook returns, and ends a connection whose context
// ends mid-statement. The server's statement_timeout cannot do this: it
// never sees a statement sent into a frozen connection.
type replyDeadline time.Duration

type replyCancelKey struct{}

func (d replyDeadline) start(ctx context.Context) context.Context {
	ctx, cancel := context.WithTimeout(ctx, time.Duration(d))
	return context.WithValue(ctx, replyCancelKey{}, cancel)
}

func (d replyDeadline) end(ctx context.Context) {
	if cancel, ok := ctx.Value(replyCancelKey{}).(context.CancelFunc); ok {
		cancel()
	}
}

func (d replyDeadline) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return d.start(ctx)
}

func (d replyDeadline) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryEndData) {
	d.end(ctx)
}

func (d replyDeadline) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return d.start(ctx)
}

func (d replyDeadline) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}

func (d replyDeadline) TraceBatchEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchEndData) {
	d.end(ctx)
}

var (
	_ pgx.QueryTracer = replyDeadline(0)
	_ pgx.BatchTracer = replyDeadline(0)
)

func (p *pgKV) Close() error {
	p.cancel()
	p.pool.Close()
	p.closeLockConns()
	p.listenOnce.Lock()
	done := p.done
	p.listenOnce.Unlock()
	if done != nil {
		<-done
	}
	return nil
}

// listen implements peers: one connection of its own (outside the
// pool) LISTENs on the schema's channel. When it drops, the listener
// reconnects (50ms to 1s apart) until Close, and calls lost once it
// listens again, since notifications sent meanwhile are gone.
func (p *pgKV) listen(changed func(num uint64), lost func()) error {
	p.listenOnce.Lock()
	defer p.listenOnce.Unlock()
	if p.listening {
		return nil
	}
	conn, err := p.listenConn()
	if err != nil {
		return fmt.Errorf("store: listen: %w", unavailable(err))
	}
	p.listening, p.done = true, make(chan struct{})
	go func() {
		defer close(p.done)
		backoff := 50 * time.Millisecond
		for {
			for {
				n, err := p.notification(conn)
				if err != nil {
					break
				}
				if n == nil {
					continue
				}
				if num, err := strconv.ParseUint(n.Payload, 10, 64); err == nil {
					changed(num)
				}
			}
			closeConn(conn)
			for conn = nil; conn == nil; {
				if p.ctx.Err() != nil {
					return
				}
				sleep(p.ctx, backoff)
				backoff = min(2*backoff, time.Second)
				conn, _ = p.listenConn()
			}
			backoff = 50 * time.Millisecond
			lost()
		}
	}()
	return nil
}

// notification waits for the next notification on conn. After a statement
// timeout of silence it pings the server and returns nil when it answers
// within the connect timeout, an error (the connection to replace) when
// it does not: a connection whose peer went silent (a partition without a
// reset) would otherwise hold the listener, and every waiter wake-up,
// forever.
func (p *pgKV) notification(conn *pgx.Conn) (*pgconn.Notification, error) {
	ctx, cancel := context.WithTimeout(p.ctx, p.silence)
	n, err := conn.WaitForNotification(ctx)
	cancel()
	if err == nil || !pgconn.Timeout(err) || p.ctx.Err() != nil {
		return n, err
	}
	ctx, cancel = context.WithTimeout(p.ctx, p.retryFor)
	defer cancel()
	return nil, conn.Ping(ctx)
}

// listenConn connects as the pool does and LISTENs on the store's
// channel.
func (p *pgKV) listenConn() (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(p.ctx, p.pool.Config().ConnConfig)
	if err != nil {
		return nil, err
	}
	if _, err := conn.Exec(p.ctx, `LISTEN `+pgx.Identifier{p.channel}.Sanitize()); err != nil {
		closeConn(conn)
		return nil, err
	}
	return conn, nil
}

// pgTxn is a transaction of a pgKV. Writes are buffered and sent as one
// batch (one round trip) before the next read and before commit, so an
// append costs a few round trips, not one per key; reads see the
// transaction's own writes.
type pgTxn struct {
	ctx     context.Context
	tx      pgx.Tx
	channel string
	pending pgx.Batch
	moved   []uint64 // conversations whose head this transaction wrote
	ahead   kvReadAhead
}

// prefetch reads the ranges [lo, hi) (each hi non-nil) in one query, so
// that the Gets and Iterates a search makes within them (a hit, its
// neighbours, their token counts) cost no round trip each.
func (t *pgTxn) prefetch(ranges [][2][]byte) error {
	if err := t.flush(); err != nil {
		return err
	}
	los, his := make([][]byte, len(ranges)), make([][]byte, len(ranges))
	for i, r := range ranges {
		los[i], his[i] = r[0], r[1]
	}
	rows, err := t.tx.Query(t.ctx, `SELECT r.i, k, v FROM unnest($1::bytea[], $2::bytea[]) WITH ORDINALITY AS r(lo, hi, i)
		JOIN rlmpl_kv ON k >= r.lo AND k < r.hi ORDER BY r.i, k`, los, his)
	if err != nil {
		return err
	}
	defer rows.Close()
	read := t.ahead.start(ranges)
	for rows.Next() {
		var i int64
		var k, v []byte
		if err := rows.Scan(&i, &k, &v); err != nil {
			return err
		}
		read.add(int(i-1), k, v)
	}
	return rows.Err()
}

func (t *pgTxn) flush() error {
	if t.pending.Len() == 0 {
		return nil
	}
	err := t.tx.SendBatch(t.ctx, &t.pending).Close()
	t.pending = pgx.Batch{}
	return err
}

func (t *pgTxn) Get(key []byte) ([]byte, error) {
	if held, v, err := t.ahead.get(key); held {
		return v, err
	}
	if err := t.flush(); err != nil {
		return nil, err
	}
	var v []byte
	err := t.tx.QueryRow(t.ctx, `SELECT v FROM rlmpl_kv WHERE k = $1`, key).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, errKeyNotFound
	}
	if v == nil && err == nil {
		v = []byte{}
	}
	return v, err
}

func (t *pgTxn) Set(key, value []byte) error {
	if value == nil {
		value = []byte{} // pgx sends a nil slice as NULL
	}
	t.ahead.drop()
	t.pending.Queue(`INSERT INTO rlmpl_kv (k, v) VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET v = excluded.v`, key, value)
	if num, ok := headNum(key); ok {
		// A conversation's head moved: tell the listeners (watch.go) once
		// this transaction has committed.
		t.moved = append(t.moved, num)
	}
	return nil
}

func (t *pgTxn) Delete(key []byte) error {
	t.ahead.drop()
	t.pending.Queue(`DELETE FROM rlmpl_kv WHERE k = $1`, key)
	return nil
}

// Range queries, by direction and whether the range has an upper bound.
const (
	pgAscTo    = `SELECT k, v FROM rlmpl_kv WHERE k >= $1 AND k < $2 ORDER BY k LIMIT $3`
	pgAscOpen  = `SELECT k, v FROM rlmpl_kv WHERE k >= $1 ORDER BY k LIMIT $2`
	pgDescTo   = `SELECT k, v FROM rlmpl_kv WHERE k >= $1 AND k < $2 ORDER BY k DESC LIMIT $3`
	pgDescOpen = `SELECT k, v FROM rlmpl_kv WHERE k >= $1 ORDER BY k DESC LIMIT $2`
)

// Iterate reads the range in pages (iteratePaged), its buffered writes
// flushed first.
func (t *pgTxn) Iterate(lo, hi []byte, reverse bool, fn func(key, value []byte) (bool, error)) error {
	if done, err := t.ahead.iterate(lo, hi, reverse, fn); done {
		return err
	}
	if err := t.flush(); err != nil {
		return err
	}
	return iteratePaged(lo, hi, reverse, t.page, fn)
}

func (t *pgTxn) page(lo, hi []byte, reverse bool, n int) (keys, vals [][]byte, err error) {
	var rows pgx.Rows
	switch {
	case hi == nil && reverse:
		rows, err = t.tx.Query(t.ctx, pgDescOpen, lo, n)
	case hi == nil:
		rows, err = t.tx.Query(t.ctx, pgAscOpen, lo, n)
	case reverse:
		rows, err = t.tx.Query(t.ctx, pgDescTo, lo, hi, n)
	default:
		rows, err = t.tx.Query(t.ctx, pgAscTo, lo, hi, n)
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
		keys, vals = append(keys, k), append(vals, v)
	}
	return keys, vals, rows.Err()
}

// RedactDSN returns dsn with every password in it replaced by xxxxx: a
// URL's user password, and the value of any setting whose name ends in
// password (password=, sslpassword=; in a URL's query or a keyword
// string). Whatever shows a DSN (outcomes, events, receipts, logs, the
// CLI) shows it through here. It parses nothing and never fails, so a DSN
// the driver rejects is redacted too.
func RedactDSN(dsn string) string {
	// A URL's authority ends at the first /, ? or #, and its user info at
	// the last @ before that (as net/url reads it).
	if i := strings.Index(dsn, "://"); i >= 0 {
		rest := dsn[i+3:]
		end := strings.IndexAny(rest, "/?#")
		if end < 0 {
			end = len(rest)
		}
		if at := strings.LastIndex(rest[:end], "@"); at >= 0 {
			if colon := strings.Index(rest[:at], ":"); colon >= 0 {
				dsn = dsn[:i+3] + rest[:colon+1] + "xxxxx" + rest[at:]
			}
		}
	}
	return passwordSetting.ReplaceAllString(dsn, "${1}xxxxx")
}

// passwordSetting is a setting whose name ends in password, and its value:
// quoted (libpq's keyword strings), or up to a space or the next URL
// query parameter.
var passwordSetting = regexp.MustCompile(`(?i)(password\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s&]*)`)

// String names the store in errors without its DSN (which may carry a
// password).
func (o PostgresOptions) String() string {
	cfg, err := pgconn.ParseConfig(o.DSN)
	if err != nil {
		return "postgres"
	}
	return fmt.Sprintf("postgres %s:%d/%s", cfg.Host, cfg.Port, cfg.Database)
}
