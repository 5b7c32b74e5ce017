package store

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/dgraph-io/badger/v4"
)

// kvStore is the ordered key-value seam the store is written against. It is
// deliberately small — point reads and writes, ordered range iteration in
// both directions, and serializable read-write and read-only transactions —
// so that a distributed ordered KV (TiKV, FoundationDB, etcd) can replace
// badger by implementing these two interfaces, with no change to the code
// above them. Keys sort bytewise; the layout lives in keys.go.
type kvStore interface {
	// View runs fn in a read-only snapshot transaction.
	View(fn func(kvTxn) error) error
	// Update runs fn in a read-write transaction and commits it; fn may be
	// run more than once if the implementation retries a conflict, and may
	// share its transaction with other Updates' fns (which then run before
	// or after it, as if serially), so it must not have effects outside
	// the transaction.
	Update(fn func(kvTxn) error) error
	// Close releases the store; it is called once.
	Close() error
}

// kvTxn is a transaction of a [kvStore].
type kvTxn interface {
	// Get returns a copy of the value of key, or errKeyNotFound.
	Get(key []byte) ([]byte, error)
	// Set writes key = value (both are retained until commit; do not reuse).
	Set(key, value []byte) error
	// Delete removes key.
	Delete(key []byte) error
	// Iterate calls fn for each key k with lo <= k < hi in ascending order
	// (descending when reverse) until fn returns false or an error, which
	// Iterate returns. key and value are valid only during the call.
	Iterate(lo, hi []byte, reverse bool, fn func(key, value []byte) (bool, error)) error
}

// errKeyNotFound is the kvTxn.Get miss. It never escapes the package.
var errKeyNotFound = errors.New("store: kv: key not found")

// badgerKV implements kvStore on badger.
type badgerKV struct {
	db    *badger.DB
	space *diskGuard // nil in memory
	group groupCommit
}

var _ kvStore = (*badgerKV)(nil)

// maxConflictRetries bounds the retry of a badger ErrConflict. Updates run
// one after another (group.go), so conflicts are not expected; the retry
// is a belt.
const maxConflictRetries = 16

// Badger's memtable count and level-0 table count, which with the memtable
// size bound what it writes without being asked (the disk guard's reserve).
const (
	numMemtables       = 3
	numLevelZeroTables = 5
)

func openBadger(dir string, inMemory, sync bool, log *slog.Logger) (*badgerKV, error) {
	var (
		o        badger.Options
		memtable int64 = 32 << 20
		space    *diskGuard
	)
	if inMemory {
		o = badger.DefaultOptions("").WithInMemory(true)
	} else {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		memtable = memtableSize(dir)
		var err error
		if space, err = newDiskGuard(dir, memtable); err != nil {
			return nil, err
		}
		if err := removeEmptyValueLogs(dir); err != nil {
			return nil, err
		}
		o = badger.DefaultOptions(dir).WithSyncWrites(sync)
	}
	o = o.WithLogger(badgerLogger{log}).
		WithLoggingLevel(badger.WARNING).
		// Smaller memtables and caches than badger's server-sized defaults:
		// the store is embedded in a CLI or agent process. A value must fit
		// one write batch (15% of a memtable), which bounds the threshold on
		// small file systems.
		WithMemTableSize(memtable).
		WithValueThreshold(min(1<<20, memtable*15/100)).
		WithNumMemtables(numMemtables).
		WithNumLevelZeroTables(numLevelZeroTables).
		WithBlockCacheSize(64 << 20).
		WithValueLogFileSize(256 << 20).
		WithNumCompactors(2).
		WithMetricsEnabled(false)
	db, err := badger.Open(o)
	if err != nil {
		return nil, err
	}
	return &badgerKV{db: db, space: space}, nil
}

// removeEmptyValueLogs removes the value log files in dir that hold no
// byte. Badger creates a value log file at every open and sizes it right
// after; a process killed between the two (kill -9 at startup, about one
// kill in 280 in the kill test) leaves it empty, and badger's next open
// fails on it ("Open existing file: ….vlog … Create a new file": it
// sizes the file, then reports the z.NewFile its own code returns as an
// error), the open after that succeeding. An empty file holds no value a
// key can point to.
func removeEmptyValueLogs(dir string) error {
	logs, err := filepath.Glob(filepath.Join(dir, "*.vlog"))
	if err != nil {
		return err
	}
	for _, p := range logs {
		if fi, err := os.Stat(p); err == nil && fi.Size() == 0 {
			if err := os.Remove(p); err != nil {
				return err
			}
		}
	}
	return nil
}

func (b *badgerKV) View(fn func(kvTxn) error) error {
	return b.db.View(func(t *badger.Txn) error { return fn(&badgerTxn{t: t}) })
}

// Update joins fn to the group commit (group.go) and returns when the
// transaction that holds its writes has committed, or fn's own error.
func (b *badgerKV) Update(fn func(kvTxn) error) error { return b.group.update(fn, b.retry) }

// retry runs fn in its own transaction, again on a conflict.
func (b *badgerKV) retry(fn func(kvTxn) error) error {
	for i := 0; ; i++ {
		err := b.update(fn)
		if errors.Is(err, badger.ErrConflict) && i < maxConflictRetries {
			continue
		}
		if errors.Is(err, badger.ErrTxnTooBig) {
			return fmt.Errorf("store: transaction too large: %w", err)
		}
		return err
	}
}

// update is badger's DB.Update with the disk guard between the
// transaction's writes and its commit.
func (b *badgerKV) update(fn func(kvTxn) error) error {
	t := b.db.NewTransaction(true)
	defer t.Discard()
	txn := &badgerTxn{t: t}
	if err := fn(txn); err != nil {
		return err
	}
	if err := b.space.admit(txn.written); err != nil {
		return err
	}
	return t.Commit()
}

// Close closes badger. NB: badger flushes its memtable at Close and
// retries a flush that fails forever, so in a directory that is gone it
// would never return. A removed directory is made again for the flush and
// removed after it; one replaced by another directory is not written to
// (the flush could overwrite its files): badger is left open, its files
// closed when the process ends. Either way Close returns [ErrStoreGone].
func (b *badgerKV) Close() error {
	if !b.space.gone() {
		return b.db.Close()
	}
	gone := fmt.Errorf("%w: %s", ErrStoreGone, b.space.dir)
	made, err := mkdirMissing(b.space.dir)
	if err != nil {
		return fmt.Errorf("%w (left open: %v)", gone, err)
	}
	err = b.db.Close()
	return errors.Join(gone, err, os.RemoveAll(made))
}

// mkdirMissing makes dir, which does not exist, and the ancestors it
// lacks; it returns the outermost directory it made.
func mkdirMissing(dir string) (string, error) {
	if _, err := os.Lstat(dir); !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%s exists", dir)
	}
	top := dir
	for {
		parent := filepath.Dir(top)
		if _, err := os.Lstat(parent); err == nil || parent == top {
			break
		}
		top = parent
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return top, err
	}
	return top, os.Mkdir(dir, 0o755) // fails if another made it meanwhile
}

type badgerTxn struct {
	t       *badger.Txn
	written int64 // bytes of keys and values set, for the disk guard
}

func (t *badgerTxn) Get(key []byte) ([]byte, error) {
	it, err := t.t.Get(key)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, errKeyNotFound
	}
	if err != nil {
		return nil, err
	}
	return it.ValueCopy(nil)
}

func (t *badgerTxn) Set(key, value []byte) error {
	t.written += int64(len(key) + len(value))
	return t.t.Set(key, value)
}

func (t *badgerTxn) Delete(key []byte) error { return t.t.Delete(key) }

func (t *badgerTxn) Iterate(lo, hi []byte, reverse bool, fn func(key, value []byte) (bool, error)) error {
	it := t.t.NewIterator(badger.IteratorOptions{
		Reverse: reverse,
		Prefix:  commonPrefix(lo, hi),
	})
	defer it.Close()
	if reverse {
		if hi == nil {
			it.Rewind()
		} else {
			it.Seek(hi) // the largest key <= hi
		}
	} else {
		it.Seek(lo)
	}
	for ; it.Valid(); it.Next() {
		item := it.Item()
		k := item.Key()
		if reverse {
			if hi != nil && bytes.Compare(k, hi) >= 0 {
				continue
			}
			if bytes.Compare(k, lo) < 0 {
				return nil
			}
		} else if hi != nil && bytes.Compare(k, hi) >= 0 {
			return nil
		}
		var more bool
		err := item.Value(func(v []byte) error {
			var err error
			more, err = fn(k, v)
			return err
		})
		if err != nil || !more {
			return err
		}
	}
	return nil
}

// commonPrefix is the prefix every key in [lo, hi) shares.
func commonPrefix(lo, hi []byte) []byte {
	n := 0
	for n < len(lo) && n < len(hi) && lo[n] == hi[n] {
		n++
	}
	return lo[:n:n]
}

// badgerLogger adapts badger's printf logger to slog.
type badgerLogger struct{ l *slog.Logger }

func (b badgerLogger) Errorf(f string, a ...any)   { b.l.Error(badgerMsg(f, a)) }
func (b badgerLogger) Warningf(f string, a ...any) { b.l.Warn(badgerMsg(f, a)) }
func (b badgerLogger) Infof(f string, a ...any)    { b.l.Info(badgerMsg(f, a)) }
func (b badgerLogger) Debugf(f string, a ...any)   { b.l.Debug(badgerMsg(f, a)) }

func badgerMsg(f string, a []any) string {
	return "badger: " + strings.TrimRight(fmt.Sprintf(f, a...), "\n")
}
