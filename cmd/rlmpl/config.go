package main

import (
	"os"
	"path/filepath"
)

// defaultStoreDir is where `rlmpl conv` and `rlmpl pack` keep conversations
// unless --store says otherwise: $XDG_STATE_HOME/rlmpl, else
// ~/.local/state/rlmpl.
func defaultStoreDir() string {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "rlmpl")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "rlmpl-state"
	}
	return filepath.Join(home, ".local", "state", "rlmpl")
}
