package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// kvLocker is implemented by a kvStore shared with other processes
// (PostgreSQL): lockConversation blocks until this process holds the
// cross-process lock named by id, or ctx ends.
type kvLocker interface {
	lockConversation(ctx context.Context, id string) (unlock func(), err error)
	// tryLockConversation takes the lock only if no process holds it:
	// ok is false, and unlock nil, when one does.
	tryLockConversation(ctx context.Context, id string) (unlock func(), ok bool, err error)
}

// turnLockKey is the first key of the session advisory lock of a
// conversation's turns; the second is a hash of the schema and the
// conversation id (a collision only makes two conversations' turns take
// turns).
const turnLockKey = 0x726c7475 // "rltu"

// LockConversation blocks until the caller holds conversation conv's turn
// lock, or ctx ends (its error is returned). Managed turns hold it from
// their user message to their receipt, so turns on one conversation run
// one at a time: among the goroutines of this process on every store,
// and among every process sharing a PostgreSQL store (a session advisory
// lock, held on a connection of its own outside the pool, so waiting
// turns never starve the pool). unlock releases it; call it once. Appends
// and reads do not take the lock. NB: if the lock's connection drops (the
// server restarts), PostgreSQL releases the lock while the turn goes on.
// Returns [ErrNotFound] for an unknown conversation.
func (db *DB) LockConversation(ctx context.Context, conv string) (unlock func(), err error) {
	if err := db.enter(); err != nil {
		return nil, err
	}
	cs, err := db.conv(conv)
	db.leave()
	if err != nil {
		return nil, err
	}
	select {
	case cs.turn <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-db.closing:
		return nil, ErrClosed
	}
	local := func() { <-cs.turn }
	l, ok := db.kv.(kvLocker)
	if !ok {
		return local, nil
	}
	remote, err := l.lockConversation(ctx, conv)
	if err != nil {
		local()
		return nil, err
	}
	return func() { remote(); local() }, nil
}

// TryLockConversation is LockConversation without the wait: ok is false
// (and unlock nil) when a turn of this process or of another holds the
// lock, so a caller can tell a turn in progress from one that ended.
func (db *DB) TryLockConversation(ctx context.Context, conv string) (unlock func(), ok bool, err error) {
	if err := db.enter(); err != nil {
		return nil, false, err
	}
	cs, err := db.conv(conv)
	db.leave()
	if err != nil {
		return nil, false, err
	}
	select {
	case cs.turn <- struct{}{}:
	default:
		return nil, false, nil
	}
	local := func() { <-cs.turn }
	l, shared := db.kv.(kvLocker)
	if !shared {
		return local, true, nil
	}
	remote, ok, err := l.tryLockConversation(ctx, conv)
	if err != nil || !ok {
		local()
		return nil, false, err
	}
	return func() { remote(); local() }, true, nil
}

// lockConversation takes the conversation's advisory lock on a
// connection of its own, with no statement timeout (a turn may wait for
// another's whole model call): the wait is made of lock statements of at
// most lock_timeout (the statement timeout) each, so that the client's
// deadline for a statement's reply (replyDeadline) still finds a frozen
// connection, and context cancellation or Close end it. Unlocked
// connections are kept for the next lock (up to maxIdleLockConns): a new
// session costs tens of milliseconds.
func (p *pgKV) lockConversation(ctx context.Context, id string) (func(), error) {
	const lock = `SELECT pg_advisory_lock($1, hashtext(current_schema() || '/' || $2))`
	conn, err := p.lockConn(ctx)
	if err != nil {
		return nil, fmt.Errorf("store: turn lock: %w", unavailable(err))
	}
	wait := func() error {
		for {
			_, err := conn.Exec(ctx, lock, turnLockKey, id)
			var pe *pgconn.PgError
			if !errors.As(err, &pe) || pe.Code != "55P03" { // lock_not_available: lock_timeout passed
				return err
			}
			if p.ctx.Err() != nil {
				return ErrClosed
			}
		}
	}
	err = wait()
	if err != nil && ctx.Err() == nil && connLost(err) {
		// A kept connection the server has dropped, or one that stopped
		// answering: once more, on a new one.
		if pgconn.Timeout(err) {
			p.reset()
		}
		closeConn(conn)
		if conn, err = p.newLockConn(ctx); err == nil {
			err = wait()
		}
	}
	if err != nil {
		if conn != nil {
			closeConn(conn)
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if errors.Is(err, ErrClosed) {
			return nil, err
		}
		return nil, fmt.Errorf("store: turn lock: %w", unavailable(err))
	}
	return p.unlocker(conn, id), nil
}

// unlocker releases the advisory lock of id that conn holds, and keeps
// conn for the next lock.
func (p *pgKV) unlocker(conn *pgx.Conn, id string) func() {
	return func() {
		_, err := conn.Exec(p.ctx, `SELECT pg_advisory_unlock($1, hashtext(current_schema() || '/' || $2))`, turnLockKey, id)
		p.keepLockConn(conn, err) // on error, closing the session releases its locks
	}
}

// keepLockConn keeps conn for the next lock, or closes it after an error
// or when enough are kept.
func (p *pgKV) keepLockConn(conn *pgx.Conn, err error) {
	if err == nil {
		select {
		case p.idleLocks <- conn:
			return
		default:
		}
	}
	closeConn(conn)
}

// tryLockConversation takes the conversation's advisory lock if no
// session holds it.
func (p *pgKV) tryLockConversation(ctx context.Context, id string) (func(), bool, error) {
	conn, err := p.lockConn(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("store: turn lock: %w", unavailable(err))
	}
	var ok bool
	err = conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1, hashtext(current_schema() || '/' || $2))`, turnLockKey, id).Scan(&ok)
	if err != nil || !ok {
		p.keepLockConn(conn, err)
		if err != nil {
			return nil, false, fmt.Errorf("store: turn lock: %w", unavailable(err))
		}
		return nil, false, nil
	}
	return p.unlocker(conn, id), true, nil
}

// maxIdleLockConns bounds the turn-lock connections kept between turns.
const maxIdleLockConns = 4

// lockConn returns a kept turn-lock connection, or a new one.
func (p *pgKV) lockConn(ctx context.Context) (*pgx.Conn, error) {
	for {
		select {
		case c := <-p.idleLocks:
			if !c.IsClosed() {
				return c, nil
			}
		default:
			return p.newLockConn(ctx)
		}
	}
}

func (p *pgKV) newLockConn(ctx context.Context) (*pgx.Conn, error) {
	cfg := p.pool.Config().ConnConfig.Copy()
	cfg.RuntimeParams["lock_timeout"] = cfg.RuntimeParams["statement_timeout"]
	cfg.RuntimeParams["statement_timeout"] = "0"
	cfg.RuntimeParams["application_name"] += " turn lock"
	return pgx.ConnectConfig(ctx, cfg)
}

// closeLockConns closes the kept turn-lock connections (at Close).
func (p *pgKV) closeLockConns() {
	for {
		select {
		case c := <-p.idleLocks:
			closeConn(c)
		default:
			return
		}
	}
}
