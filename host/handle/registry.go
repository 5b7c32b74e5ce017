package handle

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// Options configure a [Registry]. The zero value is valid.
type Options struct {
	// Now is the clock. Nil means time.Now.
	Now func() time.Time
	// NewID returns a fresh unguessable handle id. Nil means 128 random bits
	// in hex.
	NewID func() string
	// Tombstones is how many deleted handles are remembered as stale; older
	// ones become unknown. Zero means 4096.
	Tombstones int
	// TraceEvents is how many trace events each handle keeps (the newest).
	// Zero means 256.
	TraceEvents int
}

// Metadata describes a context without its payload.
type Metadata struct {
	Backend    string // "memory" or "adapter(Name)"
	Kind       string // "text", "terms" or the adapter's kind
	Bytes      int64  // payload bytes; -1 when unknown
	Items      int64  // lines of a text, items of a list; -1 when unknown
	Version    int
	CreatedAt  time.Time
	Adapter    string  // the adapter's name, "" for memory contexts
	Operations []Op    // the operations the handle answers
	Source     []Field // the adapter's model-visible descriptor
}

// size is the canonical size of the model-visible descriptor.
func (m Metadata) size() int { return len(m.Describe()) }

// Describe renders the descriptor canonically (keys in a fixed order), the
// text whose size the adapter metadata cap applies to.
func (m Metadata) Describe() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "backend=%s kind=%s bytes=%d items=%d version=%d", m.Backend, m.Kind, m.Bytes, m.Items, m.Version)
	if m.Adapter != "" {
		fmt.Fprintf(&sb, " adapter=%s", m.Adapter)
	}
	ops := make([]string, len(m.Operations))
	for i, o := range m.Operations {
		ops[i] = string(o)
	}
	fmt.Fprintf(&sb, " operations=[%s]", strings.Join(ops, ","))
	for _, f := range m.Source {
		fmt.Fprintf(&sb, " %s=%v", f.Key, f.Value)
	}
	return sb.String()
}

// Event is one traced operation.
type Event struct {
	Seq            int
	Op             Op
	Ref            Ref
	BytesInspected int
	ItemsInspected int
	BytesReturned  int
	Truncated      bool
	Elapsed        time.Duration
	At             time.Time
}

// Adapter is a trusted, Go-registered source kind (never created from
// model-authored data). A live handle pins its adapter.
type Adapter interface {
	// Name is the adapter's unique name.
	Name() string
	// Operations declares what it answers besides peek(metadata).
	Operations() []Op
	// Describe returns the metadata of source: its kind, item and byte
	// counts (-1 unknown) and a model-visible descriptor (no payload).
	Describe(ctx context.Context, source any) (kind string, items, bytes int64, desc []Field, err error)
	// Do performs req within lim. The registry re-bounds the returned value.
	Do(ctx context.Context, source any, req Request, lim Limits) (Work, error)
}

// Work is what an adapter returns for one operation.
type Work struct {
	Value          any // string, []Item, []Match, []Part, int64
	BytesInspected int
	ItemsInspected int
	Truncated      bool // the adapter itself left something out
	Next           int  // search cursor to continue from; 0 when done
}

// Registry holds the handles of one session (or one host). It is safe for
// concurrent use; operations run outside its lock on immutable payloads.
type Registry struct {
	opts Options

	mu       sync.Mutex // protects the fields below
	live     map[string]*entry
	tombs    map[string]*entry // deleted entries, payload dropped, traces kept
	tombRing []string
	adapters map[string]*adapterEntry
}

type entry struct {
	ref     Ref
	meta    Metadata
	text    *textData
	items   []Item
	adapter *adapterEntry
	source  any

	seq   int
	trace []Event // ring of the newest TraceEvents
}

type adapterEntry struct {
	a    Adapter
	ops  []Op
	live int // live handles pinning it
}

// New returns an empty registry.
func New(opts *Options) *Registry {
	r := &Registry{live: map[string]*entry{}, tombs: map[string]*entry{}, adapters: map[string]*adapterEntry{}}
	if opts != nil {
		r.opts = *opts
	}
	if r.opts.Now == nil {
		r.opts.Now = time.Now
	}
	if r.opts.NewID == nil {
		r.opts.NewID = randomID
	}
	if r.opts.Tombstones == 0 {
		r.opts.Tombstones = 4096
	}
	if r.opts.TraceEvents == 0 {
		r.opts.TraceEvents = 256
	}
	return r
}

func randomID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

var memoryOps = []Op{OpPeek, OpSlice, OpSearch, OpPartition, OpMap, OpReduce}

// RegisterText registers a text context. Items are its lines.
func (r *Registry) RegisterText(text string, lim Limits) (Ref, Metadata, error) {
	if _, err := lim.withDefaults(); err != nil {
		return Ref{}, Metadata{}, err
	}
	td := newTextData(text)
	return r.add(&entry{text: td, meta: Metadata{Backend: "memory", Kind: "text", Bytes: int64(len(text)), Items: int64(len(td.lines)), Operations: memoryOps}})
}

// RegisterTerms registers a list context; Bytes is the sum of the items'
// canonical texts.
func (r *Registry) RegisterTerms(items []Item, lim Limits) (Ref, Metadata, error) {
	if _, err := lim.withDefaults(); err != nil {
		return Ref{}, Metadata{}, err
	}
	items = slices.Clone(items)
	return r.add(&entry{items: items, meta: Metadata{Backend: "memory", Kind: "terms", Bytes: int64(Size(items)), Items: int64(len(items)), Operations: memoryOps}})
}

// RegisterAdapter installs a trusted adapter. Registering the same adapter
// value again is a no-op; another adapter under a taken name is
// [KindAdapterConflict].
func (r *Registry) RegisterAdapter(a Adapter) error {
	ops := a.Operations()
	if a.Name() == "" || len(ops) == 0 {
		return errorf(OpAdapter, KindInvalidAdapter, "an adapter needs a name and at least one operation", F("adapter", a.Name()))
	}
	for _, o := range ops {
		if !slices.Contains(memoryOps, o) {
			return errorf(OpAdapter, KindInvalidAdapter, "unknown operation", F("adapter", a.Name()), F("operation", string(o)))
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if ae, ok := r.adapters[a.Name()]; ok {
		if ae.a == a {
			return nil
		}
		return errorf(OpAdapter, KindAdapterConflict, "another adapter has this name", F("adapter", a.Name()))
	}
	r.adapters[a.Name()] = &adapterEntry{a: a, ops: slices.Clone(ops)}
	return nil
}

// Adapter returns the registered adapter of that name and the operations
// it declared.
func (r *Registry) Adapter(name string) (Adapter, []Op, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ae, ok := r.adapters[name]
	if !ok {
		return nil, nil, false
	}
	return ae.a, slices.Clone(ae.ops), true
}

// UnregisterAdapter removes an adapter no live handle uses.
func (r *Registry) UnregisterAdapter(name string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	ae, ok := r.adapters[name]
	switch {
	case !ok:
		return errorf(OpAdapter, KindAdapterNotRegistered, "no such adapter", F("adapter", name))
	case ae.live > 0:
		return errorf(OpAdapter, KindAdapterInUse, "live handles use this adapter", F("adapter", name), F("handles", ae.live))
	}
	delete(r.adapters, name)
	return nil
}

// RegisterSource creates a handle on source through the named adapter. The
// whole model-visible descriptor must fit lim.MaxBytes: a larger one is
// rejected ([KindAdapterMetadataLarge]) and no handle is created.
func (r *Registry) RegisterSource(ctx context.Context, adapter string, source any, lim Limits) (Ref, Metadata, error) {
	lim, err := lim.withDefaults()
	if err != nil {
		return Ref{}, Metadata{}, err
	}
	r.mu.Lock()
	ae, ok := r.adapters[adapter]
	r.mu.Unlock()
	if !ok {
		return Ref{}, Metadata{}, errorf(OpRegister, KindAdapterNotRegistered, "no such adapter", F("adapter", adapter))
	}
	ctx, cancel := context.WithTimeout(ctx, lim.TimeLimit)
	defer cancel()
	kind, items, bytes, desc, err := ae.a.Describe(ctx, source)
	if err != nil {
		return Ref{}, Metadata{}, adapterError(OpRegister, adapter, err)
	}
	meta := Metadata{Backend: "adapter(" + adapter + ")", Kind: kind, Bytes: bytes, Items: items, Adapter: adapter,
		Operations: append([]Op{OpPeek}, without(ae.ops, OpPeek)...), Source: desc, Version: 1}
	if n := meta.size(); n > lim.MaxBytes {
		return Ref{}, Metadata{}, errorf(OpRegister, KindAdapterMetadataLarge, "adapter metadata exceeds max_bytes",
			F("adapter", adapter), F("bytes", n), F("max_bytes", lim.MaxBytes))
	}
	return r.add(&entry{adapter: ae, source: source, meta: meta})
}

func without(ops []Op, o Op) []Op {
	return slices.DeleteFunc(slices.Clone(ops), func(x Op) bool { return x == o })
}

func adapterError(op Op, adapter string, err error) error {
	var he *Error
	if errors.As(err, &he) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return errorf(op, KindAdapterFailed, err.Error(), F("adapter", adapter))
}

func (r *Registry) add(e *entry) (Ref, Metadata, error) {
	e.ref = Ref{ID: r.opts.NewID(), Version: 1}
	e.meta.Version = 1
	e.meta.CreatedAt = r.opts.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.live[e.ref.ID]; dup {
		return Ref{}, Metadata{}, fmt.Errorf("handle: NewID returned a live id %q", e.ref.ID)
	}
	r.live[e.ref.ID] = e
	if e.adapter != nil {
		e.adapter.live++
	}
	return e.ref, e.meta, nil
}

// resolve finds the live entry of ref.
func (r *Registry) resolve(ref Ref) (*entry, error) {
	if ref.ID == "" || ref.Version < 1 {
		return nil, errorf(OpResolve, KindInvalidHandle, "not a context handle")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if e, ok := r.live[ref.ID]; ok {
		if e.ref.Version != ref.Version {
			return nil, errorf(OpResolve, KindStaleHandle, "handle version is not current", F("current_version", e.ref.Version))
		}
		return e, nil
	}
	if t, ok := r.tombs[ref.ID]; ok {
		return nil, errorf(OpResolve, KindStaleHandle, "handle was deleted", F("deleted_version", t.ref.Version))
	}
	return nil, errorf(OpResolve, KindUnknownHandle, "no such handle")
}

// Metadata returns the handle's descriptor.
func (r *Registry) Metadata(ref Ref) (Metadata, error) {
	e, err := r.resolve(ref)
	if err != nil {
		return Metadata{}, err
	}
	return e.meta, nil
}

// Delete removes the handle, keeping a bounded tombstone with its trace.
func (r *Registry) Delete(ref Ref) error {
	e, err := r.resolve(ref)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.live, ref.ID)
	if e.adapter != nil {
		e.adapter.live--
	}
	tomb := &entry{ref: e.ref, meta: e.meta, seq: e.seq, trace: e.trace}
	r.tombs[ref.ID] = tomb
	r.tombRing = append(r.tombRing, ref.ID)
	if len(r.tombRing) > r.opts.Tombstones {
		delete(r.tombs, r.tombRing[0])
		r.tombRing = r.tombRing[1:]
	}
	return nil
}

// Live returns the number of live handles.
func (r *Registry) Live() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.live)
}

// Trace returns up to limit of the handle's newest events, oldest first.
// Traces of deleted handles stay readable while their tombstone lasts.
func (r *Registry) Trace(ref Ref, limit int) ([]Event, error) {
	if limit < 1 {
		return nil, errorf(OpTrace, KindInvalidLimit, "limit must be a positive integer", F("value", limit))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.live[ref.ID]
	if !ok {
		e, ok = r.tombs[ref.ID]
	}
	if !ok || e.ref.Version != ref.Version {
		return nil, errorf(OpTrace, KindUnknownHandle, "no such handle")
	}
	n := min(limit, len(e.trace))
	return slices.Clone(e.trace[len(e.trace)-n:]), nil
}

func (r *Registry) record(e *entry, ev Event) Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	e.seq++
	ev.Seq = e.seq
	ev.Ref = e.ref
	ev.At = r.opts.Now()
	e.trace = append(e.trace, ev)
	if over := len(e.trace) - r.opts.TraceEvents; over > 0 {
		e.trace = slices.Delete(e.trace, 0, over)
	}
	return ev
}
