package store

import (
	"os"
	"path/filepath"
)

// IsStore reports whether dir holds a store that [Open] made: its LOCK
// file and its kv/ directory. Callers that must not create a store (a
// read-only command, a check that stores do not nest) ask it first; it
// only reads.
func IsStore(dir string) bool {
	lock, err1 := os.Stat(filepath.Join(dir, "LOCK"))
	kv, err2 := os.Stat(filepath.Join(dir, "kv"))
	return err1 == nil && err2 == nil && lock.Mode().IsRegular() && kv.IsDir()
}
