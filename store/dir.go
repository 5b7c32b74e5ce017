package store

import (
	"os"
	"path/filepath"
)

// IsStore reports whether path holds a store, or is part of one: a badger
// directory that [Open] made (its LOCK file and kv/ directory), or an
// SQLite database file and the files beside it (-wal, -shm, -journal,
// -lock). Callers that must not create a store (a read-only command, a
// check that stores do not nest) or remove its files ask it first; it
// only reads. Any SQLite database counts: a file of one is never a
// program's to remove.
func IsStore(path string) bool {
	lock, err1 := os.Stat(filepath.Join(path, "LOCK"))
	kv, err2 := os.Stat(filepath.Join(path, "kv"))
	if err1 == nil && err2 == nil && lock.Mode().IsRegular() && kv.IsDir() {
		return true
	}
	return isSQLiteFile(path)
}
