package runtime

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/rlmpl/rlmpl/store"
)

// ErrNoStateDir is returned by [Runtime.TmpName] when no state directory
// is configured.
var ErrNoStateDir = errors.New("runtime: no state directory")

// TmpName returns a fresh absolute path StateDir/tmp/<base>_<random> for a
// program's temporary file or store (tmp_file/2): the tmp directory is
// created (0700), the file is not. Base keeps only letters, digits, '_'
// and '-'.
func (r *Runtime) TmpName(base string) (string, error) {
	if r.opts.StateDir == "" {
		return "", ErrNoStateDir
	}
	dir := filepath.Join(r.opts.StateDir, "tmp")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	clean := strings.Map(func(c rune) rune {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-':
			return c
		}
		return -1
	}, base)
	if len(clean) > 64 {
		clean = clean[:64]
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	return filepath.Join(dir, fmt.Sprintf("%s_%s", clean, hex.EncodeToString(b[:]))), nil
}

// DeletableFile resolves the file a program asks to delete (delete_file/1)
// and checks it may: a relative name is under the state directory; the
// file's directory, links resolved, must be inside the state directory or
// a grant, and inside no store and none of a store's files (a store's own
// files are never a program's to remove). It returns the path to remove (the link itself when the
// file is a symbolic link) or an error wrapping [ErrPathNotGranted] or
// [ErrStorePath]. It reads the file system, never writes.
func (r *Runtime) DeletableFile(name string) (string, error) {
	abs := name
	if !filepath.IsAbs(name) {
		if r.opts.StateDir == "" {
			return "", fmt.Errorf("%w: %q (no state directory)", ErrPathNotGranted, name)
		}
		abs = filepath.Join(r.opts.StateDir, name)
	}
	abs = filepath.Clean(abs)
	dir, err := realPath(filepath.Dir(abs))
	if err != nil {
		return "", fmt.Errorf("%w: %q: %v", ErrStorePath, name, err)
	}
	state, err := realPath(r.opts.StateDir)
	if err != nil {
		return "", fmt.Errorf("%w: %q: %v", ErrStorePath, name, err)
	}
	p := filepath.Join(dir, filepath.Base(abs))
	if p == state || !r.granted(p, state) || p == dir {
		return "", fmt.Errorf("%w: %q (files are deleted only under the state directory %q or a grant)", ErrPathNotGranted, name, r.opts.StateDir)
	}
	if store.IsStore(p) { // an SQLite store's file, or one beside it
		return "", fmt.Errorf("%w: %q is a store's file", ErrStorePath, name)
	}
	for q := dir; ; q = filepath.Dir(q) {
		if store.IsStore(q) {
			return "", fmt.Errorf("%w: %q is inside the store %q", ErrStorePath, name, q)
		}
		if q == filepath.Dir(q) {
			return p, nil
		}
	}
}
