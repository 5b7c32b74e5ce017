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

// providerSetup hands opts its providers: the configuration file, parsed
// (a missing file is no configuration), and os.Getenv. Every command that
// runs models calls it (run, repl, complete, chat). A broken file is an
// error: a script should not silently run against another provider than
// the one its user configured.
func providerSetup(opts *host.Options) error {
	opts.Getenv = os.Getenv
	path := providerConfigPath()
	if path == "" {
		return nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	opts.ProviderConfig, err = provider.ParseConfig(path, data)
	return err
}

// runProviders implements `rlmpl providers`: every provider a call may
// name (the presets and the file's), as it resolves here, where each
// setting comes from, whether its key is set (never the key), and the
// default.
func runProviders(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	pos, code, ok := parseCommand(flag.NewFlagSet("providers", flag.ContinueOnError), "providers", args, stdout, stderr)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		fmt.Fprintln(stderr, "usage: rlmpl providers")
		return 2
	}
	opts := &host.Options{}
	if err := providerSetup(opts); err != nil {
		fmt.Fprintf(stderr, "rlmpl providers: %v\n", err)
		return 1
	}
	names := provider.PresetNames()
	if cfg := opts.ProviderConfig; cfg != nil {
		fmt.Fprintf(stdout, "configuration: %s\n", cfg.Path)
		for n := range cfg.Providers {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	} else {
		fmt.Fprintf(stdout, "configuration: none (%s)\n", providerConfigPath())
	}
	slices.Sort(names)
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tBASE URL\tMODEL\tKEY\tSTRUCTURED")
	for _, n := range names {
		r, err := provider.Resolve(n, provider.Settings{}, opts.ProviderConfig, opts.Getenv)
		var ce *provider.ConfigError
		needsModel := errors.As(err, &ce) && ce.Field == "model"
		if needsModel { // show the rest of what resolves
			r, err = provider.Resolve(n, provider.Settings{Model: "-"}, opts.ProviderConfig, opts.Getenv)
		}
		if errors.As(err, &ce) {
			fmt.Fprintf(tw, "%s\t(%s: %s)\t\t\t\n", n, ce.Field, strings.SplitN(ce.Message, ":", 2)[0])
			continue
		}
		if err != nil {
			fmt.Fprintf(tw, "%s\t(%v)\t\t\t\n", n, err)
			continue
		}
		o, from := r.Options, func(f string) string { return " (" + r.From[f] + ")" }
		model, key := "-", "none"
		switch {
		case needsModel:
			model = "(none: give one)"
		case o.Model != "":
			model = o.Model + from("model")
		}
		if o.Credential != "" {
			state := "unset"
			if os.Getenv(o.Credential) != "" {
				state = "set"
			}
			key = o.Credential + " (" + state + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%v\n", n, o.BaseURL+from("base_url"), model, key, r.StructuredOutput)
	}
	tw.Flush()
	h, err := host.New(opts)
	if err != nil {
		fmt.Fprintf(stderr, "rlmpl providers: %v\n", err)
		return 1
	}
	defer h.Close()
	if d, err := h.Provider(ctx, "", provider.Settings{}); err == nil {
		fmt.Fprintf(stdout, "default: %s\n", d.Name)
	} else {
		fmt.Fprintf(stdout, "default: none: %v\n", err)
	}
	return 0
}
