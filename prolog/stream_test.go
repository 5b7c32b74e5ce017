package prolog_test

import (
	"context"
	"io"
	"os"
	"testing"

	"github.com/rlmpl/rlmpl/prolog"
)

// flush_output on a pipe used to fail with "sync /dev/stdout: invalid
// argument" (ichiban fsyncs an *os.File), so `rlmpl run x.pl | cat` died.
func TestFlushOutputOnPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	in := newInterp(t, &prolog.Options{Stdout: w})
	if _, err := in.Once(context.Background(), `write(hello), flush_output, flush_output(user_output)`); err != nil {
		t.Fatalf("flush_output on a pipe: %v", err)
	}
	w.Close()
	got, _ := io.ReadAll(r)
	if string(got) != "hello" {
		t.Errorf("pipe got %q, want %q", got, "hello")
	}
}
