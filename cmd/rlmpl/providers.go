package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

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
