//go:build !linux

package store

import "errors"

// walWatch is Linux's (inotify); elsewhere waiters poll the data version.
type walWatch struct{}

func newWALWatch(string) (*walWatch, error) { return nil, errors.New("store: no inotify") }

func (w *walWatch) wait() bool { return false }

func (w *walWatch) close() {}
