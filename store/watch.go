package store

import (
	"context"
	"encoding/binary"
	"sync"
)

// Live conversations: [DB.Wait] blocks until a conversation has messages
// after a sequence. Appends of this process wake waiters directly (watch
// below); on a store other processes share, the backend's peers deliver
// theirs (listen: PostgreSQL's NOTIFY after each commit, SQLite's data
// version when its WAL is written).

// watch maps a conversation number to a channel closed when the
// conversation changes. Waiters take the channel before reading the head,
// so a change between the read and the wait is not missed.
type watch struct {
	mu    sync.Mutex // protects the fields below
	chans map[uint64]chan struct{}
}

// channel returns the channel that is closed at the next change of num.
func (w *watch) channel(num uint64) <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.chans == nil {
		w.chans = map[uint64]chan struct{}{}
	}
	ch, ok := w.chans[num]
	if !ok {
		ch = make(chan struct{})
		w.chans[num] = ch
	}
	return ch
}

// changed wakes the waiters of num.
func (w *watch) changed(num uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if ch, ok := w.chans[num]; ok {
		close(ch)
		delete(w.chans, num)
	}
}

// changedAll wakes every waiter (after notifications may have been lost:
// the listener's connection dropped).
func (w *watch) changedAll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for num, ch := range w.chans {
		close(ch)
		delete(w.chans, num)
	}
}

// headNum returns the conversation number of a head key (keys.go), and
// false for any other key.
func headNum(key []byte) (uint64, bool) {
	if len(key) != 9 || key[0] != kindHead {
		return 0, false
	}
	return binary.BigEndian.Uint64(key[1:]), true
}

// Wait blocks until conversation conv has a message after sequence after
// (0: any message) and returns its last sequence, or returns ctx's error
// with the last sequence it saw. It sees appends of this process on any
// store and of every process sharing a PostgreSQL store (LISTEN/NOTIFY:
// no polling) or an SQLite one (its data version, read when the WAL is
// written). Returns [ErrNotFound] for an unknown
// conversation, [ErrClosed] after Close (waiters then wake),
// [ErrUnavailable] when a PostgreSQL store cannot listen.
func (db *DB) Wait(ctx context.Context, conv string, after int64) (int64, error) {
	if err := db.enter(); err != nil {
		return 0, err
	}
	cs, err := db.conv(conv)
	closing := db.closing
	db.leave()
	if err != nil {
		return 0, err
	}
	if err := db.peers.listen(db.remoteChange, db.watch.changedAll); err != nil {
		return 0, err
	}
	for {
		ch := db.watch.channel(cs.num)
		head, err := db.head(cs)
		if err != nil || head > after {
			return head, err
		}
		select {
		case <-ch:
		case <-closing:
			return head, ErrClosed
		case <-ctx.Done():
			return head, ctx.Err()
		}
	}
}

// head reads cs's last sequence from the store (another process may have
// appended) and advances cs's view of it.
func (db *DB) head(cs *convState) (int64, error) {
	if err := db.enter(); err != nil {
		return 0, err
	}
	defer db.leave()
	var h headRec
	err := db.kv.View(func(t kvTxn) error {
		var err error
		h, err = getHead(t, cs.num)
		return err
	})
	if err != nil {
		return 0, err
	}
	cs.advance(h.lastSeq)
	return h.lastSeq, nil
}

// remoteChange is the listener's callback: conversation num changed.
func (db *DB) remoteChange(num uint64) { db.watch.changed(num) }
