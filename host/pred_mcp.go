package host

// MCP family: tools from MCP servers (host/mcp); a turn's mcp(Grants)
// option is read in pred_turn.go.
//
//	mcp_server(+Name, +Options, -Outcome) is det.
//	mcp_tools(+Server, +Options, -Outcome) is det.

import (
	"errors"
	"time"

	"github.com/ichiban/prolog/engine"

	"github.com/rlmpl/rlmpl/host/mcp"
	"github.com/rlmpl/rlmpl/prolog"
	"github.com/rlmpl/rlmpl/tokenizer"
)

// MCPServers returns a new set of the configured MCP servers
// (Options.MCPServers), none started, for a Go caller's session (the
// CLI's chat): the caller closes it. Errors are *mcp.ConfigError.
func (h *Host) MCPServers() (*mcp.Servers, error) {
	o := h.opts
	return mcp.New(o.MCPServers, &mcp.Options{Logger: o.Logger, Environ: o.Environ, Getenv: o.Getenv, Version: Version})
}

// mcpServers are the session's MCP servers, made at first use.
func (s *Session) mcpServers() (*mcp.Servers, error) {
	if s.mcp != nil {
		return s.mcp, nil
	}
	servers, err := s.host.MCPServers()
	if err != nil {
		return nil, err
	}
	s.mcp = servers
	return servers, nil
}

// mcpServer configures a server for the session. Types are checked by
// the option schema; what only a configuration can judge (a credential
// that is not env(V), a second configuration under one name) is an
// outcome.
func (s *Session) mcpServer(c *prolog.Call, name, options, out engine.Term) (bool, error) {
	n, err := c.Atom(name)
	if err != nil {
		return false, err
	}
	op, err := s.options(c, "mcp_server/3", options)
	if err != nil {
		return false, err
	}
	srv := mcp.Server{Name: n, Command: op.text("command"), URL: op.text("url"), MaxToolTokens: op.int("max_tool_tokens"),
		StartWithSession: op.atom("start") == "session"}
	if op.has("args") {
		elems, _ := c.List(op.term("args"))
		for _, e := range elems {
			a, _ := c.Text(e) // checked: list(text)
			srv.Args = append(srv.Args, a)
		}
	}
	if srv.Env, err = textPairs(c, op, "env"); err != nil {
		return false, err
	}
	if srv.Headers, err = textPairs(c, op, "headers"); err != nil {
		return false, err
	}
	if op.has("credential") {
		cred, ok := credentialOf(c, op.term("credential"))
		if !ok || cred == "" {
			return s.fail(c, out, phMCP, &mcp.ConfigError{Server: n, Field: "credential", Message: "a credential is env(VARIABLE), the environment variable holding a bearer token; tokens are never written in a program (the value given is not shown)"})
		}
		srv.Credential = cred
	}
	for key, dst := range map[string]*time.Duration{"timeout": &srv.Timeout, "start_timeout": &srv.StartTimeout} {
		if op.has(key) {
			*dst = time.Duration(min(op.number(key), 86400) * float64(time.Second))
		}
	}
	servers, err := s.mcpServers()
	if err == nil {
		err = servers.Add(srv)
	}
	if err != nil {
		return s.fail(c, out, phMCP, err)
	}
	return c.Unify(out, ok(engine.NewAtom("mcp_server").Apply(engine.NewAtom(n)))), nil
}

// textPairs reads the option key's [Name-Value, ...] (nil when absent).
func textPairs(c *prolog.Call, op opts, key string) (map[string]string, error) {
	if !op.has(key) {
		return nil, nil
	}
	elems, _ := c.List(op.term(key))
	out := make(map[string]string, len(elems))
	for _, e := range elems {
		pair, isPair := c.Resolve(e).(engine.Compound)
		if !isPair || pair.Functor().String() != "-" || pair.Arity() != 2 {
			return nil, prolog.TypeError("pair", prolog.Resolved(e, c.Env))
		}
		k, err := c.Text(pair.Arg(0))
		if err != nil {
			return nil, err
		}
		v, err := c.Text(pair.Arg(1))
		if err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, nil
}

// mcpTools lists a server's tools with the tokens of each definition.
func (s *Session) mcpTools(c *prolog.Call, server, options, out engine.Term) (bool, error) {
	n, err := c.Atom(server)
	if err != nil {
		return false, err
	}
	op, err := s.options(c, "mcp_tools/3", options)
	if err != nil {
		return false, err
	}
	reg := s.host.tokenizers()
	counter := reg.Estimator()
	switch {
	case op.has("encoding"):
		counter, err = reg.CounterForEncoding(op.atom("encoding"))
	case op.has("model"):
		counter, err = reg.Counter(op.atom("model"))
		if errors.Is(err, tokenizer.ErrUnknownModel) {
			counter, err = reg.Estimator(), nil
		}
	}
	if err != nil {
		return s.fail(c, out, phCount, err)
	}
	servers, err := s.mcpServers()
	if err != nil {
		return s.fail(c, out, phMCP, err)
	}
	tools, err := servers.Tools(c.Ctx, n)
	if err != nil {
		return s.fail(c, out, phMCP, err)
	}
	per, _ := mcp.Count(counter, tools)
	terms := make([]engine.Term, len(tools))
	for i, t := range tools {
		terms[i] = record("mcp_tool", fld("description", prolog.Chars(t.Description)), fld("function", engine.NewAtom(t.FunctionName())),
			fld("name", engine.NewAtom(t.Name)), fld("schema", prolog.Chars(string(t.InputSchema))), fld("tokens", countTerm(per[i])))
	}
	return c.Unify(out, ok(engine.List(terms...))), nil
}

// mcpGrants reads a turn's mcp(Grants): Server, or Server-Tools with
// Tools names or patterns (atoms or text). A malformed grant is a type
// error; a bad name or pattern a domain error.
func mcpGrants(c *prolog.Call, t engine.Term) ([]mcp.Grant, error) {
	elems, err := c.List(t)
	if err != nil {
		return nil, err
	}
	grants := make([]mcp.Grant, 0, len(elems))
	for _, e := range elems {
		var g mcp.Grant
		switch v := c.Resolve(e).(type) {
		case engine.Atom:
			g.Server = v.String()
		case engine.Compound:
			server, isAtom := c.Resolve(v.Arg(0)).(engine.Atom)
			if v.Functor().String() != "-" || v.Arity() != 2 || !isAtom {
				return nil, prolog.TypeError("mcp_grant", prolog.Resolved(e, c.Env))
			}
			g.Server, g.Tools = server.String(), []string{}
			tools, err := c.List(v.Arg(1))
			if err != nil {
				return nil, prolog.TypeError("mcp_grant", prolog.Resolved(e, c.Env))
			}
			for _, tt := range tools {
				name, err := c.Text(tt)
				if err != nil {
					return nil, prolog.TypeError("mcp_grant", prolog.Resolved(e, c.Env))
				}
				g.Tools = append(g.Tools, name)
			}
		default:
			return nil, prolog.TypeError("mcp_grant", prolog.Resolved(e, c.Env))
		}
		if g.Validate() != nil || g.Tools != nil && len(g.Tools) == 0 {
			return nil, prolog.DomainError("mcp_grant", prolog.Resolved(e, c.Env))
		}
		grants = append(grants, g)
	}
	return grants, nil
}
