package runtime

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/rlmpl/rlmpl/store"
)

// StoreSpec names a conversation store and how to open it. The store is
// Store, a spec in the one notation every caller uses ([store.ParseSpec]:
// memory, a name or path, badger:PATH, postgres://…, sqlite:PATH); when
// it is zero, Memory, Dir or Postgres name it instead, as Go shorthands
// (exactly one).
type StoreSpec struct {
	Store  store.Spec
	Memory bool
	// Dir is a badger directory: a plain name (one path segment) under
	// Options.StateDir, or an absolute directory inside StateDir or one of
	// Options.Grants. A store whose spec is a path (a badger directory, an
	// SQLite file) follows the same rule: see [Runtime.Resolve].
	Dir string
	// Language is the search index's analyzer (store.LanguageEnglish, the
	// default, or store.LanguageNone). A store opened with another
	// language than its index's rebuilds the index (a store processes
	// share refuses it).
	Language string
	// Existing opens only a store that exists, creating nothing (no
	// directory or file, no lock file; on PostgreSQL, no table in the
	// schema): [ErrStoreNotFound] otherwise. Read-only callers set it, so
	// a mistyped name leaves nothing behind.
	Existing bool
	// Postgres names a store in a PostgreSQL database (its DSN, pool and
	// timeouts), shared with every process that opens it; with a postgres
	// Store, it gives the pool and timeouts only (DSN empty).
	Postgres *store.PostgresOptions
}

// ErrPathNotGranted is returned for a store directory outside the state
// directory and every grant.
var ErrPathNotGranted = errors.New("runtime: store directory not granted")

// ErrStorePath is returned for a store path (a badger directory, an SQLite
// file) that may not hold a store: a relative name that is not one plain
// path segment, the state directory itself, a path inside another store,
// a link to nowhere, or an existing directory that holds other files.
var ErrStorePath = errors.New("runtime: not a store path")

// ErrStoreNotFound is returned when [StoreSpec.Existing] names a
// directory that holds no store.
var ErrStoreNotFound = errors.New("runtime: store not found")

// ErrStoreOpen wraps a failure to open a store's directory (not a
// directory, permissions, a damaged database).
var ErrStoreOpen = errors.New("runtime: cannot open store")

// Store is an open conversation store shared by everything of one
// [Runtime] that opened it: opening the same store again (a badger
// directory can be open once per process; a PostgreSQL DSN or an SQLite
// file, one connection pool, whose options are the first open's) returns
// the same Store with one more reference. Each memory store is its own.
type Store struct {
	rt   *Runtime
	id   string
	spec store.Spec // the store, its path resolved
	db   *store.DB
	refs int // guarded by rt.mu
}

// ID is the store's id in this runtime, e.g. store_1.
func (s *Store) ID() string { return s.id }

// Spec is the store's spec, its path (a badger directory, an SQLite file)
// absolute and resolved.
func (s *Store) Spec() store.Spec { return s.spec }

// Dir is the store's absolute directory or file, "" for a memory store
// or one on a server.
func (s *Store) Dir() string {
	if s.spec.Local() {
		return s.spec.Target
	}
	return ""
}

// key is what shares the store in a runtime: its spec; "" (not shared)
// for a memory store.
func (s *Store) key() string {
	if s.spec.Target == "" {
		return ""
	}
	return s.spec.Scheme + ":" + s.spec.Target
}

// Resolve returns the real absolute directory a store name stands for,
// or an error wrapping [ErrPathNotGranted] or [ErrStorePath]. A relative
// name is one plain path segment under the state directory; an absolute
// one must be inside the state directory (not the directory itself, which
// holds stores) or a grant. Symbolic links are resolved before the check,
// so a link cannot lead a store out, and a store is never inside another
// one (its kv/ or index/, say). It reads the file system, never writes.
func (r *Runtime) Resolve(dir string) (string, error) {
	denied := func() (string, error) {
		return "", fmt.Errorf("%w: %q (stores live under the state directory %q unless granted)", ErrPathNotGranted, dir, r.opts.StateDir)
	}
	refused := func(why string) (string, error) {
		return "", fmt.Errorf("%w: %q: %s", ErrStorePath, dir, why)
	}
	abs := dir
	switch {
	case filepath.IsAbs(dir):
	case dir == "." || dir == ".." || filepath.Base(dir) != dir:
		return refused("a store name is one plain path segment, or an absolute path")
	case r.opts.StateDir == "":
		return denied()
	default:
		abs = filepath.Join(r.opts.StateDir, dir)
	}
	real, err := realPath(abs)
	if err != nil {
		return refused(err.Error())
	}
	state, err := realPath(r.opts.StateDir)
	if err != nil {
		return refused(err.Error())
	}
	if real == state {
		return refused("the state directory holds stores, it is not one")
	}
	if !r.granted(real, state) {
		return denied()
	}
	for p := filepath.Dir(real); ; p = filepath.Dir(p) {
		if store.IsStore(p) {
			return refused(fmt.Sprintf("inside the store %q", p))
		}
		if p == filepath.Dir(p) {
			return real, nil
		}
	}
}

// granted reports whether the real path p is inside the real state
// directory or a grant (whose links are resolved too).
func (r *Runtime) granted(p, state string) bool {
	if state != "" && within(p, state) {
		return true
	}
	for _, g := range r.opts.Grants {
		if root, err := realPath(g); err == nil && root != "" && within(p, root) {
			return true
		}
	}
	return false
}

// realPath makes p absolute, resolves the symbolic links of its longest
// existing prefix and joins the rest, so that a check sees where p really
// leads ("" stays ""). A link to nowhere is an error: creating through it
// would land wherever it points.
func realPath(p string) (string, error) {
	if p == "" {
		return "", nil
	}
	p, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	rest := ""
	for ; ; p = filepath.Dir(p) {
		real, err := filepath.EvalSymlinks(p)
		if err == nil {
			return filepath.Join(real, rest), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		if _, err := os.Lstat(p); err == nil {
			return "", fmt.Errorf("%q is a link to nowhere", p)
		}
		if p == filepath.Dir(p) {
			return "", err
		}
		rest = filepath.Join(filepath.Base(p), rest)
	}
}

// within reports whether path is root or below it (both clean, absolute).
func within(path, root string) bool {
	return path == root || strings.HasPrefix(path, root+string(filepath.Separator))
}

// OpenStore opens (or shares) the store ss names. A store on this
// machine (a badger directory, an SQLite file) is resolved first
// ([Runtime.Resolve]) and never made where something else is
// ([ErrStorePath]: a directory of other files, a file that is not a
// store); with Existing, a store that is not there is [ErrStoreNotFound].
// Close it with [Runtime.CloseStore].
func (r *Runtime) OpenStore(ss StoreSpec) (*Store, error) {
	o := store.Options{Spec: ss.Store, InMemory: ss.Memory, Dir: ss.Dir, Postgres: ss.Postgres,
		Language: ss.Language, Now: r.opts.Now, Logger: r.opts.Logger}
	if ss == (StoreSpec{Language: ss.Language, Existing: ss.Existing}) {
		_, err := r.Resolve("") // an empty Dir: Dir's rule refuses it
		return nil, err
	}
	spec, err := o.StoreSpec()
	if err != nil {
		return nil, err
	}
	if spec.Local() {
		p, err := r.Resolve(spec.Target)
		if err != nil {
			return nil, err
		}
		spec = spec.WithTarget(p)
	}
	o.Spec, o.Dir, o.InMemory = spec, "", false
	if spec.Local() || ss.Existing {
		switch p, err := store.Probe(context.Background(), &o); {
		case err != nil:
			return nil, err
		case p != store.Present && ss.Existing:
			return nil, fmt.Errorf("%w: %v holds none (conv import and chat create it)", ErrStoreNotFound, spec)
		case p == store.Foreign:
			return nil, fmt.Errorf("%w: %v holds other files", ErrStorePath, spec)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, store.ErrClosed
	}
	s := &Store{rt: r, spec: spec, refs: 1}
	if shared, ok := r.byKey[s.key()]; ok && s.key() != "" {
		shared.refs++
		return shared, nil
	}
	db, err := store.Open(&o)
	if err != nil {
		if errors.Is(err, store.ErrLocked) {
			return nil, err
		}
		return nil, fmt.Errorf("%w %v: %w", ErrStoreOpen, spec, err)
	}
	r.next++
	s.id, s.db = fmt.Sprintf("store_%d", r.next), db
	r.byID[s.id] = s
	if s.key() != "" {
		r.byKey[s.key()] = s
	}
	return s, nil
}

// ShareStore takes another reference to the open store with this id (one
// more [Runtime.CloseStore] closes it): a store named again, such as the
// conversation's store opened as its artifact store. An unknown id is
// [store.ErrClosed].
func (r *Runtime) ShareStore(id string) (*Store, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.byID[id]
	if !ok {
		return nil, store.ErrClosed
	}
	s.refs++
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
		delete(r.byKey, s.key())
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
