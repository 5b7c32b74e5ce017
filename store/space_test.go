//go:build linux

package store

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// mountTmpfs mounts a tmpfs of the given size on a fresh directory. It
// needs root: the test skips without it, except under CI=true, where CI
// runs as root and a skip would hide the test.
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("mount tmpfs: %v (CI runs as root and must run this test)", err)
		}
		t.Skipf("mount tmpfs (needs root): %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// A full disk used to kill the process with SIGBUS inside badger's
// memory-mapped memtable. Now a write that does not fit is ErrNoSpace, the
// store stays readable, nothing acknowledged is lost, and writes resume
// once space is freed.
func TestDiskFullRefusesWritesAndRecovers(t *testing.T) {
	dir := mountTmpfs(t, "24m")
	storeDir := filepath.Join(dir, "store")
	db := openDir(t, storeDir)
	mustCreate(t, db, "c")

	// Leave about 3 MiB above the guard's reserve, so the store fills fast.
	free, _, ok := fsSpace(dir)
	if !ok {
		t.Fatal("statfs failed on tmpfs")
	}
	guard := db.kv.(*badgerKV).space
	ballast := filepath.Join(dir, "ballast")
	if err := os.WriteFile(ballast, make([]byte, free-guard.reserve-3<<20), 0o644); err != nil {
		t.Fatal(err)
	}

	acked, err := fillUntilFull(db, "c")
	if !errors.Is(err, ErrNoSpace) {
		t.Fatalf("append on a full disk: err = %v, want ErrNoSpace (after %d appends)", err, acked)
	}
	if acked == 0 {
		t.Fatal("no append fitted in 3 MiB above the reserve")
	}
	if !strings.Contains(err.Error(), "free") {
		t.Errorf("error %q does not say how much is free", err)
	}

	// Reads still work and see every acknowledged message.
	if got := countMessages(t, db, "c"); got != acked {
		t.Fatalf("after disk full: %d messages readable, want %d", got, acked)
	}

	// Free space: writes resume.
	if err := os.Remove(ballast); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Append("c", user("after space was freed"), AppendOptions{}); err != nil {
		t.Fatalf("append after freeing space: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openDir(t, storeDir)
	defer db.Close()
	if got := countMessages(t, db, "c"); got != acked+1 {
		t.Fatalf("after reopen: %d messages, want %d", got, acked+1)
	}
}

// fillUntilFull appends 32 KiB messages of incompressible text (badger
// compresses its tables) to conv until one fails, at most 1,000: the
// number acknowledged and the failure.
func fillUntilFull(db *DB, conv string) (acked int, err error) {
	rng := rand.New(rand.NewPCG(1, 2))
	body := make([]byte, 32<<10)
	for range 1000 {
		for j := range body {
			body[j] = 'a' + byte(rng.IntN(26))
		}
		if _, err = db.Append(conv, user(string(body)), AppendOptions{}); err != nil {
			return acked, err
		}
		acked++
	}
	return acked, nil
}

func countMessages(t *testing.T, db *DB, conv string) int {
	t.Helper()
	st, err := db.Stats(conv)
	if err != nil {
		t.Fatal(err)
	}
	for seq := int64(1); seq <= st.Messages; seq++ {
		if _, err := db.Message(conv, seq); err != nil {
			t.Fatalf("message %d: %v", seq, err)
		}
	}
	return int(st.Messages)
}

// TestSQLiteDiskFull: on SQLite a full disk is SQLITE_FULL, the write
// rolled back: the append is refused with ErrNoSpace, nothing acknowledged
// is lost, reads go on, and writes resume once space is freed.
func TestSQLiteDiskFull(t *testing.T) {
	dir := mountTmpfs(t, "24m")
	spec := Spec{Scheme: schemeSQLite, Target: filepath.Join(dir, "store.db")}
	db := openWith(t, &Options{Spec: spec})
	mustCreate(t, db, "c")
	free, _, ok := fsSpace(dir)
	if !ok {
		t.Fatal("statfs failed on tmpfs")
	}
	ballast := filepath.Join(dir, "ballast")
	if err := os.WriteFile(ballast, make([]byte, free-3<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	acked, err := fillUntilFull(db, "c")
	if !errors.Is(err, ErrNoSpace) {
		t.Fatalf("append on a full disk: err = %v, want ErrNoSpace (after %d appends)", err, acked)
	}
	if acked == 0 {
		t.Fatal("no append fitted in 3 MiB")
	}
	t.Logf("after %d appends: %v", acked, err)
	if got := countMessages(t, db, "c"); got != acked {
		t.Fatalf("after disk full: %d messages readable, want %d", got, acked)
	}
	if err := os.Remove(ballast); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Append("c", user("after space was freed"), AppendOptions{}); err != nil {
		t.Fatalf("append after freeing space: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openWith(t, &Options{Spec: spec})
	if got := countMessages(t, db, "c"); got != acked+1 {
		t.Fatalf("after reopen: %d messages, want %d", got, acked+1)
	}
	if err := db.WaitIndexed(10 * time.Second); err != nil {
		t.Fatalf("the index after the disk was full: %v", err)
	}
}
