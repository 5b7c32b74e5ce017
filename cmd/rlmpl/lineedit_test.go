package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHistoryFile: the history keeps the newest historyMax goals (a longer
// file is cut on load), one per line with line breaks as spaces, skips a
// goal that repeats the newest, and an unwritable file is reported once
// and the history kept in memory.
func TestHistoryFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "state", historyFile)
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		t.Fatal(err)
	}
	var old strings.Builder
	for i := range historyMax + 5 {
		fmt.Fprintf(&old, "g(%d).\n", i)
	}
	if err := os.WriteFile(file, []byte(old.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	var warn bytes.Buffer
	e := newEditor(nil, io.Discard, -1, file, &warn)
	if len(e.history) != historyMax || e.history[0] != "g(5)." {
		t.Fatalf("loaded %d entries from %q, want %d from g(5).", len(e.history), e.history[0], historyMax)
	}
	e.add("foo(X,\n    Y).")
	e.add("foo(X, Y).") // the newest again
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != historyMax+1 || lines[0] != "g(5)." || lines[len(lines)-1] != "foo(X, Y)." {
		t.Fatalf("history file: %d lines, first %q, last %q", len(lines), lines[0], lines[len(lines)-1])
	}
	if warn.Len() != 0 {
		t.Fatalf("warnings: %q", warn.String())
	}

	// A history file that cannot be written: one warning, memory only.
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	e = newEditor(nil, io.Discard, -1, filepath.Join(blocker, historyFile), &warn)
	e.add("a.")
	e.add("b.")
	if n := strings.Count(warn.String(), "history is not saved"); n != 1 || len(e.history) != 2 {
		t.Fatalf("warnings %q, history %q: want one warning and both goals kept", warn.String(), e.history)
	}
}
