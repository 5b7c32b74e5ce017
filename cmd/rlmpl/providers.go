package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/rlmpl/rlmpl/host"
	"github.com/rlmpl/rlmpl/host/mcp"
	"github.com/rlmpl/rlmpl/host/provider"
)

// Providers are named once for every script and command: in the
// configuration file ($XDG_CONFIG_HOME/rlmpl/providers.toml) and in the
// environment's conventions (OPENAI_API_KEY, OPENAI_BASE_URL,
// OPENROUTER_API_KEY, OLLAMA_HOST, ...). The CLI is the one place that reads
// either; host receives the parsed file and os.Getenv, and reads keys
// through it when each request is made.

// providerConfigPath is where the configuration file lives:
// $XDG_CONFIG_HOME/rlmpl/providers.toml, else ~/.config/rlmpl/providers.toml.
func providerConfigPath() string {
	if d := os.Getenv("XDG_CONFIG_HOME"); d != "" {
		return filepath.Join(d, "rlmpl", "providers.toml")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".config", "rlmpl", "providers.toml")
}

// providerSetup hands opts its providers and MCP servers: the
// configuration file, parsed (a missing file is no configuration), the
// environment and os.Getenv. Every command that
// runs models calls it (run, repl, complete, chat). A broken file is an
// error: a script should not silently run against another provider than
// the one its user configured.
func providerSetup(opts *host.Options) error {
	opts.Getenv = os.Getenv
	opts.Environ = os.Environ() // stdio MCP servers run in it
	path := providerConfigPath()
	if path == "" {
		return nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return &provider.ConfigError{Field: "config", Message: err.Error()}
	}
	if opts.ProviderConfig, err = provider.ParseConfig(path, data); err != nil {
		return err
	}
	opts.MCPServers, err = mcp.ParseConfig(path, data)
	return err
}

// runProviders implements `rlmpl providers`: every provider a call may
// name (the presets and the file's), as it resolves here, where each
// setting comes from, whether its key is set (never the key), and the
// default; --json prints one provider per line.
func runProviders(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("providers", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "JSON Lines: one provider per line")
	pos, code, ok := parseCommand(fs, "providers [--json]", args, stdout, stderr)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		fmt.Fprintln(stderr, "usage: rlmpl providers [--json]")
		return 2
	}
	opts := &host.Options{}
	if err := providerSetup(opts); err != nil {
		return failed(stderr, "rlmpl providers", err)
	}
	h, err := host.New(opts)
	if err != nil {
		fmt.Fprintf(stderr, "rlmpl providers: %v\n", err)
		return 1
	}
	defer h.Close()
	def, defErr := h.Provider(ctx, "", provider.Settings{})
	rows := providerRows(opts, def.Name)
	if *asJSON {
		for _, r := range rows {
			if err := printJSON(stdout, r); err != nil {
				fmt.Fprintf(stderr, "rlmpl providers: %v\n", err)
				return 1
			}
		}
		return 0
	}
	if cfg := opts.ProviderConfig; cfg != nil {
		fmt.Fprintf(stdout, "configuration: %s\n", cfg.Path)
	} else {
		fmt.Fprintf(stdout, "configuration: none (%s)\n", providerConfigPath())
	}
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tBASE URL\tMODEL\tKEY\tSTRUCTURED\tAPI")
	for _, r := range rows {
		if r.Error != "" {
			fmt.Fprintf(tw, "%s\t(%s)\t\t\t\t\n", r.Name, r.Error)
			continue
		}
		model, key := "-", "none"
		switch {
		case r.NeedsModel:
			model = "(none: give one)"
		case r.Model != "":
			model = r.Model + " (" + r.From["model"] + ")"
		}
		if r.Credential != "" {
			state := "unset"
			if r.KeySet {
				state = "set"
			}
			key = r.Credential + " (" + state + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%v\t%s\n", r.Name, r.BaseURL+" ("+r.From["base_url"]+")", model, key, r.StructuredOutput, r.API)
	}
	tw.Flush()
	if defErr == nil {
		fmt.Fprintf(stdout, "default: %s\n", def.Name)
	} else {
		fmt.Fprintf(stdout, "default: none: %v\n", defErr)
	}
	return 0
}

// providerJSON is one provider as it resolves here: its settings and where
// each came from, whether its key is set (never the key), or why it does
// not resolve.
type providerJSON struct {
	Name             string            `json:"name"`
	Default          bool              `json:"default,omitempty"`
	API              string            `json:"api,omitempty"` // the wire format: openai or anthropic
	BaseURL          string            `json:"base_url,omitempty"`
	Model            string            `json:"model,omitempty"`
	NeedsModel       bool              `json:"needs_model,omitempty"` // a call must give one
	Credential       string            `json:"credential,omitempty"`  // the key's environment variable
	KeySet           bool              `json:"key_set"`
	StructuredOutput bool              `json:"structured_output"`
	From             map[string]string `json:"from,omitempty"` // setting → its source
	Error            string            `json:"error,omitempty"`
}

// providerRows resolves every provider a call may name (the presets and
// the file's), sorted by name.
func providerRows(opts *host.Options, def string) []providerJSON {
	names := provider.PresetNames()
	if cfg := opts.ProviderConfig; cfg != nil {
		for n := range cfg.Providers {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	slices.Sort(names)
	var rows []providerJSON
	for _, n := range names {
		row := providerJSON{Name: n, Default: n == def}
		r, err := provider.Resolve(n, provider.Settings{}, opts.ProviderConfig, opts.Getenv)
		var ce *provider.ConfigError
		row.NeedsModel = errors.As(err, &ce) && ce.Field == "model"
		if row.NeedsModel { // show the rest of what resolves
			r, err = provider.Resolve(n, provider.Settings{Model: "-"}, opts.ProviderConfig, opts.Getenv)
		}
		switch {
		case errors.As(err, &ce):
			row.Error = ce.Field + ": " + strings.SplitN(ce.Message, ":", 2)[0]
		case err != nil:
			row.Error = err.Error()
		default:
			o := r.Options
			row.BaseURL, row.Credential, row.StructuredOutput, row.From = o.BaseURL, o.Credential, r.StructuredOutput, r.From
			row.API = o.API
			if row.API == "" {
				row.API = provider.APIOpenAI
			}
			if !row.NeedsModel {
				row.Model = o.Model
			}
			row.KeySet = o.Credential != "" && os.Getenv(o.Credential) != ""
		}
		rows = append(rows, row)
	}
	return rows
}
