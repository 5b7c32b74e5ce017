package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// lockFile holds the locks an SQLite store's processes take on its lock
// file (PATH-lock): byte 0 is held by the process writing, so writers of
// every process queue in the kernel instead of polling SQLite's busy
// handler; byte n (n ≥ 1) by the process running a turn of conversation
// number n. They are open file description locks: a lock belongs to the
// descriptor that took it, so two descriptors of one process exclude each
// other, closing one releases only its own locks, and the kernel drops
// them all when the process dies (kill -9 leaves nothing stale).
type lockFile struct {
	path string
	w    *os.File // the descriptor of the write lock (byte 0)
}

func openLockFile(path string) (*lockFile, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	return &lockFile{path: path, w: f}, nil
}

// ofdLock takes (typ F_WRLCK) or releases (F_UNLCK) byte at of f; wait
// blocks until it is free.
func ofdLock(f *os.File, at int64, typ int16, wait bool) error {
	cmd := unix.F_OFD_SETLK
	if wait {
		cmd = unix.F_OFD_SETLKW
	}
	lk := unix.Flock_t{Type: typ, Whence: 0, Start: at, Len: 1}
	for {
		err := unix.FcntlFlock(f.Fd(), cmd, &lk)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// lockWrites blocks until this process holds the write lock.
func (l *lockFile) lockWrites() error {
	if err := ofdLock(l.w, 0, unix.F_WRLCK, true); err != nil {
		return fmt.Errorf("store: lock %s: %w", l.path, err)
	}
	return nil
}

func (l *lockFile) unlockWrites() { _ = ofdLock(l.w, 0, unix.F_UNLCK, false) }

// busy reports a lock another descriptor holds.
func busy(err error) bool { return errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EACCES) }

// turnLockPoll bounds the wait between two tries of a held turn lock: a
// turn waits for another's whole model call, so a few milliseconds of
// hand-over are nothing, and a poll (unlike a blocking F_OFD_SETLKW) ends
// when the caller's context does.
const turnLockPoll = 20 * time.Millisecond

// tryLockTurn takes the turn lock of conversation num on a descriptor of
// its own, if no descriptor holds it.
func (l *lockFile) tryLockTurn(num uint64) (unlock func(), ok bool, err error) {
	f, err := os.OpenFile(l.path, os.O_RDWR, 0)
	if err != nil {
		return nil, false, fmt.Errorf("store: turn lock: %w", err)
	}
	switch err := ofdLock(f, int64(num), unix.F_WRLCK, false); {
	case err == nil:
		return func() { f.Close() }, true, nil // closing the descriptor releases its lock
	case busy(err):
		f.Close()
		return nil, false, nil
	default:
		f.Close()
		return nil, false, fmt.Errorf("store: turn lock: %w", err)
	}
}

// lockTurn waits for the turn lock of conversation num, trying every
// millisecond at first and every turnLockPoll at most, until ctx ends.
func (l *lockFile) lockTurn(ctx context.Context, num uint64) (func(), error) {
	wait := time.Millisecond
	for {
		unlock, ok, err := l.tryLockTurn(num)
		if err != nil || ok {
			return unlock, err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
		wait = min(2*wait, turnLockPoll)
	}
}

func (l *lockFile) close() error { return l.w.Close() }
