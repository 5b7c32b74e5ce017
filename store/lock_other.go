//go:build !unix

package store

// dirLock is a no-op where flock(2) is unavailable; badger's own directory
// lock still refuses a second writer (with badger's error text).
type dirLock struct{}

func lockDir(dir string) (*dirLock, error) { return &dirLock{}, nil }

func (l *dirLock) release() error { return nil }
