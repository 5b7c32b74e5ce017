package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/rlmpl/rlmpl/host"
	"github.com/rlmpl/rlmpl/host/mcp"
	"github.com/rlmpl/rlmpl/host/provider"
	"github.com/rlmpl/rlmpl/tokenizer"
)

const mcpSynopsis = "mcp list [SERVER...] [--model M] [--json]"

// runMCP implements `rlmpl mcp list`: each configured MCP server (or
// those named), started for the occasion, with its tools and the tokens
// each definition costs in a request's tool stage; --json prints one
// server per line.
func runMCP(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if code, ok := groupHelp(args, mcpSynopsis, stdout, stderr); !ok {
		return code
	}
	if args[0] != "list" {
		fmt.Fprintf(stderr, "rlmpl mcp: unknown subcommand %q\nusage: rlmpl %s\n", args[0], mcpSynopsis)
		return 2
	}
	fs := flag.NewFlagSet("mcp list", flag.ContinueOnError)
	model := fs.String("model", "", "count with this model's tokenizer (default: the default provider's model, else the estimator)")
	asJSON := fs.Bool("json", false, "JSON Lines: one server per line")
	lf := addLogFlags(fs)
	names, code, ok := parseCommand(fs, mcpSynopsis, args[1:], stdout, stderr)
	if !ok {
		return code
	}
	opts := &host.Options{}
	if err := providerSetup(opts); err != nil {
		return failed(stderr, "rlmpl mcp list", err)
	}
	if err := lf.setup(stderr)(opts); err != nil {
		fmt.Fprintf(stderr, "rlmpl mcp list: %v\n", err)
		return 2
	}
	h, err := host.New(opts)
	if err != nil {
		fmt.Fprintf(stderr, "rlmpl mcp list: %v\n", err)
		return 1
	}
	defer h.Close()
	servers, err := h.MCPServers()
	if err != nil {
		return failed(stderr, "rlmpl mcp list", err)
	}
	defer servers.Close()
	if len(names) == 0 {
		names = servers.Names()
	}
	for _, n := range names {
		if _, ok := servers.Config(n); !ok {
			return failed(stderr, "rlmpl mcp list", &mcp.ConfigError{Server: n, Field: "name", Message: fmt.Sprintf(
				"no [mcp.%s] table in %s (configured: %s)", n, providerConfigPath(), configured(servers))})
		}
	}
	counter, countedFor := mcpCounter(h, opts, *model)
	servers.Start(names...) // side by side: npx may take a while
	rows := make([]mcpServerJSON, len(names))
	for i, n := range names {
		rows[i] = mcpRow(ctx, servers, n, counter)
	}
	if *asJSON {
		for _, r := range rows {
			if err := printJSON(stdout, r); err != nil {
				fmt.Fprintf(stderr, "rlmpl mcp list: %v\n", err)
				return 1
			}
		}
		return 0
	}
	if len(rows) == 0 {
		fmt.Fprintf(stdout, "no MCP servers configured: add an [mcp.NAME] table to %s (docs/mcp.md)\n", providerConfigPath())
		return 0
	}
	fmt.Fprintf(stdout, "definitions counted for %s\n", countedFor)
	for _, r := range rows {
		fmt.Fprintf(stdout, "\n%s  %s %s\n", r.Server, r.Transport, r.Target)
		if r.Error != "" {
			fmt.Fprintf(stdout, "  error: %s\n", r.Error)
			continue
		}
		tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  TOOL\tFUNCTION\tTOKENS\tDESCRIPTION")
		for _, t := range r.Tools {
			fmt.Fprintf(tw, "  %s\t%s\t%d\t%s\n", t.Name, t.Function, t.Tokens, firstLine(t.Description, 60))
		}
		tw.Flush()
		fmt.Fprintf(stdout, "  %d tools, %d tokens (%s), ceiling %d\n", len(r.Tools), r.Tokens, r.Method, r.Ceiling)
	}
	return 0
}

// mcpServerJSON is one server as `mcp list` shows it.
type mcpServerJSON struct {
	Server    string        `json:"server"`
	Transport string        `json:"transport"`
	Target    string        `json:"target"` // the command line, or the URL (never a header value)
	Tools     []mcpToolJSON `json:"tools,omitempty"`
	Tokens    int           `json:"tokens"` // all its definitions, as a request's tool stage charges them
	Method    string        `json:"method,omitempty"`
	Ceiling   int64         `json:"ceiling"` // max_tool_tokens: granted definitions over it fail a turn
	Error     string        `json:"error,omitempty"`
}

type mcpToolJSON struct {
	Name        string `json:"name"`
	Function    string `json:"function"` // the name a model calls it by
	Description string `json:"description,omitempty"`
	Tokens      int    `json:"tokens"`
}

// mcpRow lists one server's tools and counts their definitions.
func mcpRow(ctx context.Context, servers *mcp.Servers, name string, counter tokenizer.Counter) mcpServerJSON {
	cfg, _ := servers.Config(name)
	r := mcpServerJSON{Server: name, Transport: cfg.Transport(), Target: cfg.URL, Ceiling: cfg.MaxToolTokens}
	if r.Ceiling == 0 {
		r.Ceiling = mcp.DefaultMaxToolTokens
	}
	if cfg.Command != "" {
		r.Target = strings.Join(append([]string{cfg.Command}, cfg.Args...), " ")
	}
	tools, err := servers.Tools(ctx, name)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	per, sum := mcp.Count(counter, tools)
	r.Tokens, r.Method = sum.Tokens, sum.Method.String()
	for i, t := range tools {
		r.Tools = append(r.Tools, mcpToolJSON{Name: t.Name, Function: t.FunctionName(), Description: t.Description, Tokens: per[i].Tokens})
	}
	return r
}

// mcpCounter is the counter of --model, else of the default provider's
// model, else the estimator, and what it counts for.
func mcpCounter(h *host.Host, opts *host.Options, model string) (tokenizer.Counter, string) {
	reg, err := tokenizer.New(nil)
	if err != nil {
		return tokenizer.Counter{}, "nothing"
	}
	if model == "" {
		if name, err := provider.DefaultName(opts.ProviderConfig, nil, opts.Getenv); err == nil {
			if r, err := provider.Resolve(name, provider.Settings{}, opts.ProviderConfig, opts.Getenv); err == nil {
				model = r.Options.Model
			}
		}
	}
	if model == "" {
		return reg.Estimator(), "no model (estimated; --model M counts with its tokenizer)"
	}
	c, err := reg.Counter(model)
	if errors.Is(err, tokenizer.ErrUnknownModel) || err != nil {
		return reg.Estimator(), model + " (unknown to the tokenizer: estimated)"
	}
	if e := c.Encoding(); e != nil {
		return c, fmt.Sprintf("%s (%s)", model, e.Name())
	}
	return c, model
}

// configured names the configured servers, for messages.
func configured(servers *mcp.Servers) string {
	if names := servers.Names(); len(names) > 0 {
		return strings.Join(names, ", ")
	}
	return "none"
}

// firstLine is s's first line, cut to n runes.
func firstLine(s string, n int) string {
	s, _, _ = strings.Cut(s, "\n")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// mcpGrants reads chat's --mcp flags (SERVER or SERVER:TOOL,PATTERN,...)
// against the configured servers: a grant of a server not configured is
// a configuration error, found before anything is written.
func mcpGrants(servers *mcp.Servers, flags []string) ([]mcp.Grant, error) {
	var grants []mcp.Grant
	for _, f := range flags {
		g, err := mcp.ParseGrant(f)
		if err != nil {
			return nil, &mcp.ConfigError{Field: "mcp", Message: "--mcp " + f + ": " + strings.TrimPrefix(err.Error(), "mcp: ")}
		}
		if !slices.Contains(servers.Names(), g.Server) {
			return nil, &mcp.ConfigError{Server: g.Server, Field: "name", Message: fmt.Sprintf(
				"--mcp %s: no [mcp.%s] table in %s (configured: %s)", f, g.Server, providerConfigPath(), strings.Join(servers.Names(), ", "))}
		}
		grants = append(grants, g)
	}
	return grants, nil
}
