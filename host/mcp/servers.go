package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"os/exec"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options configure [Servers]. The zero value (or nil) is valid.
type Options struct {
	// Logger receives each server's stderr (one record per line, with the
	// server's name) and its starts and exits. Nil discards them.
	Logger *slog.Logger
	// Environ is the environment of stdio servers, under their Env. Nil
	// means none but their Env (the CLI passes os.Environ()).
	Environ []string
	// Getenv reads credentials and "env:" header values when an HTTP
	// server is connected. Nil means no environment: such a server fails
	// to start, saying which variable is missing.
	Getenv func(string) string
	// Version is the client version sent to servers ("rlmpl" is the name).
	// Empty means "dev".
	Version string
}

// Servers are the MCP servers of one session (a Prolog session, a chat):
// each is started on first use, or by [Servers.Start], and stopped by
// [Servers.Close]; its tool list is cached until the server says it
// changed (notifications/tools/list_changed). A server that exits or
// breaks the protocol is dropped, and started again at the next use.
// Servers is safe for concurrent use.
type Servers struct {
	opts Options

	mu     sync.Mutex // protects the fields below
	conf   map[string]Server
	conns  map[string]*conn
	pins   map[string]map[string]bool // grant → the tools it allowed when first resolved
	closed bool
}

// New returns the servers of conf (by name, each validated), none started.
func New(conf map[string]Server, opts *Options) (*Servers, error) {
	s := &Servers{conf: map[string]Server{}, conns: map[string]*conn{}, pins: map[string]map[string]bool{}}
	if opts != nil {
		s.opts = *opts
	}
	if s.opts.Logger == nil {
		s.opts.Logger = slog.New(slog.DiscardHandler)
	}
	if s.opts.Version == "" {
		s.opts.Version = "dev"
	}
	for _, name := range slices.Sorted(maps.Keys(conf)) {
		srv := conf[name]
		if srv.Name == "" {
			srv.Name = name
		}
		if srv.Name != name {
			return nil, &ConfigError{Server: name, Field: "name", Message: fmt.Sprintf("configured as %s but named %s", name, srv.Name)}
		}
		if err := srv.Validate(); err != nil {
			return nil, err
		}
		s.conf[name] = srv
	}
	return s, nil
}

// ErrClosed is returned by closed Servers.
var ErrClosed = errors.New("mcp: servers closed")

// Add configures one more server (from a program, at run time). The same
// configuration under the same name again is no change; another one is a
// [*ConfigError]: a running server is not replaced behind its users.
func (s *Servers) Add(srv Server) error {
	if err := srv.Validate(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if old, ok := s.conf[srv.Name]; ok {
		if reflect.DeepEqual(old.withDefaults(), srv.withDefaults()) {
			return nil
		}
		return &ConfigError{Server: srv.Name, Field: "name", Message: "a server of this name is configured already, differently"}
	}
	s.conf[srv.Name] = srv
	return nil
}

// Names returns the configured servers' names, sorted.
func (s *Servers) Names() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.conf))
}

// Config returns the configuration of the server called name.
func (s *Servers) Config(name string) (Server, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	srv, ok := s.conf[name]
	return srv, ok
}

// Start starts, in the background, the servers named and those configured
// to start with their session (StartWithSession); their first use waits
// for them. Unknown names are ignored (their use reports them).
func (s *Servers) Start(names ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for name, srv := range s.conf {
		if srv.StartWithSession || slices.Contains(names, name) {
			s.connLocked(name)
		}
	}
}

// Close stops every server: a stdio server's input is closed, then it is
// sent SIGTERM and SIGKILL if it does not exit (its process group, so
// that what npx started ends too); an HTTP session is deleted. Calls in
// flight end with an error. Close waits for starts under way.
func (s *Servers) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	conns := slices.Collect(maps.Values(s.conns))
	s.conns = nil
	s.mu.Unlock()
	var errs []error
	for _, c := range conns {
		errs = append(errs, c.close())
	}
	return errors.Join(errs...)
}

// Tools returns the tools the server lists, sorted by name: from the
// cache, or listed now (every page) when the server is new or said its
// list changed. The caller must not modify the result.
func (s *Servers) Tools(ctx context.Context, server string) ([]Tool, error) {
	c, err := s.connect(ctx, server)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.listed {
		tools := c.tools
		c.mu.Unlock()
		return tools, nil
	}
	gen := c.gen
	c.mu.Unlock()
	tools, err := s.list(ctx, c)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.gen == gen { // no list_changed arrived while listing
		c.tools, c.listed = tools, true
	}
	c.mu.Unlock()
	return tools, nil
}

// maxToolPages bounds the pages of one tool list (a server whose cursor
// never ends).
const maxToolPages = 64

func (s *Servers) list(ctx context.Context, c *conn) ([]Tool, error) {
	lctx, cancel := context.WithTimeout(ctx, c.srv.Timeout)
	defer cancel()
	var tools []Tool
	seen := map[string]bool{}
	cursor := ""
	for page := 0; ; page++ {
		if page == maxToolPages {
			return nil, &Error{Server: c.srv.Name, Kind: KindProtocol, Message: fmt.Sprintf("the tool list did not end after %d pages", maxToolPages)}
		}
		res, err := c.cs.ListTools(lctx, &sdk.ListToolsParams{Cursor: cursor})
		if err != nil {
			return nil, s.failure(ctx, c, "", err)
		}
		for _, t := range res.Tools {
			tool, err := toolOf(c.srv.Name, t)
			if err != nil {
				return nil, err
			}
			if seen[tool.Name] {
				return nil, &Error{Server: c.srv.Name, Tool: tool.Name, Kind: KindProtocol, Message: "the server lists this tool twice"}
			}
			seen[tool.Name] = true
			tools = append(tools, tool)
		}
		if cursor = res.NextCursor; cursor == "" {
			break
		}
	}
	sort.Slice(tools, func(i, j int) bool { return tools[i].Name < tools[j].Name })
	return tools, nil
}

// Call calls a tool of the server with args (a JSON object; nil means
// {}), within the server's Timeout: when it passes, or ctx ends, the
// request is cancelled (notifications/cancelled). Errors are [*Error]s,
// except that a done ctx returns ctx.Err(). A result the tool marks as an
// error (isError) is a result, not an error.
func (s *Servers) Call(ctx context.Context, server, tool string, args json.RawMessage) (*Result, error) {
	c, err := s.connect(ctx, server)
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, c.srv.Timeout)
	defer cancel()
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	res, err := c.cs.CallTool(cctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return nil, s.failure(ctx, c, tool, err)
	}
	return resultOf(res), nil
}

// failure turns a request's error into an [*Error] (or ctx.Err() when
// the caller gave up), and drops the connection when it is broken.
func (s *Servers) failure(ctx context.Context, c *conn, tool string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	e := &Error{Server: c.srv.Name, Tool: tool, Err: err}
	var rpc *jsonrpc.Error
	var syntax *json.SyntaxError
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		e.Kind, e.Message = KindTimeout, fmt.Sprintf("no answer within %v (the request was cancelled)", c.srv.Timeout)
		return e.redacted(c.secrets)
	case errors.As(err, &syntax) || strings.Contains(err.Error(), "invalid character") || strings.Contains(err.Error(), "trailing data"):
		e.Kind, e.Message = KindProtocol, "the server sent something that is not MCP: "+err.Error()
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, sdk.ErrConnectionClosed):
		e.Kind, e.Message = KindExited, "the connection ended"
		if c.srv.Command != "" {
			e.Message = "the server exited"
		}
	case errors.As(err, &rpc):
		// The server refused the request (an unknown tool, bad
		// arguments): the connection is fine.
		e.Kind, e.Message = KindRequest, rpc.Message
		return e.redacted(c.secrets)
	default:
		e.Kind, e.Message = KindExited, "the connection failed: "+err.Error()
	}
	if tail := c.stderr.tail(); tail != "" {
		e.Message += "; its last output: " + tail
	}
	s.drop(c)
	return e.redacted(c.secrets)
}

// connect returns the server's connection, started now if it is not, once
// it is ready (or ctx ends).
func (s *Servers) connect(ctx context.Context, name string) (*conn, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, ErrClosed
	}
	if _, ok := s.conf[name]; !ok {
		names := slices.Sorted(maps.Keys(s.conf))
		s.mu.Unlock()
		return nil, &Error{Server: name, Kind: KindUnknownServer, Message: fmt.Sprintf("no MCP server %s is configured (configured: %s)", name, orNone(names))}
	}
	c := s.connLocked(name)
	s.mu.Unlock()
	select {
	case <-c.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if c.err != nil {
		s.drop(c) // the next use tries again
		return nil, c.err
	}
	return c, nil
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// connLocked returns the server's connection, starting one if there is
// none. s.mu is held.
func (s *Servers) connLocked(name string) *conn {
	if c, ok := s.conns[name]; ok {
		return c
	}
	c := &conn{srv: s.conf[name].withDefaults(), ready: make(chan struct{}), stderr: &stderrLog{server: name, log: s.opts.Logger}}
	var ctx context.Context
	ctx, c.cancel = context.WithTimeout(context.Background(), c.srv.StartTimeout)
	s.conns[name] = c
	go s.dial(ctx, c)
	return c
}

// drop forgets c if it is still the server's connection, and closes it.
func (s *Servers) drop(c *conn) {
	s.mu.Lock()
	if s.conns[c.srv.Name] == c {
		delete(s.conns, c.srv.Name)
	}
	s.mu.Unlock()
	go c.close()
}

// dial starts and initializes the server of c, then watches for its end.
func (s *Servers) dial(ctx context.Context, c *conn) {
	defer close(c.ready)
	log := s.opts.Logger.With(slog.String("mcp_server", c.srv.Name))
	client := sdk.NewClient(&sdk.Implementation{Name: "rlmpl", Version: s.opts.Version}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { c.invalidate() },
	})
	transport, err := s.transport(c)
	if err != nil {
		c.err = err
		return
	}
	cs, err := client.Connect(ctx, transport, nil)
	if err != nil {
		msg := "it did not start: " + err.Error()
		if errors.Is(err, context.DeadlineExceeded) {
			msg = fmt.Sprintf("it did not start within %v", c.srv.StartTimeout)
		}
		if tail := c.stderr.tail(); tail != "" {
			msg += "; its last output: " + tail
		}
		c.err = (&Error{Server: c.srv.Name, Kind: KindStart, Message: msg, Err: err}).redacted(c.secrets)
		c.killGroup()
		return
	}
	c.mu.Lock()
	c.cs = cs
	c.mu.Unlock()
	log.Info("mcp server started", slog.String("transport", c.srv.Transport()))
	go func() {
		err := cs.Wait()
		c.invalidate()
		log.Info("mcp server stopped", slog.Any("reason", err))
		s.drop(c)
	}()
}

// transport builds the server's transport: its command (own process
// group, stderr to the log) or its HTTP endpoint (headers and bearer
// token read from the environment now).
func (s *Servers) transport(c *conn) (sdk.Transport, error) {
	srv := c.srv
	if srv.Command != "" {
		cmd := exec.Command(srv.Command, srv.Args...)
		cmd.Env = slices.Clone(s.opts.Environ)
		for _, k := range slices.Sorted(maps.Keys(srv.Env)) {
			cmd.Env = append(cmd.Env, k+"="+srv.Env[k])
		}
		cmd.Stderr = c.stderr
		ownGroup(cmd)
		c.cmd = cmd
		return &sdk.CommandTransport{Command: cmd, TerminateDuration: terminateGrace}, nil
	}
	getenv := s.opts.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	headers := http.Header{}
	var secrets []string
	for k, v := range srv.Headers {
		if name, isEnv := strings.CutPrefix(v, "env:"); isEnv {
			if v = getenv(name); v == "" {
				return nil, &Error{Server: srv.Name, Kind: KindStart, Message: fmt.Sprintf("header %s: the environment variable %s is not set", k, name)}
			}
		}
		headers.Set(k, v)
		secrets = append(secrets, v)
	}
	if srv.Credential != "" {
		token := getenv(srv.Credential)
		if token == "" {
			return nil, &Error{Server: srv.Name, Kind: KindStart, Message: fmt.Sprintf("credential: the environment variable %s is not set", srv.Credential)}
		}
		headers.Set("Authorization", "Bearer "+token)
		secrets = append(secrets, token)
	}
	c.secrets = secrets
	return &sdk.StreamableClientTransport{Endpoint: srv.URL, MaxRetries: -1,
		HTTPClient: &http.Client{Transport: headerTransport{headers: headers, base: http.DefaultTransport}}}, nil
}

// terminateGrace is how long Close waits for a stdio server to exit after
// its input closes, and again after SIGTERM, before SIGKILL.
const terminateGrace = 2 * time.Second

// headerTransport adds the configured headers to every request.
type headerTransport struct {
	headers http.Header
	base    http.RoundTripper
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.headers {
		r.Header[k] = v
	}
	return t.base.RoundTrip(r)
}

// conn is one server's connection.
type conn struct {
	srv     Server
	ready   chan struct{} // closed when the start ended: cs or err is set
	cancel  context.CancelFunc
	err     error
	stderr  *stderrLog
	cmd     *exec.Cmd // a stdio server's process
	secrets []string  // header values and token: redacted from messages

	mu     sync.Mutex // protects the fields below
	cs     *sdk.ClientSession
	tools  []Tool
	listed bool // tools is the current list
	gen    int  // counts list_changed notifications
	closed bool
}

// invalidate drops the cached tool list.
func (c *conn) invalidate() {
	c.mu.Lock()
	c.listed, c.tools = false, nil
	c.gen++
	c.mu.Unlock()
}

// close ends the connection (once): a start under way is cancelled and
// waited for; a stdio server is stopped with its process group.
func (c *conn) close() error {
	c.cancel()
	<-c.ready
	c.mu.Lock()
	cs, closed := c.cs, c.closed
	c.closed = true
	c.mu.Unlock()
	if closed {
		return nil
	}
	var err error
	if cs != nil {
		err = cs.Close()
	}
	c.killGroup()
	if err != nil && c.srv.Command != "" {
		// A server stopped by a signal, or exiting with a status, is a
		// stopped server: not an error of Close.
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			err = nil
		}
	}
	return err
}

// killGroup kills what is left of a stdio server's process group.
func (c *conn) killGroup() {
	if c.cmd != nil && c.cmd.Process != nil {
		killGroup(c.cmd.Process.Pid)
	}
}

// stderrLog logs a server's stderr line by line and keeps the last lines
// for error messages.
type stderrLog struct {
	server string
	log    *slog.Logger

	mu   sync.Mutex // protects the fields below
	part []byte     // an unfinished line
	last []string   // the last lines, at most stderrTail
}

const (
	stderrTail    = 5
	stderrLineMax = 2048
)

func (l *stderrLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.part = append(l.part, p...)
	for {
		i := slices.Index(l.part, '\n')
		if i < 0 {
			if len(l.part) > stderrLineMax {
				l.line(string(l.part[:stderrLineMax]))
				l.part = l.part[:0]
			}
			return len(p), nil
		}
		l.line(string(l.part[:min(i, stderrLineMax)]))
		l.part = l.part[i+1:]
	}
}

func (l *stderrLog) line(s string) {
	s = strings.TrimRight(s, "\r")
	if s == "" {
		return
	}
	l.log.Info("mcp server stderr", slog.String("mcp_server", l.server), slog.String("line", s))
	if l.last = append(l.last, s); len(l.last) > stderrTail {
		l.last = l.last[1:]
	}
}

// tail is the last lines, joined.
func (l *stderrLog) tail() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	lines := l.last
	if len(l.part) > 0 {
		lines = append(slices.Clone(lines), string(l.part))
	}
	return strings.Join(lines, " | ")
}
