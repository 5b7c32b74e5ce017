package runtime

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rlmpl/rlmpl/store"
)

// StoreSpec names a conversation store: in memory, a directory, or a
// PostgreSQL database (exactly one).
type StoreSpec struct {
	Memory bool
	// Dir is a directory: relative to Options.StateDir (it may not climb
	// out of it), or absolute inside StateDir or one of Options.Grants.
	Dir string
	// Language is the search index's analyzer (store.LanguageEnglish, the
	// default, or store.LanguageNone). A store opened with another
	// language than its index's rebuilds the index.
	Language string
	// Postgres names a store in a PostgreSQL database (its DSN, pool and
	// timeouts), shared with every process that opens it.
	Postgres *store.PostgresOptions
}

// PostgresSpec returns the spec of the PostgreSQL store a postgres:// or
// postgresql:// URL names, and false for anything else (a store name or
// directory), so commands that take a store name take a URL too.
func PostgresSpec(name string) (StoreSpec, bool) {
	if !strings.HasPrefix(name, "postgres://") && !strings.HasPrefix(name, "postgresql://") {
		return StoreSpec{}, false
	}
	return StoreSpec{Postgres: &store.PostgresOptions{DSN: name}}, true
}

// ErrPathNotGranted is returned for a store directory outside the state
// directory and every grant.
var ErrPathNotGranted = errors.New("runtime: store directory not granted")

// ErrStoreOpen wraps a failure to open a store's directory (not a
// directory, permissions, a damaged database).
var ErrStoreOpen = errors.New("runtime: cannot open store")

// Store is an open conversation store shared by everything of one
// [Runtime] that opened it: a directory can be open once per process
// (badger's lock), so opening it again returns the same Store with one
// more reference; so does opening the same PostgreSQL DSN again (one
// connection pool, whose options are the first open's). Each memory store
// is its own.
type Store struct {
	rt   *Runtime
	id   string
	key  string // what shares it: the directory, "postgres " DSN; "" for a memory store
	dir  string // "" for a memory or PostgreSQL store
	db   *store.DB
	refs int // guarded by rt.mu
}

// ID is the store's id in this runtime, e.g. store_1.
func (s *Store) ID() string { return s.id }

// Dir is the store's absolute directory, "" for a memory store.
func (s *Store) Dir() string { return s.dir }

// Resolve returns the absolute directory spec names, or an error wrapping
// [ErrPathNotGranted]. It does no I/O.
func (r *Runtime) Resolve(dir string) (string, error) {
	denied := func() (string, error) {
		return "", fmt.Errorf("%w: %q (stores live under the state directory %q unless granted)", ErrPathNotGranted, dir, r.opts.StateDir)
	}
	if dir == "" {
		return denied()
	}
	abs := filepath.Clean(dir)
	if !filepath.IsAbs(dir) {
		if r.opts.StateDir == "" {
			return denied()
		}
		abs = filepath.Join(r.opts.StateDir, dir)
	}
	for _, root := range append([]string{r.opts.StateDir}, r.opts.Grants...) {
		if root != "" && within(abs, root) {
			return abs, nil
		}
	}
	return denied()
}

// within reports whether path is root or below it (both clean, absolute).
func within(path, root string) bool {
	return path == root || strings.HasPrefix(path, root+string(filepath.Separator))
}

// OpenStore opens (or shares) the store spec names. Close it with
// [Runtime.CloseStore].
func (r *Runtime) OpenStore(spec StoreSpec) (*Store, error) {
	opts := store.Options{Now: r.opts.Now, Logger: r.opts.Logger, Language: spec.Language, Postgres: spec.Postgres}
	dir, key, name := "", "", `""`
	switch {
	case spec.Postgres != nil:
		if spec.Memory || spec.Dir != "" {
			return nil, &store.ValidationError{Kind: store.ErrInvalid, Field: "postgres", Reason: "a PostgreSQL store has no directory and is not in memory"}
		}
		key, name = "postgres "+spec.Postgres.DSN, spec.Postgres.String()
	case spec.Memory:
		if spec.Dir != "" {
			return nil, &store.ValidationError{Kind: store.ErrInvalid, Field: "dir", Reason: "a memory store has no directory"}
		}
		opts.InMemory = true
	default:
		var err error
		if dir, err = r.Resolve(spec.Dir); err != nil {
			return nil, err
		}
		opts.Dir, key, name = dir, dir, strconv.Quote(dir)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, store.ErrClosed
	}
	if s, ok := r.byKey[key]; ok && key != "" {
		s.refs++
		return s, nil
	}
	db, err := store.Open(&opts)
	if err != nil {
		if errors.Is(err, store.ErrLocked) {
			return nil, err
		}
		return nil, fmt.Errorf("%w %s: %w", ErrStoreOpen, name, err)
	}
	r.next++
	s := &Store{rt: r, id: fmt.Sprintf("store_%d", r.next), key: key, dir: dir, db: db, refs: 1}
	r.byID[s.id] = s
	if key != "" {
		r.byKey[key] = s
	}
	return s, nil
}

// Store returns the open store with this id.
func (r *Runtime) Store(id string) (*Store, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.byID[id]
	return s, ok
}

// CloseStore drops one reference to the store; the last one closes it (a
// memory store's data is then gone). An unknown id is [store.ErrClosed].
func (r *Runtime) CloseStore(id string) error {
	r.mu.Lock()
	s, ok := r.byID[id]
	if !ok {
		r.mu.Unlock()
		return store.ErrClosed
	}
	s.refs--
	last := s.refs == 0
	if last {
		delete(r.byID, id)
		delete(r.byKey, s.key)
	}
	r.mu.Unlock()
	if last {
		return s.db.Close()
	}
	return nil
}

// Create creates a conversation; an empty id means a fresh one.
func (s *Store) Create(id string, metadata []store.KV) (store.Conversation, error) {
	return s.db.Create(id, metadata)
}

// Conversations lists conversations by creation time.
func (s *Store) Conversations(order store.Order, limit int) ([]store.Conversation, error) {
	return s.db.List(order, limit)
}

// Conversation names conversation id of this store. It does no I/O; its
// methods report [store.ErrNotFound] when the conversation does not exist.
func (s *Store) Conversation(id string) Conversation { return Conversation{st: s, id: id} }
