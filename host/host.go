package host

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/rlmpl/rlmpl/host/handle"
	"github.com/rlmpl/rlmpl/host/mcp"
	"github.com/rlmpl/rlmpl/host/provider"
	"github.com/rlmpl/rlmpl/host/runtime"
	"github.com/rlmpl/rlmpl/lib"
	"github.com/rlmpl/rlmpl/prolog"
	"github.com/rlmpl/rlmpl/tokenizer"
)

// Options configure a [Host]. The zero value (or nil) is valid.
type Options struct {
	// Stdin and Stdout are the sessions' user_input and user_output. Nil
	// means empty input and discarded output.
	Stdin  io.Reader
	Stdout io.Writer
	// Stderr is where print_message/2 writes warnings and errors. Nil
	// means Stdout.
	Stderr io.Writer
	// FS is the file system scripts may consult and open for reading, and
	// the one that conversation_import/3, project_instructions, skills,
	// mcp_tools and token_encoding_register read. Nil means none. NB:
	// os.DirFS follows symbolic links out of its directory; confine a
	// directory with (*os.Root).FS, which refuses them (a permission
	// error names the path).
	FS fs.FS
	// Argv is the argv flag of every session (a script's arguments).
	Argv []string
	// Reload returns the current text of a source a session consulted
	// with [Session.Consult] under name, for make/0. Nil means make/0
	// reloads only what consult/1 loaded through FS.
	Reload func(name string) (string, error)
	// Logger receives diagnostics. Nil discards them.
	Logger *slog.Logger
	// Now is the clock. Nil means time.Now.
	Now func() time.Time
	// QueryTimeout bounds every query a session runs. Zero means no limit
	// beyond the caller's context.
	QueryTimeout time.Duration
	// Tokenizers counts tokens. Nil means the built-in registry
	// (tokenizer.New(nil)).
	Tokenizers *tokenizer.Registry
	// Providers are model providers by name (provider(Name) in Prolog),
	// used as they are. Other names resolve through ProviderConfig, the
	// environment and host/provider's presets (provider.Resolve).
	Providers map[string]provider.Provider
	// ProviderConfig is the configuration file's providers and default
	// (provider.ParseConfig). Nil means none.
	ProviderConfig *provider.Config
	// MCPServers are the MCP servers every session knows, by name (the
	// configuration file's, mcp.ParseConfig); mcp_server/3 adds more to a
	// session. Each session starts its own, at first use or with the
	// session (StartWithSession), and stops them when it closes.
	MCPServers map[string]mcp.Server
	// Environ is the environment of stdio MCP servers (under their own
	// env). Nil means none: the CLI passes os.Environ().
	Environ []string
	// Getenv reads the environment: credentials at request time (a
	// provider's credential is an environment variable name, never a key)
	// and the conventions that configure providers (OPENAI_BASE_URL, ...).
	// Nil means no environment: only providers without credentials work.
	// The CLI passes os.Getenv.
	Getenv func(string) string
	// StateDir is the root of persistent conversation stores:
	// conversation_store_open(persist(Dir), _) with a relative Dir (one
	// plain path segment) opens StateDir/Dir. Empty means programs can
	// open memory stores only (and Grants).
	StateDir string
	// Grants are further absolute directories programs may open as stores.
	Grants []string
	// TracerProvider, when set, traces managed turns (runtime.Options'
	// field of the same name; the caller flushes and shuts it down). Nil
	// means no tracing.
	TracerProvider trace.TracerProvider
	// TraceContent records message content in spans (the GenAI
	// conventions' opt-in attributes).
	TraceContent bool
}

func (o *Options) withDefaults() (Options, error) {
	var v Options
	if o != nil {
		v = *o
	}
	if v.QueryTimeout < 0 {
		return v, fmt.Errorf("host: Options.QueryTimeout: must be >= 0 (got %v)", v.QueryTimeout)
	}
	if v.Logger == nil {
		v.Logger = slog.New(slog.DiscardHandler)
	}
	if v.Now == nil {
		v.Now = time.Now
	}
	return v, nil
}

// Host owns what sessions share: configuration today, the store and the
// tokenizer registry as they arrive. It is safe for concurrent use; the
// Sessions it makes are not.
type Host struct {
	opts     Options
	toks     atomic.Pointer[tokenizer.Registry] // replaced whole when an encoding is added
	rt       *runtime.Runtime                   // stores and conversations, shared by the sessions
	schema   schemaCache                        // lib's option schemas
	defaults defaultsCache                      // lib's policy, for Go callers

	defaultNames struct { // lib's default_provider/1, for Go callers
		once  sync.Once
		names []string
		err   error
	}

	mu sync.Mutex // serializes addEncoding
}

// Close closes every conversation store the host's sessions opened.
func (h *Host) Close() error { return h.rt.Close() }

// Runtime is the host's typed Go API (stores, conversations, packs), shared
// with its sessions.
func (h *Host) Runtime() *runtime.Runtime { return h.rt }

// ErrClosed is returned by a closed Session.
var ErrClosed = errors.New("host: session closed")

// New validates opts and returns a Host.
func New(opts *Options) (*Host, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	h := &Host{opts: o}
	toks := o.Tokenizers
	if toks == nil {
		if toks, err = tokenizer.New(nil); err != nil {
			return nil, fmt.Errorf("host: tokenizers: %w", err)
		}
	}
	h.toks.Store(toks)
	var prices provider.Prices
	if o.ProviderConfig != nil {
		prices = o.ProviderConfig.Prices
	}
	h.rt, err = runtime.New(&runtime.Options{StateDir: o.StateDir, Grants: o.Grants, Now: o.Now,
		Tokenizers: h.tokenizers, Logger: o.Logger, Prices: prices, TracerProvider: o.TracerProvider, TraceContent: o.TraceContent})
	if err != nil {
		return nil, fmt.Errorf("host: %w", err)
	}
	return h, nil
}

func (h *Host) tokenizers() *tokenizer.Registry { return h.toks.Load() }

// addEncoding registers enc for every session of the host.
func (h *Host) addEncoding(enc *tokenizer.Encoding) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	next, err := h.tokenizers().With(&tokenizer.Options{Encodings: []*tokenizer.Encoding{enc}})
	if err != nil {
		return err
	}
	h.toks.Store(next)
	return nil
}

// Session is one interpreter loaded with lib/ and every foreign predicate
// family. A Session is not safe for concurrent use: one goroutine owns it
// (ichiban mutates shared maps without locks, and a race kills the process).
// Several Sessions may run in parallel. Creating one costs about a
// millisecond, so per-request sessions are fine.
type Session struct {
	host     *Host
	in       *prolog.Interpreter
	handles  *handle.Registry
	adapters adapters // Prolog-defined context adapters (pred_adapter.go)
	tokens   cancelTokens
	turns    turnTasks    // async turns
	pol      *Defaults    // lib's policy facts, read at first use
	mcp      *mcp.Servers // MCP servers, made at first use (pred_mcp.go)
	defaults Defaults     // what '$rlm_defaults' read (Host.Defaults)
	closed   bool
}

// NewSession builds an interpreter, installs the predicate table and
// consults lib/*.pl.
func (h *Host) NewSession(ctx context.Context) (*Session, error) {
	in := prolog.New(&prolog.Options{
		Stdin:    h.opts.Stdin,
		Stdout:   h.opts.Stdout,
		Stderr:   h.opts.Stderr,
		Now:      h.opts.Now,
		FS:       h.opts.FS,
		Argv:     h.opts.Argv,
		Reload:   h.opts.Reload,
		MapError: mapError,
	})
	s := &Session{host: h, in: in, handles: handle.New(&handle.Options{Now: h.opts.Now})}
	if slices.ContainsFunc(slices.Collect(maps.Values(h.opts.MCPServers)), func(srv mcp.Server) bool { return srv.StartWithSession }) {
		servers, err := s.mcpServers()
		if err != nil {
			return nil, err
		}
		servers.Start()
	}
	in.Install(s.predicates()...)
	texts, err := libTexts()
	if err == nil {
		err = in.ConsultShared(ctx, texts)
	}
	if err != nil {
		return nil, fmt.Errorf("host: loading lib: %w", err)
	}
	return s, nil
}

// Handles is the session's context-handle registry.
func (s *Session) Handles() *handle.Registry { return s.handles }

// Interpreter exposes the session's interpreter (for the REPL and tests).
func (s *Session) Interpreter() *prolog.Interpreter { return s.in }

func (s *Session) queryContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if t := s.host.opts.QueryTimeout; t > 0 {
		return context.WithTimeout(ctx, t)
	}
	return context.WithCancel(ctx)
}

// Consult loads Prolog text; name is used in error positions.
func (s *Session) Consult(ctx context.Context, name, text string) error {
	if s.closed {
		return ErrClosed
	}
	ctx, cancel := s.queryContext(ctx)
	defer cancel()
	return wrapPrologError(s.in, s.in.Consult(ctx, name, text))
}

// RunMain runs the goals declared with initialization(Goal, main).
func (s *Session) RunMain(ctx context.Context) error {
	if s.closed {
		return ErrClosed
	}
	ctx, cancel := s.queryContext(ctx)
	defer cancel()
	return wrapPrologError(s.in, s.in.RunMain(ctx))
}

// Query is an open query of a Session; Err reports uncaught Prolog
// exceptions as *[PrologError].
type Query struct {
	*prolog.Query
	s      *Session
	cancel context.CancelFunc
}

// Err returns the error that ended the query.
func (q *Query) Err() error { return wrapPrologError(q.s.in, q.Query.Err()) }

// Close ends the query; the caller must call it.
func (q *Query) Close() error {
	defer q.cancel()
	return q.Query.Close()
}

// Query starts goal under Options.QueryTimeout. The caller must Close the
// returned query.
func (s *Session) Query(ctx context.Context, goal string) (*Query, error) {
	if s.closed {
		return nil, ErrClosed
	}
	ctx, cancel := s.queryContext(ctx)
	q, err := s.in.Query(ctx, goal)
	if err != nil {
		cancel()
		return nil, wrapPrologError(s.in, err)
	}
	return &Query{Query: q, s: s, cancel: cancel}, nil
}

// Once runs goal for its first solution and returns its bindings rendered
// with writeq. A failing goal returns [ErrNoSolution].
func (s *Session) Once(ctx context.Context, goal string) (map[string]string, error) {
	if s.closed {
		return nil, ErrClosed
	}
	ctx, cancel := s.queryContext(ctx)
	defer cancel()
	bs, err := s.in.Once(ctx, goal)
	if errors.Is(err, prolog.ErrNoSolution) {
		return nil, fmt.Errorf("%w: %s", ErrNoSolution, goal)
	}
	if err != nil {
		return nil, wrapPrologError(s.in, err)
	}
	out := make(map[string]string, len(bs))
	for _, b := range bs {
		out[b.Name] = s.in.WriteQ(b.Value, nil)
	}
	return out, nil
}

// libTexts are lib's files, read once per process (a session consults
// them all).
var libTexts = sync.OnceValues(func() ([]prolog.Text, error) {
	names, err := fs.Glob(lib.FS, "*.pl")
	if err != nil {
		return nil, err
	}
	texts := make([]prolog.Text, len(names))
	for i, n := range names {
		b, err := fs.ReadFile(lib.FS, n)
		if err != nil {
			return nil, err
		}
		texts[i] = prolog.Text{Name: n, Text: string(b)}
	}
	return texts, nil
})

// Close releases the session: async turns still running are cancelled
// (their cleanup runs) and waited for, then its MCP servers are stopped.
// Further use returns [ErrClosed].
func (s *Session) Close() error {
	s.turns.closeAll()
	s.closed = true
	if s.mcp != nil {
		return s.mcp.Close() // after the turns that could call them
	}
	return nil
}
