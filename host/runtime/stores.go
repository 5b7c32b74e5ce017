package runtime

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rlmpl/rlmpl/store"
)

// StoreSpec names a conversation store: in memory, a directory, or a
// PostgreSQL database (exactly one).
type StoreSpec struct {
	Memory bool
	// Dir is a directory: a plain name (one path segment) under
	// Options.StateDir, or an absolute directory inside StateDir or one of
	// Options.Grants. See [Runtime.Resolve].
	Dir string
	// Language is the search index's analyzer (store.LanguageEnglish, the
	// default, or store.LanguageNone). A store opened with another
	// language than its index's rebuilds the index.
	Language string
	// Existing opens only a store that exists, creating nothing (no
	// directory, no lock file; on PostgreSQL, no table in the schema):
	// [ErrStoreNotFound] otherwise. Read-only callers set it, so a
	// mistyped name leaves nothing behind.
	Existing bool
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

// ErrStorePath is returned for a store directory that may not hold a
// store: a relative name that is not one plain path segment, the state
// directory itself, a directory inside another store, a link to nowhere,
// or an existing directory that holds other files.
var ErrStorePath = errors.New("runtime: not a store directory")

// ErrStoreNotFound is returned when [StoreSpec.Existing] names a
// directory that holds no store.
var ErrStoreNotFound = errors.New("runtime: store not found")

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
	kind string // memory, persist or postgres (what a cold-history handle tells the model)
	db   *store.DB
	refs int // guarded by rt.mu
}

// ID is the store's id in this runtime, e.g. store_1.
func (s *Store) ID() string { return s.id }

// Dir is the store's absolute directory, "" for a memory store.
func (s *Store) Dir() string { return s.dir }

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
		return refused("a store name is one plain path segment, or an absolute directory")
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

// checkStoreDir refuses to make a store where there is none when spec
// says Existing, and in a directory that already holds other files (the
// store's files would mix with them). A missing or empty directory is
// created by store.Open.
func checkStoreDir(dir string, existing bool) error {
	if store.IsStore(dir) {
		return nil
	}
	if existing {
		return fmt.Errorf("%w: %q", ErrStoreNotFound, dir)
	}
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return fmt.Errorf("%w: %q holds other files", ErrStorePath, dir)
	}
	return nil
}

// checkPostgresStore is checkStoreDir's twin for a PostgreSQL store that
// spec says Existing: a schema that holds none is ErrStoreNotFound, read
// without creating anything (opening the store would create its tables).
func checkPostgresStore(o store.PostgresOptions) error {
	st, err := store.PostgresSchemaStatus(context.Background(), o)
	if err != nil {
		return err
	}
	if st.Version == 0 {
		return fmt.Errorf("%w: schema %s of %v holds none (conv import and chat create it)", ErrStoreNotFound, st.Schema, o)
	}
	return nil
}

// within reports whether path is root or below it (both clean, absolute).
func within(path, root string) bool {
	return path == root || strings.HasPrefix(path, root+string(filepath.Separator))
}

// OpenStore opens (or shares) the store spec names. Close it with
// [Runtime.CloseStore].
func (r *Runtime) OpenStore(spec StoreSpec) (*Store, error) {
	opts := store.Options{Now: r.opts.Now, Logger: r.opts.Logger, Language: spec.Language, Postgres: spec.Postgres}
	dir, key, name, kind := "", "", `""`, "persist"
	switch {
	case spec.Postgres != nil:
		if spec.Memory || spec.Dir != "" {
			return nil, &store.ValidationError{Kind: store.ErrInvalid, Field: "postgres", Reason: "a PostgreSQL store has no directory and is not in memory"}
		}
		key, name, kind = "postgres "+spec.Postgres.DSN, spec.Postgres.String(), "postgres"
		if spec.Existing {
			if err := checkPostgresStore(*spec.Postgres); err != nil {
				return nil, err
			}
		}
	case spec.Memory:
		if spec.Dir != "" {
			return nil, &store.ValidationError{Kind: store.ErrInvalid, Field: "dir", Reason: "a memory store has no directory"}
		}
		opts.InMemory, kind = true, "memory"
	default:
		var err error
		if dir, err = r.Resolve(spec.Dir); err != nil {
			return nil, err
		}
		if err := checkStoreDir(dir, spec.Existing); err != nil {
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
	s := &Store{rt: r, id: fmt.Sprintf("store_%d", r.next), key: key, dir: dir, kind: kind, db: db, refs: 1}
	r.byID[s.id] = s
	if key != "" {
		r.byKey[key] = s
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
