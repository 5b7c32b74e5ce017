package main

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
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

// defaultStore is the store the conv and pack commands read unless --store
// names another: a relative name lives under the state directory, as
// persist(Name) does in programs.
const defaultStore = "default"

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
