package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rlmpl/rlmpl/prolog"
)

// syncBuffer is a bytes.Buffer safe to read while run writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor waits until buf holds want.
func waitFor(t *testing.T, buf *syncBuffer, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(buf.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("output %q, want it to hold %q", buf.String(), want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestREPLMake: make/0 consults again a file named on the command line
// that changed since, and only then.
func TestREPLMake(t *testing.T) {
	file := filepath.Join(t.TempDir(), "m.pl")
	if err := os.WriteFile(file, []byte("b(1).\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	in, feed := io.Pipe()
	var out, errOut syncBuffer
	done := make(chan int)
	go func() {
		done <- run(context.Background(), []string{"repl", "--state", t.TempDir(), file}, in, &out, &errOut)
	}()
	io.WriteString(feed, "b(X).\nmake.\n")
	waitFor(t, &out, "X = 1.\n\ntrue.\n\n")
	if err := os.WriteFile(file, []byte("b(2).\nc(X) :- b(X).\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	io.WriteString(feed, "make.\nc(X).\n")
	feed.Close()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut.String())
	}
	if want := "X = 1.\n\ntrue.\n\ntrue.\n\nX = 2.\n\n"; out.String() != want {
		t.Fatalf("stdout %q, want %q", out.String(), want)
	}
	if want := "% Reloaded " + file + "\n"; errOut.String() != want {
		t.Fatalf("stderr %q, want %q", errOut.String(), want)
	}
}

// TestREPLTimeStatistics: time/1 reports inferences, CPU and wall time on
// stderr whatever the goal does (SWI's line), and statistics/2 answers in
// SWI's shapes.
func TestREPLTimeStatistics(t *testing.T) {
	var out, errOut bytes.Buffer
	in := strings.NewReader(`time(numlist(1, 1000, L)), length(L, N).
time(fail).
catch(time(throw(oops)), E, true).
statistics(runtime, [A, B]), integer(A), integer(B), statistics(walltime, [C, D]), integer(C), integer(D), statistics(cputime, F), float(F), statistics(real_time, [G, _]), G > 1700000000, !.
statistics(inferences, I0), numlist(1, 10, _), statistics(inferences, I1), I1 > I0, Err = none.
statistics.
`)
	if code := run(context.Background(), []string{"repl", "--state", t.TempDir()}, in, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	for _, want := range []string{"N = 1000.\n", "false.\n", "E = oops.\n", "Err = none."} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("stdout %q lacks %q", out.String(), want)
		}
	}
	if n := strings.Count(out.String(), "false."); n != 1 {
		t.Errorf("stdout %q: %d goals failed, want 1 (time(fail))", out.String(), n)
	}
	report := regexp.MustCompile(`(?m)^% [\d,]+ inferences, \d+\.\d{3} CPU in \d+\.\d{3} seconds \(\d+% CPU, (\d+|Infinite) Lips\)$`)
	if n := len(report.FindAllString(errOut.String(), -1)); n != 3 {
		t.Errorf("stderr %q: %d time/1 reports, want 3", errOut.String(), n)
	}
	for _, want := range []string{"% Started at ", " seconds cpu time", " predicates, ", "% Go heap: "} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("statistics/0: stderr %q lacks %q", errOut.String(), want)
		}
	}
}

// TestExpandValues: $Var becomes Var bound before the goal; quotes, 0'c
// and comments are left alone.
func TestExpandValues(t *testing.T) {
	vals := map[string]prolog.SavedValue{"X": {Text: "f(_X1, _X1)", Vars: []string{"_X1"}}, "Y": {Text: "2"}}
	for _, tc := range []struct {
		goal, want string
		names      []string
		err        string
	}{
		{goal: "Z = $X.", want: "X = (f(_X1, _X1)), (Z = X\n).", names: []string{"X"}},
		{goal: "A = $Y, % $X\nB is $Y+1.", want: "Y = (2), (A = Y, % $X\nB is Y+1\n).", names: []string{"Y"}},
		{goal: "A = '$X', B = \"$Y\", C = 0'$, D = `$X`.", want: "A = '$X', B = \"$Y\", C = 0'$, D = `$X`."},
		{goal: "A = /* $X */ 1.", want: "A = /* $X */ 1."},
		{goal: "A = a$b.", want: "A = a$b."},
		{goal: "A = $Q.", err: "$Q was not bound by a previous query"},
	} {
		got, names, _, err := expandValues(tc.goal, vals)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("expandValues(%q) error %v, want %q", tc.goal, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want || !slices.Equal(names, tc.names) {
			t.Errorf("expandValues(%q) = %q, %q, %v; want %q, %q", tc.goal, got, names, err, tc.want, tc.names)
		}
	}
}
