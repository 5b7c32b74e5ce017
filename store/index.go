package store

import (
	"bytes"
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
)

// The full-text index is derived from the log and can always be rebuilt
// from it: one document per message (fields: analyzer.go; statistics:
// stats.go).
//
// A background goroutine (the indexer, started by Open and stopped by
// Close) feeds it: each append marks its conversation pending; the indexer
// waits Options.IndexDelay so bursts share a batch, reads the pending tails
// from the log in batches of Options.IndexBatch and applies a bleve batch.
// Only a full batch is followed at once by the next: under a steady stream
// of appends every batch waits the delay again, so the index gets a few
// large batches a second instead of one per step (each is a segment scorch
// writes, syncs and later merges, on the disk the synced appends share).
// Searches see a batch as soon as it is applied (the in-memory watermark
// cs.indexed). Scorch persists batches asynchronously ("unsafe_batch",
// which lets it coalesce them: synced appends keep their throughput while
// indexing runs); only when a batch is on disk does its persisted callback
// write the conversations' watermarks (kindMark) to badger. A crash in
// between re-indexes the same documents on the next open, which overwrites
// them: the index is crash-safe without being transactional with the log.
// The index directory and badger share a generation id; a missing,
// unreadable or foreign index is rebuilt from scratch, and so is one built
// for another schema or language.
const internalGen = "rlmpl.generation"

func docID(num uint64, seq int64) string {
	return strconv.FormatUint(num, 10) + "/" + strconv.FormatInt(seq, 10)
}

func parseDocID(id string) (num uint64, seq int64, ok bool) {
	i := len(id) - 1
	for i >= 0 && id[i] != '/' {
		i--
	}
	if i <= 0 {
		return 0, 0, false
	}
	n, err1 := strconv.ParseUint(id[:i], 10, 64)
	s, err2 := strconv.ParseInt(id[i+1:], 10, 64)
	return n, s, err1 == nil && err2 == nil
}

func scorchConfig() map[string]any { return map[string]any{"unsafe_batch": true} }

func convTerm(num uint64) string { return strconv.FormatUint(num, 10) }

// indexer owns the bleve index and the goroutine that feeds it.
type indexer struct {
	db       *DB
	dir      string // "" for a memory-only index
	batch    int
	delay    time.Duration
	language string
	mapping  mapping.IndexMapping
	an       textAnalyzer

	// work is held by each indexing step and by Reindex: one writer at a
	// time, and Reindex swaps idx between steps. It protects the fields
	// below, the writer's view of what the index holds.
	work  sync.Mutex
	stats indexStats            // statistics of the index as of the last batch
	convs map[uint64]*convIndex // conversation number → what the index holds of it (a cache)

	idxMu sync.RWMutex // protects idx
	idx   bleve.Index

	mu    sync.Mutex              // protects the fields below
	dirty map[*convState]struct{} // conversations with indexed < head
	err   error                   // last indexing error (cleared by a good step)

	kick chan struct{}
	stop chan struct{}
	done chan struct{}
}

// newTextAnalyzer returns the analyzer of language, the one every
// backend's documents and queries go through.
func newTextAnalyzer(language string) (textAnalyzer, error) {
	m, err := newIndexMapping(language)
	if err != nil {
		return textAnalyzer{}, fmt.Errorf("store: index: %w", err)
	}
	an := m.AnalyzerNamed(analyzerName(language))
	if an == nil {
		return textAnalyzer{}, fmt.Errorf("store: index: no analyzer for language %q", language)
	}
	return textAnalyzer{an}, nil
}

// openIndexer opens badger's bleve index in dir ("" keeps it in memory)
// and starts the indexer.
func openIndexer(db *DB, dir string) (*indexer, error) {
	m, err := newIndexMapping(db.opts.Language)
	if err != nil {
		return nil, fmt.Errorf("store: index: %w", err)
	}
	ix := &indexer{
		db:       db,
		dir:      dir,
		batch:    db.opts.IndexBatch,
		delay:    db.opts.IndexDelay,
		language: db.opts.Language,
		mapping:  m,
		an:       db.an,
		convs:    map[uint64]*convIndex{},
		dirty:    map[*convState]struct{}{},
		kick:     make(chan struct{}, 1),
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
	}
	if dir == "" {
		ix.idx, err = ix.memory()
	} else {
		ix.idx, err = ix.openDisk()
	}
	if err == nil {
		err = ix.loadStats()
	}
	if err != nil {
		if ix.idx != nil {
			ix.idx.Close()
		}
		return nil, err
	}
	if err := ix.loadPending(); err != nil {
		ix.idx.Close()
		return nil, err
	}
	go ix.run()
	ix.poke()
	return ix, nil
}

var _ searcher = (*indexer)(nil)

// add: the indexer reads what it indexes from the log, after the commit.
func (ix *indexer) add(kvTxn, uint64, Record) error { return nil }

// wrote: bleve needs no statistics refreshed.
func (ix *indexer) wrote(int) {}

// memory returns a new memory-only index.
func (ix *indexer) memory() (bleve.Index, error) {
	idx, err := bleve.NewMemOnly(ix.mapping)
	if err != nil {
		return nil, fmt.Errorf("store: index: %w", err)
	}
	if err := idx.SetInternal(internalSchema, schemaID(ix.language)); err != nil {
		idx.Close()
		return nil, fmt.Errorf("store: index: %w", err)
	}
	return idx, nil
}

// loadStats reads the statistics of the index just opened.
func (ix *indexer) loadStats() error {
	b, err := ix.idx.GetInternal(internalStats)
	if err == nil {
		ix.stats, err = decodeStats(b)
	}
	clear(ix.convs)
	if err != nil {
		return fmt.Errorf("store: index: %w", err)
	}
	return nil
}

// convOf returns what the index holds of conversation num. The caller
// holds ix.work.
func (ix *indexer) convOf(num uint64) (convIndex, error) {
	if c, ok := ix.convs[num]; ok {
		return *c, nil
	}
	b, err := ix.idx.GetInternal(internalConv(num))
	if err != nil {
		return convIndex{}, err
	}
	c, err := decodeConvIndex(b)
	if err != nil {
		return convIndex{}, err
	}
	ix.convs[num] = &c
	return c, nil
}

// openDisk opens the index directory if it belongs to this log (same
// generation) and was built with this schema and language, else rebuilds it
// empty and resets every watermark.
func (ix *indexer) openDisk() (bleve.Index, error) {
	var gen []byte
	err := ix.db.kv.View(func(t kvTxn) error {
		var err error
		gen, err = t.Get(metaKey(metaIndexGen))
		if errors.Is(err, errKeyNotFound) {
			return nil
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: index: %w", err)
	}
	if idx, err := bleve.OpenUsing(ix.dir, scorchConfig()); err == nil {
		g, err1 := idx.GetInternal([]byte(internalGen))
		schema, err2 := idx.GetInternal(internalSchema)
		switch {
		case err1 != nil || err2 != nil || len(gen) == 0 || !bytes.Equal(g, gen):
			ix.db.opts.Logger.Warn("store: index generation does not match the log; rebuilding", "dir", ix.dir)
		case !bytes.Equal(schema, schemaID(ix.language)):
			ix.db.opts.Logger.Warn("store: index built for another schema or language; rebuilding", "dir", ix.dir,
				"index", string(schema), "want", string(schemaID(ix.language)))
		default:
			return idx, nil
		}
		idx.Close()
	} else if !errors.Is(err, bleve.ErrorIndexPathDoesNotExist) {
		ix.db.opts.Logger.Warn("store: index unreadable; rebuilding", "dir", ix.dir, "err", err)
	}
	return ix.fresh()
}

// fresh replaces the index directory with an empty index of a new
// generation and deletes all watermarks.
func (ix *indexer) fresh() (bleve.Index, error) {
	if err := os.RemoveAll(ix.dir); err != nil {
		return nil, fmt.Errorf("store: index: %w", err)
	}
	idx, err := bleve.NewUsing(ix.dir, ix.mapping, scorch.Name, scorch.Name, scorchConfig())
	if err != nil {
		return nil, fmt.Errorf("store: index: create %s: %w", ix.dir, err)
	}
	var g [16]byte
	_, _ = rand.Read(g[:])
	gen := []byte(hex.EncodeToString(g[:]))
	b := idx.NewBatch()
	b.SetInternal([]byte(internalGen), gen)
	b.SetInternal(internalSchema, schemaID(ix.language))
	if err := idx.Batch(b); err != nil {
		idx.Close()
		return nil, fmt.Errorf("store: index: %w", err)
	}
	if err := ix.resetMarks(gen); err != nil {
		idx.Close()
		return nil, err
	}
	return idx, nil
}

// resetMarks deletes every watermark and records gen (nil: keep the
// generation key as is).
func (ix *indexer) resetMarks(gen []byte) error {
	for {
		var keys [][]byte
		err := ix.db.kv.View(func(t kvTxn) error {
			lo := []byte{kindMark}
			return t.Iterate(lo, prefixEnd(lo), false, func(k, _ []byte) (bool, error) {
				keys = append(keys, bytes.Clone(k))
				return len(keys) < 10000, nil
			})
		})
		if err == nil {
			err = ix.db.kv.Update(func(t kvTxn) error {
				for _, k := range keys {
					if err := t.Delete(k); err != nil {
						return err
					}
				}
				if len(keys) < 10000 && gen != nil {
					return t.Set(metaKey(metaIndexGen), gen)
				}
				return nil
			})
		}
		if err != nil {
			return fmt.Errorf("store: index: reset watermarks: %w", err)
		}
		if len(keys) < 10000 {
			return nil
		}
	}
}

// loadPending finds the conversations whose watermark is behind their last
// seq (one pass over the head and watermark keys) and marks them pending.
func (ix *indexer) loadPending() error {
	heads := map[uint64]int64{}
	marks := map[uint64]int64{}
	err := ix.db.kv.View(func(t kvTxn) error {
		lo := []byte{kindHead}
		err := t.Iterate(lo, prefixEnd(lo), false, func(k, v []byte) (bool, error) {
			num, ok := parseNumKey(k)
			if !ok {
				return false, corrupt("head key %x", k)
			}
			h, err := decodeHead(v)
			heads[num] = h.lastSeq
			return true, err
		})
		if err != nil {
			return err
		}
		lo = []byte{kindMark}
		return t.Iterate(lo, prefixEnd(lo), false, func(k, v []byte) (bool, error) {
			num, ok := parseNumKey(k)
			if !ok {
				return false, corrupt("watermark key %x", k)
			}
			m, err := decodeU64(v, "index watermark")
			marks[num] = int64(m)
			return true, err
		})
	})
	if err != nil {
		return fmt.Errorf("store: index: %w", err)
	}
	for num, last := range heads {
		if marks[num] >= last {
			continue
		}
		cs, err := ix.db.convByNum(num)
		if err != nil {
			return fmt.Errorf("store: index: %w", err)
		}
		ix.mu.Lock()
		ix.dirty[cs] = struct{}{}
		ix.mu.Unlock()
	}
	return nil
}

// appended tells the indexer that cs has new messages. It is called after
// cs.head has been advanced.
func (ix *indexer) appended(cs *convState) {
	ix.mu.Lock()
	ix.dirty[cs] = struct{}{}
	ix.mu.Unlock()
	ix.poke()
}

func (ix *indexer) poke() {
	select {
	case ix.kick <- struct{}{}:
	default:
	}
}

func (ix *indexer) run() {
	defer close(ix.done)
	indexLoop(ix.kick, ix.stop, ix.delay, ix.batch, ix.step, func(err error) {
		ix.mu.Lock()
		ix.err = err
		ix.mu.Unlock()
	}, ix.db.opts.Logger)
}

// indexLoop runs a background indexer (badger's, SQLite's) until stop
// closes: woken by kick, it waits delay so that a burst of appends shares a
// batch, then steps until a step indexes less than a full batch. report
// gets each step's error (nil after a good one); a failed step is logged
// and tried again a second later.
func indexLoop(kick chan struct{}, stop <-chan struct{}, delay time.Duration, batch int,
	step func() (int, error), report func(error), log *slog.Logger) {
	for {
		select {
		case <-stop:
			return
		case <-kick:
		}
		if delay > 0 {
			select {
			case <-stop:
				return
			case <-time.After(delay):
			}
		}
		for {
			select {
			case <-stop:
				return
			default:
			}
			n, err := step()
			report(err)
			if err != nil {
				log.Error("store: indexing failed; retrying in 1s", "err", err)
				select {
				case <-stop:
					return
				case <-time.After(time.Second):
				}
				select {
				case kick <- struct{}{}:
				default:
				}
				break
			}
			if n < batch {
				break
			}
		}
	}
}

// step indexes up to one batch of pending messages and returns how many.
func (ix *indexer) step() (int, error) {
	ix.work.Lock()
	defer ix.work.Unlock()
	ix.mu.Lock()
	pending := make([]*convState, 0, len(ix.dirty))
	for cs := range ix.dirty {
		pending = append(pending, cs)
	}
	ix.mu.Unlock()
	slices.SortFunc(pending, func(a, b *convState) int { return cmp.Compare(a.num, b.num) })

	type mark struct {
		cs  *convState
		seq int64
	}
	var marks []mark
	b := ix.idx.NewBatch()
	n := 0
	stats := ix.stats
	convs := map[uint64]convIndex{}
	err := ix.db.kv.View(func(t kvTxn) error {
		for _, cs := range pending {
			if n >= ix.batch {
				break
			}
			from, to := cs.indexed.Load()+1, cs.head.Load()
			if to < from {
				continue
			}
			to = min(to, from+int64(ix.batch-n)-1)
			ci, err := ix.convOf(cs.num)
			if err != nil {
				return err
			}
			last := from - 1
			var ierr error
			err = readRange(t, cs, from, to, false, func(r Record) bool {
				d := textOf(r)
				if r.Seq > ci.held { // not counted yet (a replay indexes documents again)
					lens := ix.an.lengths(d)
					stats.count(lens)
					ci.stats.count(lens)
				}
				ierr = b.Index(docID(cs.num, r.Seq), d.document(cs.num))
				last = r.Seq
				n++
				return ierr == nil
			})
			if err == nil {
				err = ierr
			}
			if err != nil {
				return err
			}
			marks = append(marks, mark{cs, last})
			if last > ci.held {
				ci.held = last
				b.SetInternal(internalConv(cs.num), ci.encode())
				convs[cs.num] = ci
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("store: index: read log: %w", err)
	}
	if n > 0 {
		if ix.dir != "" {
			b.SetPersistedCallback(func(err error) {
				if err != nil {
					ix.db.opts.Logger.Error("store: index batch not persisted; it is re-indexed on the next open", "err", err)
					return
				}
				if err := ix.db.kv.Update(func(t kvTxn) error {
					for _, m := range marks {
						if m.seq > m.cs.persisted.Load() {
							if err := t.Set(markKey(m.cs.num), encodeU64(uint64(m.seq))); err != nil {
								return err
							}
						}
					}
					return nil
				}); err != nil {
					ix.db.opts.Logger.Error("store: index: write watermarks", "err", err)
					return
				}
				for _, m := range marks {
					if m.seq > m.cs.persisted.Load() {
						m.cs.persisted.Store(m.seq)
					}
				}
			})
		}
		b.SetInternal(internalStats, stats.encode())
		if err := ix.idx.Batch(b); err != nil {
			clear(ix.convs) // the batch may or may not have been applied
			if ix.loadStats() != nil {
				ix.stats = indexStats{}
			}
			return 0, fmt.Errorf("store: index: %w", err)
		}
		ix.stats = stats
		for num, ci := range convs {
			ix.convs[num] = &ci
		}
		for _, m := range marks {
			m.cs.indexed.Store(m.seq)
		}
	}
	ix.mu.Lock()
	for _, cs := range pending {
		if cs.indexed.Load() >= cs.head.Load() {
			delete(ix.dirty, cs)
		}
	}
	ix.mu.Unlock()
	return n, nil
}

func (ix *indexer) close() error {
	close(ix.stop)
	<-ix.done
	ix.work.Lock()
	defer ix.work.Unlock()
	if err := ix.idx.Close(); err != nil {
		return fmt.Errorf("store: close index: %w", err)
	}
	return nil
}

// WaitIndexed blocks until every message appended before the call is in
// the full-text index (searches never need this: they also scan the
// unindexed tail), or until timeout passes (then it returns an error
// carrying the last indexing error, if any). Tests and benchmarks use it.
func (db *DB) WaitIndexed(timeout time.Duration) error {
	if err := db.enter(); err != nil {
		return err
	}
	defer db.leave()
	return db.search.waitIndexed(timeout)
}

func (ix *indexer) waitIndexed(timeout time.Duration) error {
	ix.mu.Lock()
	type target struct {
		cs   *convState
		head int64
	}
	var ts []target
	for cs := range ix.dirty {
		ts = append(ts, target{cs, cs.head.Load()})
	}
	ix.mu.Unlock()
	ix.poke()
	deadline := time.Now().Add(timeout)
	for _, t := range ts {
		for t.cs.indexed.Load() < t.head {
			if time.Now().After(deadline) {
				ix.mu.Lock()
				err := ix.err
				ix.mu.Unlock()
				return fmt.Errorf("store: index still behind after %v (last error: %v)", timeout, err)
			}
			time.Sleep(time.Millisecond)
		}
	}
	return nil
}

// Reindex rebuilds the full-text index from the log: it replaces the index
// with an empty one (or, where the documents live in the database, writes
// them again) and waits (up to timeout) for the indexer to catch up.
// Searches stay correct meanwhile (they scan what is not indexed yet) but
// are slower.
func (db *DB) Reindex(timeout time.Duration) error {
	if err := db.enter(); err != nil {
		return err
	}
	err := db.search.rebuild()
	db.leave()
	if err != nil {
		return err
	}
	return db.WaitIndexed(timeout)
}

func (ix *indexer) rebuild() error {
	ix.work.Lock()
	defer ix.work.Unlock()
	var (
		idx bleve.Index
		err error
	)
	ix.idxMu.Lock()
	old := ix.idx
	if ix.dir == "" {
		idx, err = ix.memory()
		if err == nil {
			err = ix.resetMarks(nil)
		}
	} else {
		old.Close()
		idx, err = ix.fresh()
	}
	if err != nil {
		ix.idxMu.Unlock()
		return err
	}
	if ix.dir == "" {
		old.Close()
	}
	ix.idx = idx
	ix.stats = indexStats{}
	clear(ix.convs)
	ix.mu.Lock()
	ix.db.convs.Range(func(_, v any) bool {
		v.(*convState).indexed.Store(0)
		v.(*convState).persisted.Store(0)
		return true
	})
	clear(ix.dirty)
	ix.mu.Unlock()
	ix.idxMu.Unlock()
	// Conversations not loaded in memory yet read watermark 0 when loaded;
	// loadPending puts every non-empty conversation back in the queue.
	if err := ix.loadPending(); err != nil {
		return err
	}
	ix.poke()
	return nil
}

func (ix *indexer) dirtyLen() int {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return len(ix.dirty)
}
