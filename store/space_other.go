//go:build !unix

package store

// fsSpace cannot read free space here: the disk guard is off.
func fsSpace(string) (free, total int64, ok bool) { return 0, 0, false }
