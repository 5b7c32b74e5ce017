package store

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// walWatch reports writes to an SQLite database's WAL file: inotify on
// its directory (the WAL is removed when the last connection closes and
// made again by the next, so a watch on the file itself would go stale),
// events filtered by the WAL's name. Every commit of every process writes
// the WAL, so a waiter learns of another process's append as it commits
// instead of at its next poll.
type walWatch struct {
	f    *os.File
	name string // the WAL's base name
}

func newWALWatch(db string) (*walWatch, error) {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, err
	}
	if _, err := unix.InotifyAddWatch(fd, filepath.Dir(db), unix.IN_MODIFY|unix.IN_CREATE|unix.IN_MOVED_TO); err != nil {
		unix.Close(fd)
		return nil, err
	}
	// Non-blocking, through the runtime's poller: Close ends a Read.
	return &walWatch{f: os.NewFile(uintptr(fd), "inotify"), name: filepath.Base(db) + "-wal"}, nil
}

// wait blocks until the WAL is written (true), or the watch is closed
// or fails (false).
func (w *walWatch) wait() bool {
	buf := make([]byte, 64*(unix.SizeofInotifyEvent+unix.NAME_MAX+1))
	for {
		n, err := w.f.Read(buf)
		if err != nil {
			return false
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			// struct inotify_event: wd, mask, cookie, len, then the name.
			start := off + unix.SizeofInotifyEvent
			off = start + int(binary.NativeEndian.Uint32(buf[off+12:]))
			if strings.TrimRight(string(buf[start:min(off, n)]), "\x00") == w.name {
				return true
			}
		}
	}
}

// close ends the watch (a wait returns false); nil is a no-op.
func (w *walWatch) close() {
	if w != nil {
		w.f.Close()
	}
}
