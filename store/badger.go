package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/dgraph-io/badger/v4"
)

// The badger backend: badger's LSM log (kvStore) and the bleve index fed
// by a background indexer (index.go), in a directory one process holds
// (LOCK), or in memory. Spec: a name or path, badger:PATH, or memory.
const (
	schemeMemory = "memory"
	schemeBadger = "badger"
)

func init() {
	register(&driver{
		scheme: schemeMemory, bare: true, kind: "memory",
		target: func(text, rest string) (string, error) {
			if rest != "" {
				return "", invalid("spec", "%q: memory takes nothing after it", text)
			}
			return "", nil
		},
		text:  func(string) string { return schemeMemory },
		open:  func(o Options) (backend, error) { return openBadgerBackend("", o) },
		probe: func(context.Context, Options) (Presence, error) { return Present, nil },
	})
	register(&driver{
		scheme: schemeBadger, plain: true, local: true, kind: "persist",
		target: pathTarget("directory", "badger:DIR, or a name or path alone"),
		text:   badgerText,
		open:   func(o Options) (backend, error) { return openBadgerBackend(o.Spec.Target, o) },
		probe:  func(_ context.Context, o Options) (Presence, error) { return probeDir(o.Spec.Target), nil },
	})
}

// badgerText is a badger spec as text: the directory alone when it reads
// back as one, else badger:DIR.
func badgerText(dir string) string {
	if s, err := ParseSpec(dir); err == nil && s.Scheme == schemeBadger && s.Target == dir {
		return dir
	}
	return schemeBadger + ":" + dir
}

// probeDir is a badger directory's Presence: a store Open made (IsStore),
// a missing or empty directory, or one that holds other files.
func probeDir(dir string) Presence {
	if IsStore(dir) {
		return Present
	}
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return Foreign
	}
	return Absent
}

// openBadgerBackend opens badger in dir ("" in memory): the directory's
// lock, the log under kv/ and the index under index/.
func openBadgerBackend(dir string, o Options) (backend, error) {
	var lock *dirLock
	kvDir := ""
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return backend{}, fmt.Errorf("store: open %s: %w", dir, err)
		}
		var err error
		if lock, err = lockDir(dir); err != nil {
			return backend{}, err
		}
		kvDir = filepath.Join(dir, "kv")
	}
	kv, err := openBadger(kvDir, dir == "", !o.NoSync, o.Logger)
	if err != nil {
		_ = lock.release()
		return backend{}, fmt.Errorf("store: open %s: %w", dir, err)
	}
	kv.lock = lock
	be := backend{kv: kv, peers: alone{}}
	indexDir := ""
	if dir != "" {
		indexDir = filepath.Join(dir, "index")
	}
	be.search = func(db *DB) (searcher, error) { return openIndexer(db, indexDir) }
	if dir == "" {
		be.tooLarge = func(n int) error {
			if n > maxMemoryValue {
				return invalid("content", "a memory store keeps messages up to %d bytes (this one is %d); open a store on disk for larger ones", maxMemoryValue, n)
			}
			return nil
		}
	}
	return be, nil
}

// maxMemoryValue is the largest value badger's in-memory mode stores (its
// value-log threshold, with no value log behind it); a store on disk keeps
// larger values in its value log.
const maxMemoryValue = 1<<20 - 64

// badgerKV implements kvStore on badger.
type badgerKV struct {
	db    *badger.DB
	lock  *dirLock   // nil in memory
	space *diskGuard // nil in memory
	group groupCommit
}

var _ kvStore = (*badgerKV)(nil)

// lockWrites: Updates already run one after another (group.go).
func (b *badgerKV) lockWrites(uint64) func() { return func() {} }

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

// Close closes badger and releases the directory's lock. NB: badger flushes its memtable at Close and
// retries a flush that fails forever, so in a directory that is gone it
// would never return. A removed directory is made again for the flush and
// removed after it; one replaced by another directory is not written to
// (the flush could overwrite its files): badger is left open, its files
// closed when the process ends. Either way Close returns [ErrStoreGone].
func (b *badgerKV) Close() error {
	return errors.Join(b.close(), b.lock.release())
}

func (b *badgerKV) close() error {
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
