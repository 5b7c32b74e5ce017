//go:build !linux

package store

import (
	"context"
	"os"
)

// lockFile is the lock file of an SQLite store. Open file description
// locks are Linux's; elsewhere writers of several processes queue on
// SQLite's own busy handler, and a conversation's turns take turns only
// within one process (the store's in-process turn lock).
type lockFile struct{ f *os.File }

func openLockFile(path string) (*lockFile, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	return &lockFile{f: f}, nil
}

func (l *lockFile) lockWrites() error { return nil }

func (l *lockFile) unlockWrites() {}

func (l *lockFile) tryLockTurn(uint64) (func(), bool, error) { return func() {}, true, nil }

func (l *lockFile) lockTurn(context.Context, uint64) (func(), error) { return func() {}, nil }

func (l *lockFile) close() error { return l.f.Close() }
