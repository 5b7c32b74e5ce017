package store

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"
)

// The cross-process test re-executes the test binary as writer processes
// (TestWriterChild) that append to the same conversations of one shared
// store (PostgreSQL, SQLite) at once; sequences must come out dense, each
// append exactly once. RLMPL_PG_APPENDS sets the appends per process and
// conversation (default 500, 50 with -short).

const (
	envChildScheme = "RLMPL_PROC_CHILD_SCHEME"
	envChildTarget = "RLMPL_PROC_CHILD_TARGET"
	envChildConvs  = "RLMPL_PROC_CHILD_CONVS"
	envPGChildID   = "RLMPL_PG_CHILD_ID"
	envPGAppends   = "RLMPL_PG_APPENDS"
	pgProcs        = 4
)

func pgAppends(t *testing.T) int {
	if s := os.Getenv(envPGAppends); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("%s=%q: want a positive integer", envPGAppends, s)
		}
		return n
	}
	if testing.Short() {
		return 50
	}
	return 500
}

// TestWriterChild is a writer process of TestConcurrentProcesses; it does
// nothing unless started by it. It appends to every conversation from one
// goroutine each.
func TestWriterChild(t *testing.T) {
	scheme := os.Getenv(envChildScheme)
	if scheme == "" {
		t.Skip("only run as TestConcurrentProcesses's child")
	}
	spec, err := NewSpec(scheme, os.Getenv(envChildTarget))
	if err != nil {
		t.Fatal(err)
	}
	id := os.Getenv(envPGChildID)
	n := pgAppends(t)
	convs, _ := strconv.Atoi(os.Getenv(envChildConvs))
	o := Options{Spec: spec}
	if spec.Scheme == schemePostgres {
		o.Postgres = &PostgresOptions{MaxConns: int32(convs)}
	}
	db, err := Open(&o)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var wg sync.WaitGroup
	errs := make(chan error, convs)
	for c := range convs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conv := fmt.Sprint("conv", c)
			for i := range n {
				text := fmt.Sprintf("p%s %s n%d", id, conv, i)
				if _, err := db.Append(conv, user(text), AppendOptions{IdempotencyKey: text}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
}

// TestConcurrentProcesses: on every shared backend, 4 processes × 8
// conversations × 500 appends at once, and 4 processes appending to one
// conversation; every conversation ends with seqs 1..4×500, each append
// present once.
func TestConcurrentProcesses(t *testing.T) {
	eachSharedBackend(t, func(t *testing.T, be testBackend) {
		for _, convs := range []int{8, 1} {
			t.Run(fmt.Sprint("convs=", convs), func(t *testing.T) { testConcurrentProcesses(t, be, convs) })
		}
	})
}

func testConcurrentProcesses(t *testing.T, be testBackend, convs int) {
	o := be.fresh(t)
	spec, err := o.spec()
	if err != nil {
		t.Fatal(err)
	}
	n := pgAppends(t)
	db := openWith(t, &o)
	for c := range convs {
		mustCreate(t, db, fmt.Sprint("conv", c))
	}
	start := time.Now()
	cmds := make([]*exec.Cmd, pgProcs)
	outs := make([]bytes.Buffer, pgProcs)
	for p := range cmds {
		cmd := exec.Command(os.Args[0], "-test.run=^TestWriterChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), envChildScheme+"="+spec.Scheme, envChildTarget+"="+spec.Target,
			envChildConvs+"="+strconv.Itoa(convs), envPGChildID+"="+strconv.Itoa(p), envPGAppends+"="+strconv.Itoa(n))
		cmd.Stdout, cmd.Stderr = &outs[p], &outs[p]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[p] = cmd
	}
	var failed []error
	for p, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			failed = append(failed, fmt.Errorf("writer %d: %v\n%s", p, err, outs[p].String()))
		}
	}
	if err := errors.Join(failed...); err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	total := pgProcs * convs * n
	t.Logf("%d processes × %d conversations × %d appends: %v, %.0f appends/s", pgProcs, convs, n, elapsed, float64(total)/elapsed.Seconds())
	for c := range convs {
		conv := fmt.Sprint("conv", c)
		rs := denseAndDistinct(t, db, conv)
		if len(rs) != pgProcs*n {
			t.Errorf("%s: %d messages, want %d", conv, len(rs), pgProcs*n)
		}
		if st, err := db.Stats(conv); err != nil || st.Messages != int64(pgProcs*n) {
			t.Errorf("%s: Stats = %+v, %v, want %d messages", conv, st, err, pgProcs*n)
		}
	}
}
