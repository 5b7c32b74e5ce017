package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const envGoneDir = "RLMPL_GONE_CHILD_DIR"

// TestStoreDirectoryRemoved: removing an open store's directory from
// outside used to end the process (badger opened its next memtable file
// in a directory that was gone: a nil memtable, or its fatal log). The
// writer runs as a child process, since that crash ends whatever process
// it happens in; it must see every write after the removal refused with
// ErrStoreGone, read what it had, close, and exit on its own.
func TestStoreDirectoryRemoved(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestStoreDirectoryRemovedChild$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), envGoneDir+"="+filepath.Join(t.TempDir(), "db"))
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestStoreDirectoryRemovedChild") {
		t.Fatalf("the process whose store directory was removed: %v\n%s", err, lastBytes(string(out), 3000))
	}
}

// TestStoreDirectoryRemovedChild is TestStoreDirectoryRemoved's writer; it
// does nothing unless started by it.
func TestStoreDirectoryRemovedChild(t *testing.T) {
	dir := os.Getenv(envGoneDir)
	if dir == "" {
		t.Skip("only run as TestStoreDirectoryRemoved's child")
	}
	db, err := Open(&Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	mustCreate(t, db, "c")
	for i := range 10 {
		mustAppend(t, db, "c", user(fmt.Sprint("before ", i)))
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	// Enough to fill badger's memtable (32 MiB at most) twice over: it
	// would open new files, in the directory that is gone.
	big := strings.Repeat("x", 64<<10)
	for i := range 1200 {
		if _, err := db.Append("c", user(big), AppendOptions{}); !errors.Is(err, ErrStoreGone) {
			t.Fatalf("append %d after the directory was removed = %v, want ErrStoreGone", i, err)
		}
	}
	if recs, err := db.Messages("c", All(), 0); err != nil || len(recs) != 10 {
		t.Errorf("reading after the directory was removed: %d messages, %v; want the 10 appended before", len(recs), err)
	}
	t.Logf("Close = %v", db.Close())
}

// lastBytes is the last n bytes of s.
func lastBytes(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// TestReopenAfterAKillLeftAnEmptyValueLog: badger creates a value log file
// at every open and sizes it right after; a kill -9 in between leaves an
// empty file, on which badger's next open failed ("Open existing file:
// ….vlog … Create a new file"; about one kill in 280). The store opens
// with nothing lost.
func TestReopenAfterAKillLeftAnEmptyValueLog(t *testing.T) {
	dir := t.TempDir()
	db := openDir(t, dir)
	mustCreate(t, db, "c")
	mustAppend(t, db, "c", user("kept"))
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	logs, _ := filepath.Glob(filepath.Join(dir, "kv", "*.vlog"))
	if len(logs) == 0 {
		t.Fatal("badger made no value log")
	}
	var last int
	fmt.Sscanf(filepath.Base(logs[len(logs)-1]), "%06d.vlog", &last)
	if err := os.WriteFile(filepath.Join(dir, "kv", fmt.Sprintf("%06d.vlog", last+1)), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	db = openDir(t, dir)
	defer db.Close()
	if recs, err := db.Messages("c", All(), 0); err != nil || len(recs) != 1 {
		t.Fatalf("after reopening: %d messages, %v", len(recs), err)
	}
	mustAppend(t, db, "c", user("after"))
}
