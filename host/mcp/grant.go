package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rlmpl/rlmpl/tokenizer"
)

// Tool is one tool a server lists.
type Tool struct {
	Server      string
	Name        string // the server's name for it
	Description string
	// InputSchema is the JSON schema of its arguments, compact with keys
	// sorted (so a definition renders the same bytes every time).
	InputSchema json.RawMessage
}

// maxFunctionName is the longest function name providers accept.
const maxFunctionName = 64

// FunctionName is the name a model calls the tool by: the server's name,
// "__" and the tool's, with every character a provider refuses in a
// function name (anything but letters, digits, '_' and '-') replaced by
// '_'; a name over 64 bytes keeps its first 55 and a hash of the whole.
func (t Tool) FunctionName() string {
	name := []byte(t.Server + "__" + t.Name)
	for i, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			name[i] = '_'
		}
	}
	if len(name) <= maxFunctionName {
		return string(name)
	}
	sum := sha256.Sum256([]byte(t.Server + "\x00" + t.Name))
	return string(name[:maxFunctionName-9]) + "_" + hex.EncodeToString(sum[:4])
}

// Definition is the tool as a request offers it to a model.
func (t Tool) Definition() tokenizer.Tool {
	return tokenizer.Tool{Type: "function", Function: tokenizer.FunctionDef{Name: t.FunctionName(), Description: t.Description, Parameters: t.InputSchema}}
}

// toolOf reads a listed tool.
func toolOf(server string, t *sdk.Tool) (Tool, error) {
	if t == nil || t.Name == "" {
		return Tool{}, &Error{Server: server, Kind: KindProtocol, Message: "the server lists a tool with no name"}
	}
	schema := t.InputSchema
	if schema == nil {
		schema = map[string]any{"type": "object"}
	}
	b, err := json.Marshal(schema) // maps marshal with sorted keys
	if err != nil {
		return Tool{}, &Error{Server: server, Tool: t.Name, Kind: KindProtocol, Message: "its input schema is not JSON: " + err.Error()}
	}
	return Tool{Server: server, Name: t.Name, Description: t.Description, InputSchema: b}, nil
}

// Grant allows a model the tools of one server: those named in Tools
// (exact names, or patterns with *, ? and [...] as path.Match reads
// them), or, when Tools is empty, every tool the server lists. What a
// grant allows is fixed the first time its Servers resolve it: a tool the
// server adds later is not offered, whatever the pattern, until a new
// session grants it again; tools it removes are no longer offered.
type Grant struct {
	Server string
	Tools  []string
}

// ParseGrant reads a grant as the CLI writes it: "server", or
// "server:tool,pattern,...".
func ParseGrant(s string) (Grant, error) {
	server, tools, hasTools := strings.Cut(s, ":")
	g := Grant{Server: server}
	if hasTools {
		for _, t := range strings.Split(tools, ",") {
			if t = strings.TrimSpace(t); t != "" {
				g.Tools = append(g.Tools, t)
			}
		}
		if len(g.Tools) == 0 {
			return Grant{}, fmt.Errorf("mcp: grant %q: name at least one tool after the colon, or none and no colon for all", s)
		}
	}
	return g, g.Validate()
}

// Validate checks the server's name and each tool name or pattern.
func (g Grant) Validate() error {
	if !serverName.MatchString(g.Server) {
		return fmt.Errorf("mcp: grant: %q is not a server name", g.Server)
	}
	for _, t := range g.Tools {
		if _, err := path.Match(t, ""); err != nil || t == "" {
			return fmt.Errorf("mcp: grant %s: %q is not a tool name or pattern", g.Server, t)
		}
	}
	return nil
}

// String renders the grant as ParseGrant reads it.
func (g Grant) String() string {
	if len(g.Tools) == 0 {
		return g.Server
	}
	return g.Server + ":" + strings.Join(g.Tools, ",")
}

// key identifies the grant whatever the order of its tools.
func (g Grant) key() string {
	ts := slices.Clone(g.Tools)
	slices.Sort(ts)
	return g.Server + ":" + strings.Join(slices.Compact(ts), ",")
}

// matches reports whether the grant's names and patterns match name.
func (g Grant) matches(name string) bool {
	if len(g.Tools) == 0 {
		return true
	}
	for _, p := range g.Tools {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

func isPattern(s string) bool { return strings.ContainsAny(s, `*?[\`) }

// Toolset is what grants allow now: the tools offered to a model, by
// function name, and the only ones its Call reaches. It is immutable and
// safe for concurrent use.
type Toolset struct {
	servers *Servers
	tools   []Tool // by function name
}

// Grant resolves grants against the servers' current tool lists (listed
// now when not cached; see [Grant] for what is fixed at the first
// resolution). A grant of an unknown server, or one naming a tool its
// server has never listed, is an [*Error]; so is a server that does not
// start or list.
func (s *Servers) Grant(ctx context.Context, grants []Grant) (*Toolset, error) {
	ts := &Toolset{servers: s}
	seen := map[string]Tool{}
	for _, g := range grants {
		if err := g.Validate(); err != nil {
			return nil, err
		}
		listed, err := s.Tools(ctx, g.Server)
		if err != nil {
			return nil, err
		}
		allowed := s.pinned(g, listed)
		if allowed == nil {
			return nil, unknownTools(g, listed)
		}
		for _, t := range listed {
			if !allowed[t.Name] {
				continue
			}
			fn := t.FunctionName()
			if prev, dup := seen[fn]; dup {
				if prev.Server == t.Server && prev.Name == t.Name {
					continue // two grants of one tool
				}
				return nil, &Error{Server: t.Server, Tool: t.Name, Kind: KindProtocol,
					Message: fmt.Sprintf("its function name %s is also that of %s's tool %s", fn, prev.Server, prev.Name)}
			}
			seen[fn] = t
			ts.tools = append(ts.tools, t)
		}
	}
	slices.SortFunc(ts.tools, func(a, b Tool) int { return strings.Compare(a.FunctionName(), b.FunctionName()) })
	return ts, nil
}

// pinned returns the names g allows among listed: those it matched the
// first time it was resolved, still listed. It returns nil on that first
// resolution when an exact name of g is not listed.
func (s *Servers) pinned(g Grant, listed []Tool) map[string]bool {
	now := map[string]bool{}
	for _, t := range listed {
		if g.matches(t.Name) {
			now[t.Name] = true
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	pin, ok := s.pins[g.key()]
	if !ok {
		for _, name := range g.Tools {
			if !isPattern(name) && !now[name] {
				return nil
			}
		}
		s.pins[g.key()] = now
		return now
	}
	for name := range now {
		if !pin[name] {
			delete(now, name) // added after the grant: not allowed
		}
	}
	return now
}

func unknownTools(g Grant, listed []Tool) error {
	var missing, names []string
	for _, t := range listed {
		names = append(names, t.Name)
	}
	for _, name := range g.Tools {
		if !isPattern(name) && !slices.Contains(names, name) {
			missing = append(missing, name)
		}
	}
	return &Error{Server: g.Server, Tool: strings.Join(missing, ","), Kind: KindUnknownTool,
		Message: fmt.Sprintf("the server lists no such tool (it lists: %s)", orNone(names))}
}

// Tools returns the tools allowed, sorted by function name. The caller
// must not modify the result.
func (ts *Toolset) Tools() []Tool { return ts.tools }

// Lookup returns the allowed tool called fn (its function name).
func (ts *Toolset) Lookup(fn string) (Tool, bool) {
	i := slices.IndexFunc(ts.tools, func(t Tool) bool { return t.FunctionName() == fn })
	if i < 0 {
		return Tool{}, false
	}
	return ts.tools[i], true
}

// Call calls the allowed tool called fn (see [Servers.Call]); any other
// name is refused (KindNotGranted) without reaching a server.
func (ts *Toolset) Call(ctx context.Context, fn string, args json.RawMessage) (Tool, *Result, error) {
	t, ok := ts.Lookup(fn)
	if !ok {
		server, tool, _ := strings.Cut(fn, "__")
		return Tool{}, nil, &Error{Server: server, Tool: tool, Kind: KindNotGranted, Message: fmt.Sprintf("no grant allows %s", fn)}
	}
	res, err := ts.servers.Call(ctx, t.Server, t.Name, args)
	return t, res, err
}

// Cost is what one server's tools cost in a request.
type Cost struct {
	Server string
	Tools  []Tool
	// PerTool are the tokens of each tool's definition, as the request
	// renders it (in Tools' order); Tokens their sum.
	PerTool []tokenizer.Count
	Tokens  tokenizer.Count
	Limit   int64 // the server's ceiling
}

// Costs counts the allowed tools' definitions per server with c, as the
// request's tool stage charges them, in server order, and checks each
// server's ceiling: the first server over it is a [*CeilingError].
func (ts *Toolset) Costs(c tokenizer.Counter) ([]Cost, error) {
	var out []Cost
	for _, t := range ts.tools {
		if len(out) == 0 || out[len(out)-1].Server != t.Server {
			srv, _ := ts.servers.Config(t.Server)
			out = append(out, Cost{Server: t.Server, Limit: srv.withDefaults().MaxToolTokens})
		}
		out[len(out)-1].Tools = append(out[len(out)-1].Tools, t)
	}
	slices.SortFunc(out, func(a, b Cost) int { return strings.Compare(a.Server, b.Server) })
	for i := range out {
		out[i].PerTool, out[i].Tokens = Count(c, out[i].Tools)
		if n := out[i].Tokens.Tokens; int64(n) > out[i].Limit {
			return out, &CeilingError{Server: out[i].Server, Tools: len(out[i].Tools), Tokens: n, Limit: out[i].Limit}
		}
	}
	return out, nil
}

// Count counts tools' definitions with c as a request's tool stage
// charges them: each one's tokens, and their sum (the tool block's own
// framing, shared by every tool of a request, is not in it).
func Count(c tokenizer.Counter, tools []Tool) ([]tokenizer.Count, tokenizer.Count) {
	req := tokenizer.Request{Tools: make([]tokenizer.Tool, len(tools))}
	for i, t := range tools {
		req.Tools[i] = t.Definition()
	}
	per := make([]tokenizer.Count, len(tools))
	var sum tokenizer.Count
	for _, st := range c.CountRequest(&req).Stages {
		if st.Kind == tokenizer.StageTool {
			per[st.Index] = st.Count
			sum.Tokens += st.Count.Tokens
			if sum.Method == 0 || st.Count.Method == tokenizer.Estimated {
				sum.Method, sum.Basis, sum.Encoding = st.Count.Method, st.Count.Basis, st.Count.Encoding
			}
		}
	}
	if sum.Method == 0 {
		sum.Method = tokenizer.Exact // nothing to count is exactly 0
	}
	return per, sum
}
