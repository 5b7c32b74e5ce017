package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// A store spec names a store in one line of text, the same wherever a
// store is named — the CLI's --store, RLMPL_STORE, config.toml's store,
// conversation_store_open/2, and Go ([Options].Spec):
//
//	memory          a store in memory, gone when it is closed
//	NAME or PATH    badger on disk (badger:PATH says so explicitly)
//	postgres://…    PostgreSQL, shared by every process that opens it
//	                (postgresql://…, or postgres: and a libpq keyword string)
//	sqlite:PATH     an SQLite file, shared by the processes of one machine
//
// [ParseSpec] is the one parser. Each backend registers its scheme from
// its own file (register, as database/sql drivers do), so a new backend
// adds one file and one registration, and nothing above the store learns
// its name.

// Spec is a parsed store spec: a registered scheme and what its backend
// opens. The zero Spec names no store.
type Spec struct {
	// Scheme is the backend's registered scheme: memory, badger, postgres
	// or sqlite.
	Scheme string
	// Target is what the backend opens: a directory (badger), a DSN
	// (postgres), a file (sqlite); empty for memory.
	Target string
}

// IsZero reports whether s names no store.
func (s Spec) IsZero() bool { return s.Scheme == "" }

// String is the spec as text, a DSN's password redacted ([RedactDSN]):
// fit for errors, logs and outcomes. ParseSpec reads it back (but for the
// password).
func (s Spec) String() string {
	d := drivers.get(s.Scheme)
	if d == nil {
		return RedactDSN(s.Scheme + ":" + s.Target)
	}
	return d.text(s.Target)
}

// Local reports whether the target is a path on this machine (a badger
// directory, an SQLite file): a caller that confines stores to some
// directories checks it, and [Spec.WithTarget] gives the spec of the
// path it resolved.
func (s Spec) Local() bool {
	d := drivers.get(s.Scheme)
	return d != nil && d.local
}

// Shared reports whether the store can be open in several processes at
// once (PostgreSQL, SQLite); a badger directory is one process's.
func (s Spec) Shared() bool {
	d := drivers.get(s.Scheme)
	return d != nil && d.shared
}

// Kind is the backend's name as a cold-history handle tells the model:
// memory, persist (badger on disk), postgres or sqlite.
func (s Spec) Kind() string {
	if d := drivers.get(s.Scheme); d != nil {
		return d.kind
	}
	return s.Scheme
}

// WithTarget returns s with another target (a resolved path).
func (s Spec) WithTarget(target string) Spec { s.Target = target; return s }

// ParseSpec reads a store spec. A known scheme followed by a colon selects
// its backend; text without one is a badger directory (a name under the
// state directory, or a path); the word memory is a store in memory. It
// returns a *[ValidationError] (field "spec") naming what is wrong: an
// empty spec, an unknown scheme, a scheme with nothing after it. A DSN's
// password never appears in an error.
func ParseSpec(text string) (Spec, error) {
	if strings.TrimSpace(text) == "" {
		return Spec{}, invalid("spec", "empty store spec (memory, a name, a path, postgres://…, sqlite:PATH)")
	}
	name, rest, hasScheme := strings.Cut(text, ":")
	if !hasScheme {
		if d := drivers.get(text); d != nil && d.bare {
			return Spec{Scheme: d.scheme}, nil
		}
		return drivers.plain().spec(text, text)
	}
	if d := drivers.get(strings.ToLower(name)); d != nil {
		return d.spec(text, rest)
	}
	if looksLikeScheme(name) {
		return Spec{}, invalid("spec", "unknown scheme %q in %q (known: %s)", name, RedactDSN(text), strings.Join(drivers.schemes(), ", "))
	}
	return drivers.plain().spec(text, text)
}

// NewSpec is the spec of target under scheme (a registered one), checked
// as ParseSpec checks scheme:target. Callers that hold the parts apart (a
// Prolog spec such as sqlite(Path)) use it.
func NewSpec(scheme, target string) (Spec, error) {
	d := drivers.get(strings.ToLower(scheme))
	if d == nil {
		return Spec{}, invalid("spec", "unknown scheme %q (known: %s)", scheme, strings.Join(drivers.schemes(), ", "))
	}
	return d.spec(scheme+":"+target, target)
}

// looksLikeScheme reports whether s could be a URL scheme (RFC 3986:
// a letter, then letters, digits, +, - or .), two characters at least so
// that a drive letter is not one.
func looksLikeScheme(s string) bool {
	if len(s) < 2 || !isLetter(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !isLetter(c) && !('0' <= c && c <= '9') && c != '+' && c != '-' && c != '.' {
			return false
		}
	}
	return true
}

func isLetter(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }

// Presence is what a spec's place holds before the store is opened.
type Presence int

const (
	// Absent: nothing there yet; opening the store creates it.
	Absent Presence = iota
	// Present: a store.
	Present
	// Foreign: something that is not a store (a directory of other files,
	// a file that is not a database); opening would mix the store with it.
	Foreign
)

func (p Presence) String() string {
	switch p {
	case Absent:
		return "absent"
	case Present:
		return "present"
	case Foreign:
		return "foreign"
	}
	return fmt.Sprintf("presence(%d)", int(p))
}

// Probe reports whether the store o names exists, creating nothing: no
// directory, file or table (a read-only command asks it first, so a
// mistyped name leaves nothing behind). A memory store is always Present.
// It returns [ErrInvalid] for bad options and, for a store on a server,
// the error of reaching it.
func Probe(ctx context.Context, o *Options) (Presence, error) {
	opts, err := o.withDefaults()
	if err != nil {
		return Absent, err
	}
	return drivers.get(opts.Spec.Scheme).probe(ctx, opts)
}

// ErrNoMigrations reports a store whose backend has no schema versions to
// read or migrate: its format needs no migration (badger), or opening it
// brings it up to date (SQLite).
var ErrNoMigrations = errors.New("store: no schema migrations")

// ReadSchema reads the schema version of the store o names beside this
// binary's migrations, changing nothing (PostgreSQL: see
// [PostgresSchemaStatus]). It returns [ErrNoMigrations] for a backend
// without them.
func ReadSchema(ctx context.Context, o *Options) (SchemaStatus, error) {
	return schemaCall(ctx, o, func(d *driver) func(context.Context, Options) (SchemaStatus, error) { return d.status })
}

// Migrate applies the pending migrations of the store o names ([Open]
// does it first) and returns the status after them (PostgreSQL: see
// [MigratePostgres]). It returns [ErrNoMigrations] for a backend without
// them.
func Migrate(ctx context.Context, o *Options) (SchemaStatus, error) {
	return schemaCall(ctx, o, func(d *driver) func(context.Context, Options) (SchemaStatus, error) { return d.migrate })
}

func schemaCall(ctx context.Context, o *Options, pick func(*driver) func(context.Context, Options) (SchemaStatus, error)) (SchemaStatus, error) {
	opts, err := o.withDefaults()
	if err != nil {
		return SchemaStatus{}, err
	}
	f := pick(drivers.get(opts.Spec.Scheme))
	if f == nil {
		return SchemaStatus{}, fmt.Errorf("%w: %v is a %s store", ErrNoMigrations, opts.Spec, opts.Spec.Scheme)
	}
	return f(ctx, opts)
}

// driver is one registered backend: how its specs read and how it opens.
type driver struct {
	scheme  string
	aliases []string // other schemes naming it (postgresql)
	// bare: the scheme alone, with no colon, is a spec (memory); plain:
	// text with no scheme names this backend's target (badger).
	bare, plain bool
	// local: the target is a path on this machine; shared: several
	// processes may open the store at once; kind: what a cold-history
	// handle calls it.
	local, shared bool
	kind          string
	// target checks what follows "scheme:" in text (rest) and returns the
	// target, or an error (a *ValidationError, field "spec") naming the
	// bad part.
	target func(text, rest string) (string, error)
	// text writes a spec of this scheme back, secrets redacted.
	text func(target string) string
	// options checks o's options of this backend (and fills them from
	// spec: PostgreSQL's DSN); nil when it has none (Options.Postgres is
	// then refused).
	options func(spec Spec, o *Options) error
	// open opens the store o names (o.Spec is this driver's, defaults
	// filled in).
	open func(o Options) (backend, error)
	// probe is [Probe] for this driver.
	probe func(ctx context.Context, o Options) (Presence, error)
	// status and migrate are [ReadSchema] and [Migrate] for a backend
	// whose schema has versions an operator migrates; nil for the others.
	status, migrate func(ctx context.Context, o Options) (SchemaStatus, error)
}

func (d *driver) spec(text, rest string) (Spec, error) {
	target, err := d.target(text, rest)
	if err != nil {
		return Spec{}, err
	}
	return Spec{Scheme: d.scheme, Target: target}, nil
}

// registry holds the drivers by scheme and alias.
type registry struct {
	mu sync.RWMutex // protects m
	m  map[string]*driver
}

var drivers registry

// register adds d, panicking on a scheme taken twice (a programmer error,
// as in sql.Register). Each backend's file calls it from init.
func register(d *driver) {
	drivers.mu.Lock()
	defer drivers.mu.Unlock()
	if drivers.m == nil {
		drivers.m = map[string]*driver{}
	}
	for _, s := range append([]string{d.scheme}, d.aliases...) {
		if _, dup := drivers.m[s]; dup {
			panic("store: scheme registered twice: " + s)
		}
		drivers.m[s] = d
	}
}

// plain is the driver of text with no scheme.
func (r *registry) plain() *driver {
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, d := range r.m {
		if d.plain {
			return d
		}
	}
	panic("store: no driver takes a spec without a scheme")
}

func (r *registry) get(scheme string) *driver {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.m[scheme]
}

// schemes lists the registered schemes, sorted.
func (r *registry) schemes() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []string
	for s := range r.m {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// pathTarget is the target check of a scheme whose target is a path
// (what, written as usage): not empty, no NUL byte.
func pathTarget(what, usage string) func(text, rest string) (string, error) {
	return func(text, rest string) (string, error) {
		switch {
		case rest == "":
			return "", invalid("spec", "%q names no %s (%s)", text, what, usage)
		case strings.ContainsRune(rest, 0):
			return "", invalid("spec", "%q: a %s name holds no NUL byte", text, what)
		}
		return rest, nil
	}
}

// StoreSpec returns the spec of the store o names: its Spec, or the spec
// of the Go shorthand it sets (Dir, InMemory, Postgres). It returns
// [ErrInvalid] when o names no store or more than one.
func (o *Options) StoreSpec() (Spec, error) {
	c := *o
	return c.spec()
}
