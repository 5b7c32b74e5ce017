package host_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/rlmpl/rlmpl/host"
)

// TestDeleteFile: delete_file/1 removes a file under the state directory
// and a grant, refuses one elsewhere (the file stays), and a link that
// leads out removes the link, never its target.
func TestDeleteFile(t *testing.T) {
	state, grant, outside := t.TempDir(), t.TempDir(), t.TempDir()
	s := newSession(t, &host.Options{StateDir: state, Grants: []string{grant}})
	in := s.Interpreter()
	ctx := context.Background()
	write := func(p string) {
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	exists := func(p string) bool { _, err := os.Lstat(p); return err == nil }

	write(filepath.Join(state, "a.txt"))
	if _, err := in.Once(ctx, `delete_file('a.txt')`); err != nil || exists(filepath.Join(state, "a.txt")) {
		t.Fatalf("relative delete under the state dir: %v (exists %v)", err, exists(filepath.Join(state, "a.txt")))
	}
	g := filepath.Join(grant, "b.txt")
	write(g)
	if _, err := in.Once(ctx, `delete_file('`+g+`')`); err != nil || exists(g) {
		t.Fatalf("delete under a grant: %v", err)
	}
	o := filepath.Join(outside, "c.txt")
	write(o)
	if _, err := in.Once(ctx, `delete_file('`+o+`')`); err == nil || !exists(o) {
		t.Fatalf("delete outside: err %v, exists %v; want a permission error and the file kept", err, exists(o))
	}
	link := filepath.Join(state, "link")
	if err := os.Symlink(o, link); err != nil {
		t.Skip("no symlinks:", err)
	}
	if _, err := in.Once(ctx, `delete_file(link)`); err != nil || exists(link) || !exists(o) {
		t.Fatalf("delete a link: %v (link %v, target %v)", err, exists(link), exists(o))
	}
	// A link to a directory outside cannot carry a deletion out.
	if err := os.Symlink(outside, filepath.Join(state, "out")); err != nil {
		t.Fatal(err)
	}
	if _, err := in.Once(ctx, `delete_file('out/c.txt')`); err == nil || !exists(o) {
		t.Fatalf("delete through a link out: err %v, exists %v", err, exists(o))
	}
}
