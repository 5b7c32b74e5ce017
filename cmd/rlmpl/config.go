package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/BurntSushi/toml"

	"github.com/rlmpl/rlmpl/host/mcp"
	"github.com/rlmpl/rlmpl/host/provider"
	"github.com/rlmpl/rlmpl/store"
)

// defaultStateDir is where rlmpl keeps conversation stores unless --state
// says otherwise: $XDG_STATE_HOME/rlmpl, else ~/.local/state/rlmpl.
// Configuration is read here, in the CLI, and passed down typed: packages
// never read the environment.
func defaultStateDir() string {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "rlmpl")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "rlmpl-state"
	}
	return filepath.Join(home, ".local", "state", "rlmpl")
}

// defaultStore is the store the commands use unless --store,
// $RLMPL_STORE or the configuration file names another: a relative name
// lives under the state directory, as persist(Name) does in programs.
const defaultStore = "default"

// storeUsage is the --store flag's help, for every command that takes it.
const storeUsage = "store spec: a name under the state directory or an absolute directory (badger), sqlite:PATH, a postgres:// URL, or memory (default: $RLMPL_STORE, else store in config.toml beside providers.toml, else \"default\")"

// storeFlag defines --store. Its default is empty: [resolveStore] picks
// the store when the flag is not given.
func storeFlag(fs *flag.FlagSet) *string { return fs.String("store", "", storeUsage) }

// configPath is the CLI's own configuration file, beside providers.toml:
// $XDG_CONFIG_HOME/rlmpl/config.toml, else ~/.config/rlmpl/config.toml.
func configPath() string {
	p := providerConfigPath()
	if p == "" {
		return ""
	}
	return filepath.Join(filepath.Dir(p), "config.toml")
}

// cliConfig is config.toml. Unknown keys are an error, so a typo does not
// silently send a service to another store.
type cliConfig struct {
	// Store is the default store's spec (store.ParseSpec): a name, a
	// directory, sqlite:PATH, a postgres:// URL or memory.
	Store string `toml:"store"`
}

// resolveStore returns the store a command uses: flag (--store) when
// given, else $RLMPL_STORE, else config.toml's store, else "default". The
// environment wins over the file, so one service's processes can be
// pointed elsewhere without editing the shared file.
func resolveStore(flag string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	if s := os.Getenv("RLMPL_STORE"); s != "" {
		return s, nil
	}
	path := configPath()
	if path == "" {
		return defaultStore, nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return defaultStore, nil
	}
	if err != nil {
		return "", &configError{err.Error()}
	}
	var c cliConfig
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&c)
	if err != nil {
		return "", &configError{fmt.Sprintf("%s: %v", path, err)}
	}
	if keys := md.Undecoded(); len(keys) > 0 {
		return "", &configError{fmt.Sprintf("%s: unknown key %q (the file knows store)", path, keys[0].String())}
	}
	if c.Store == "" {
		return defaultStore, nil
	}
	return c.Store, nil
}

// resolveStoreFlag replaces *name with the store the command uses
// (resolveStore); a broken configuration file, or a store spec that does
// not parse (store.ParseSpec: an unknown scheme, nothing after one), is a
// configuration error (exit 2). ok is false when the command must stop
// with code.
func resolveStoreFlag(name *string, cmd string, stderr io.Writer) (code int, ok bool) {
	s, err := resolveStore(*name)
	if err == nil {
		if _, perr := store.ParseSpec(s); perr != nil {
			err = &configError{perr.Error()}
		}
	}
	if err != nil {
		return failed(stderr, "rlmpl "+cmd, err), false
	}
	*name = s
	return 0, true
}

// configError is a problem with config.toml (providers.toml's are
// provider.ConfigErrors).
type configError struct{ msg string }

func (e *configError) Error() string { return e.msg }

// isConfigError reports whether err is a configuration error: a broken
// config.toml or providers.toml (unreadable, bad TOML, an unknown key, a
// key written in it, an [mcp.NAME] table that does not configure a
// server), or a provider that does not resolve (no model, its key missing
// from the environment).
func isConfigError(err error) bool {
	var ce *configError
	var pe *provider.ConfigError
	var me *mcp.ConfigError
	return errors.As(err, &ce) || errors.As(err, &pe) || errors.As(err, &me) || errors.Is(err, provider.ErrMissingCredential)
}

// failed reports a command's error on stderr after prefix ("rlmpl chat")
// and returns its exit status, by the one rule of doc.go's "Exit status":
// 2 for a configuration error, which every command checks before it
// writes anything, 1 for any other.
func failed(stderr io.Writer, prefix string, err error) int {
	if isConfigError(err) {
		fmt.Fprintf(stderr, "%s: %s\n", prefix, configText(err))
		return 2
	}
	fmt.Fprintf(stderr, "%s: %v\n", prefix, err)
	return 1
}

// parseInterspersed parses fs's flags wherever they appear among the
// positional arguments (`conv search demo "lease" --cold`), up to a "--",
// and returns the positionals in order.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos, args = append(pos, args[0]), args[1:]
	}
}

// parseCommand parses a command's flags wherever they appear among its
// arguments. -h or --help prints the command's synopsis and flags to
// stdout (exit 0); a bad flag prints the flag package's complaint and the
// synopsis to stderr (exit 2). ok is false when the command must stop with
// code.
func parseCommand(fs *flag.FlagSet, synopsis string, args []string, stdout, stderr io.Writer) (pos []string, code int, ok bool) {
	fs.SetOutput(stderr)
	fs.Usage = func() {}
	pos, err := parseInterspersed(fs, args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprintf(stdout, "usage: rlmpl %s\n\nflags:\n", synopsis)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		return nil, 0, false
	case err != nil:
		fmt.Fprintf(stderr, "usage: rlmpl %s\n", synopsis)
		return nil, 2, false
	}
	return pos, 0, true
}

// groupHelp handles `rlmpl GROUP` with no subcommand or with -h/--help:
// the group's synopsis, to stdout (exit 0) when asked, else to stderr
// (exit 2). ok is false when the command must stop with code.
func groupHelp(args []string, synopsis string, stdout, stderr io.Writer) (code int, ok bool) {
	if len(args) == 0 {
		fmt.Fprintf(stderr, "usage: rlmpl %s\n", synopsis)
		return 2, false
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprintf(stdout, "usage: rlmpl %s\n", synopsis)
		return 0, false
	}
	return 0, true
}

// isTerminal reports whether w is a terminal (a character device), so that
// progress is drawn only where someone watches it.
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// errUsage marks a usage error (exit status 2), already reported.
var errUsage = errors.New("usage")

// boundedInt is an integer flag that refuses values below min, so a bad
// number (--max-context -5, --max 0) is a usage error (exit 2) instead of
// being taken as "the default" further down.
type boundedInt[T int | int64] struct {
	p   *T
	min T
}

func (b *boundedInt[T]) String() string {
	if b == nil || b.p == nil {
		return "0"
	}
	return strconv.FormatInt(int64(*b.p), 10)
}

func (b *boundedInt[T]) Set(s string) error {
	n, err := strconv.ParseInt(s, 0, 64)
	if err != nil || T(n) < b.min || int64(T(n)) != n {
		return fmt.Errorf("want an integer >= %d", b.min)
	}
	*b.p = T(n)
	return nil
}

// intFlag defines an integer flag of at least min; def may lie below min
// to mean "not given" (the policy's value).
func intFlag[T int | int64](fs *flag.FlagSet, name string, def, min T, usage string) *T {
	p := &def
	fs.Var(&boundedInt[T]{p: p, min: min}, name, usage)
	return p
}
