package store

import (
	"errors"
	"fmt"
	"os"
)

// ErrNoSpace reports a write refused because the file system holding the
// store has too little free space for badger to write it safely. The
// store stays open and readable; writes succeed again once space is freed.
var ErrNoSpace = errors.New("store: not enough free disk space")

// ErrStoreGone reports a write refused because the store's directory was
// removed or replaced since it was opened. Badger would go on writing to
// files no longer in any directory (lost at Close) and then crash the
// process when it next needs a new file; the store refuses writes
// instead, and stays readable until Close.
var ErrStoreGone = errors.New("store: directory removed or replaced while open")

// diskGuard turns a full disk into [ErrNoSpace], and a store directory
// removed from under the process into [ErrStoreGone], instead of a crash.
//
// Badger writes its memtable log, value log and tables through sparse
// memory maps: on a full file system, the first touch of a page with no
// block behind it is SIGBUS, a fault that kills the process wherever it
// happens (often in one of badger's own goroutines). So a write is
// admitted only while the file system keeps free at least the reserve —
// room for badger to finish what it has already accepted: the rest of the
// current memtable's log, a flush of every memtable and one level-0
// compaction — plus twice the write itself. One statfs and one stat per
// commit cost a few microseconds beside a synced write's milliseconds.
//
// Badger opens a new memtable file when one fills up; in a directory that
// is gone, that fails and badger crashes (a nil memtable, or its fatal
// log). So a write is admitted only while the directory is still the one
// the store opened (same device and inode).
//
// A nil guard admits everything (memory stores). Space taken, or the
// directory removed, by other processes between the check and badger's
// writes is not covered: keep the store on a file system the process does
// not share with something that can fill it or remove it.
type diskGuard struct {
	dir     string
	opened  os.FileInfo // dir when the store opened it
	reserve int64       // 0: free space cannot be read here
}

// newDiskGuard returns the guard for a store in dir whose memtables hold
// memtable bytes.
func newDiskGuard(dir string, memtable int64) (*diskGuard, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	g := &diskGuard{dir: dir, opened: fi}
	if _, _, ok := fsSpace(dir); ok {
		g.reserve = memtable * (2 + numMemtables + numLevelZeroTables)
	}
	return g, nil
}

// admit returns nil when a write of n bytes fits, or an error wrapping
// [ErrNoSpace] that says how much is free and how much is needed, or
// [ErrStoreGone].
func (g *diskGuard) admit(n int64) error {
	if g == nil {
		return nil
	}
	if g.gone() {
		return fmt.Errorf("%w: %s", ErrStoreGone, g.dir)
	}
	if g.reserve == 0 {
		return nil
	}
	free, _, ok := fsSpace(g.dir)
	if !ok {
		return nil
	}
	need := g.reserve + 2*n
	if free >= need {
		return nil
	}
	return fmt.Errorf("%w: %s has %s free, a write of %s needs %s (the engine keeps %s to finish what it has accepted)",
		ErrNoSpace, g.dir, mib(free), mib(n), mib(need), mib(g.reserve))
}

// gone reports whether the store's directory is no longer the one it
// opened (removed, or replaced by another).
func (g *diskGuard) gone() bool {
	if g == nil {
		return false
	}
	fi, err := os.Stat(g.dir)
	return err != nil || !os.SameFile(fi, g.opened)
}

// memtableSize scales badger's memtable to the file system: 1/64 of its
// size, between 1 MiB and 32 MiB, so that a store on a small file system
// (a 20 MB tmpfs) keeps most of it usable under the guard's reserve, and a
// large one gets the 32 MiB the store always used.
func memtableSize(dir string) int64 {
	const lo, hi = 1 << 20, 32 << 20
	_, total, ok := fsSpace(dir)
	if !ok {
		return hi
	}
	return min(max(total/64, lo), hi)
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
