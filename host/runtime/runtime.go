package runtime

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/rlmpl/rlmpl/host/provider"
	"github.com/rlmpl/rlmpl/tokenizer"
)

// Options configure a [Runtime]. A nil *Options is valid: in-memory stores
// only, the built-in tokenizers, the wall clock.
type Options struct {
	// StateDir is the root of persistent stores: a store directory named by
	// a relative path lives under it. Empty means no persistent store can be
	// opened except the Grants. The token calibration of providers whose
	// models have no known tokenizer is kept there too
	// (token-calibration.json); with none, in memory.
	StateDir string
	// Grants are further directories a program may open as stores, by their
	// absolute path (the CLI's --grant). Nothing else outside StateDir is
	// reachable.
	Grants []string
	// Now is the clock of stored messages and of turn timings. Nil means
	// time.Now.
	Now func() time.Time
	// Tokenizers returns the registry that counts tokens; it is called per
	// operation, so encodings registered later are seen. Nil means the
	// built-in registry.
	Tokenizers func() *tokenizer.Registry
	// Logger receives store diagnostics. Nil discards them.
	Logger *slog.Logger
	// TracerProvider, when set, receives a span per managed turn and,
	// under it, per pack, provider call, tool call and cold-history search
	// (see trace.go: the GenAI semantic conventions). Nil means no tracing,
	// at no cost.
	TracerProvider trace.TracerProvider
	// TraceContent records message content in spans (requests, answers,
	// tool arguments and results, search queries: the conventions'
	// opt-in attributes). False records counts, ids and hashes only.
	TraceContent bool
	// Prices turn the usage a provider reports into each receipt call's
	// cost (ReceiptCall.CostUSD). Nil prices nothing: there is no default
	// table.
	Prices provider.Prices
}

// Runtime is the typed Go API of rlmpl: conversation stores, durable
// conversations, packs. The Prolog predicates, the CLI and Go programs all
// call it. A Runtime is safe for concurrent use.
type Runtime struct {
	opts   Options
	tracer trace.Tracer // nil when tracing is off

	mu     sync.Mutex // protects the fields below
	next   int
	byID   map[string]*Store
	byKey  map[string]*Store
	closed bool

	stale         staleCache  // warm artifacts checked against their source
	sectionCounts countCache  // counts of recurring section texts
	recipes       recipeCache // the last planner requests of turns, for the next turn's cache prefix
	calibrations  calibrations
}

// New validates opts and returns a Runtime.
func New(opts *Options) (*Runtime, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.StateDir != "" {
		abs, err := filepath.Abs(o.StateDir)
		if err != nil {
			return nil, fmt.Errorf("runtime: Options.StateDir: %w", err)
		}
		o.StateDir = abs
	}
	for i, g := range o.Grants {
		if !filepath.IsAbs(g) {
			return nil, fmt.Errorf("runtime: Options.Grants[%d]: must be an absolute path (got %q)", i, g)
		}
		o.Grants[i] = filepath.Clean(g)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Tokenizers == nil {
		reg, err := tokenizer.New(nil)
		if err != nil {
			return nil, fmt.Errorf("runtime: tokenizers: %w", err)
		}
		o.Tokenizers = func() *tokenizer.Registry { return reg }
	}
	rt := &Runtime{opts: o, byID: map[string]*Store{}, byKey: map[string]*Store{}}
	if o.StateDir != "" {
		rt.calibrations.path = filepath.Join(o.StateDir, calibrationFile)
	}
	if o.TracerProvider != nil {
		rt.tracer = o.TracerProvider.Tracer(tracerName)
	}
	return rt, nil
}

// Tokenizers returns the current tokenizer registry.
func (r *Runtime) Tokenizers() *tokenizer.Registry { return r.opts.Tokenizers() }

// Close closes every store still open.
func (r *Runtime) Close() error {
	r.mu.Lock()
	all := make([]*Store, 0, len(r.byID))
	for _, s := range r.byID {
		all = append(all, s)
	}
	r.byID, r.byKey, r.closed = map[string]*Store{}, map[string]*Store{}, true
	r.mu.Unlock()
	var errs []error
	for _, s := range all {
		errs = append(errs, s.db.Close())
	}
	return errors.Join(errs...)
}
