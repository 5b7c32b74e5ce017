package runtime

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rlmpl/rlmpl/host/handle"
	"github.com/rlmpl/rlmpl/host/provider"
	"github.com/rlmpl/rlmpl/host/provider/providertest"
	"github.com/rlmpl/rlmpl/store"
	"github.com/rlmpl/rlmpl/store/pgtest"
)

// The cross-process turn test re-executes the test binary as four
// processes (TestTurnProcessesChild) that take managed turns on one
// conversation of one shared store (PostgreSQL, SQLite) at once, against
// one scripted HTTP provider that takes a while to answer. Turns must
// serialize across the processes: the provider never has two requests in
// flight, each turn's user message is followed by its own answer, and
// every turn has its completed receipt.

const (
	envTurnProcsSpec = "RLMPL_TURN_PROCS_SPEC" // scheme:target, unredacted
	envTurnProcsURL  = "RLMPL_TURN_PROCS_URL"
	envTurnProcsID   = "RLMPL_TURN_PROCS_ID"
	turnProcs        = 4
	turnsPerProc     = 8
)

func TestTurnProcessesChild(t *testing.T) {
	text := os.Getenv(envTurnProcsSpec)
	if text == "" {
		t.Skip("only run as TestTurnsSerializeAcrossProcesses's child")
	}
	scheme, target, _ := strings.Cut(text, ":")
	spec, err := store.NewSpec(scheme, target)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := New(&Options{Grants: grantsOf(spec)})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	st, err := rt.OpenStore(StoreSpec{Store: spec})
	if err != nil {
		t.Fatal(err)
	}
	p, err := provider.NewClient(&provider.Options{BaseURL: os.Getenv(envTurnProcsURL), Model: "m", MaxRetries: 0})
	if err != nil {
		t.Fatal(err)
	}
	c := st.Conversation("c")
	for i := range turnsPerProc {
		opts := turnOpts(httpPlanner{p}, handle.New(nil))
		opts.TurnID = fmt.Sprintf("p%s-t%d", os.Getenv(envTurnProcsID), i)
		if _, err := c.Turn(context.Background(), user(opts.TurnID), opts); err != nil {
			t.Fatalf("turn %s: %v", opts.TurnID, err)
		}
	}
}

// grantsOf grants the directory of a store on this machine.
func grantsOf(spec store.Spec) []string {
	if spec.Local() {
		return []string{filepath.Dir(spec.Target)}
	}
	return nil
}

// TestTurnsSerializeAcrossProcesses: on every shared backend.
func TestTurnsSerializeAcrossProcesses(t *testing.T) {
	t.Run("postgres", func(t *testing.T) { testTurnsSerializeAcrossProcesses(t, "postgres", pgtest.DSN(t)) })
	t.Run("sqlite", func(t *testing.T) {
		testTurnsSerializeAcrossProcesses(t, "sqlite", filepath.Join(t.TempDir(), "turns.db"))
	})
}

func testTurnsSerializeAcrossProcesses(t *testing.T, scheme, target string) {
	spec, err := store.NewSpec(scheme, target)
	if err != nil {
		t.Fatal(err)
	}
	var inFlight, most, served atomic.Int64
	srv := providertest.NewServer(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		served.Add(1)
		time.Sleep(20 * time.Millisecond) // the model thinks
		providertest.Completion(final("answered"), 10, 2)(w, r)
	})
	defer srv.Close()
	rt, err := New(&Options{Grants: grantsOf(spec)})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	st, err := rt.OpenStore(StoreSpec{Store: spec})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Create("c", nil); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, turnProcs)
	outs := make([][]byte, turnProcs)
	for i := range turnProcs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^TestTurnProcessesChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), envTurnProcsSpec+"="+scheme+":"+target, envTurnProcsURL+"="+srv.BaseURL(), fmt.Sprintf("%s=%d", envTurnProcsID, i))
			outs[i], errs[i] = cmd.CombinedOutput()
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("process %d: %v\n%s", i, err, outs[i])
		}
	}
	if got, want := served.Load(), int64(turnProcs*turnsPerProc); got != want {
		t.Errorf("the provider served %d requests, want %d (one per turn)", got, want)
	}
	if m := most.Load(); m != 1 {
		t.Errorf("the provider had %d requests in flight at once: turns on one conversation overlapped across processes", m)
	}
	c := st.Conversation("c")
	recs, err := c.Messages(store.All(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2*turnProcs*turnsPerProc {
		t.Fatalf("%d messages, want %d", len(recs), 2*turnProcs*turnsPerProc)
	}
	for i := 0; i < len(recs); i += 2 {
		u, a := recs[i], recs[i+1]
		if u.Seq != int64(i+1) || u.Message.Role != store.RoleUser || a.Message.Role != store.RoleAssistant || a.Message.Content.Text != "answered" {
			t.Fatalf("messages %d and %d are %s %q and %s %q: a turn's answer does not follow its question", u.Seq, a.Seq,
				u.Message.Role, u.Message.Content.Text, a.Message.Role, a.Message.Content.Text)
		}
		r, err := c.Receipt(u.Message.Content.Text)
		if err != nil || r.Status != StatusCompleted || r.UserSeq != u.Seq || r.AssistantSeq != a.Seq {
			t.Errorf("turn %s: receipt %+v, %v", u.Message.Content.Text, r, err)
		}
	}
}
