//go:build unix

package store

import "syscall"

// fsSpace reports the bytes available to an unprivileged writer and the
// total size of the file system holding dir.
func fsSpace(dir string) (free, total int64, ok bool) {
	var s syscall.Statfs_t
	if err := syscall.Statfs(dir, &s); err != nil {
		return 0, 0, false
	}
	return int64(s.Bavail) * int64(s.Bsize), int64(s.Blocks) * int64(s.Bsize), true
}
