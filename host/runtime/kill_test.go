package runtime

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/rlmpl/rlmpl/host/handle"
	"github.com/rlmpl/rlmpl/host/plan"
	"github.com/rlmpl/rlmpl/store"
	"github.com/rlmpl/rlmpl/store/pgtest"
)

// The turn kill -9 test re-executes the test binary as a process that
// takes managed turns (TestTurnKillChild) on a persistent store, kills it
// at a random moment, reopens the store and checks the turn's promise:
// every user message of a turn is durable; a turn has either its assistant
// message and a completed receipt — both, never one without the other — or
// a failed or absent receipt; no message is duplicated. The child also
// republishes a warm artifact now and then: its versions stay dense and
// whole, and current (its source never changes). Every other pair of
// turns is direct, with a history_search round: a kill mid-loop leaves no
// tool call without its result and no tool message without its answer.
// RLMPL_TURN_KILL_CYCLES sets the cycles (default 3). TestPostgresTurnKill
// does the same on PostgreSQL, TestSQLiteTurnKill on SQLite.

const (
	envTurnKillDir  = "RLMPL_TURN_KILL_DIR"
	envTurnKillSpec = "RLMPL_TURN_KILL_SPEC" // set: the store's spec, unredacted
)

// turnKillStore is the store of the turn kill test: badger under the
// state directory, or the store spec names.
func turnKillStore(t *testing.T, spec string) StoreSpec {
	if spec == "" {
		return StoreSpec{Dir: "s"}
	}
	s, err := store.ParseSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	return StoreSpec{Store: s}
}

func TestTurnKillChild(t *testing.T) {
	dir := os.Getenv(envTurnKillDir)
	if dir == "" {
		t.Skip("only run as TestTurnKill's child")
	}
	rt, err := New(&Options{StateDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	st, err := rt.OpenStore(turnKillStore(t, os.Getenv(envTurnKillSpec)))
	if err != nil {
		t.Fatal(err)
	}
	st.Create("c", nil) // exists after the first cycle
	c := st.Conversation("c")
	reg := handle.New(nil)
	ready := false
	for i := 0; ; i++ {
		opts := turnOpts(&planner{answers: []string{final("ok")}}, reg)
		// A retried id (the same one every other turn) exercises the
		// failed-then-retried path across kills.
		opts.TurnID = fmt.Sprintf("p%d-t%d", os.Getpid(), i/2)
		if i%4 >= 2 { // a direct turn with a tool round: killed mid-loop too
			opts.Mode = ModeDirect
			opts.Deps.Models = &respondModels{replies: []plan.ModelResult{search("s"+opts.TurnID, "turn", 3), {Text: "ok"}}}
		}
		if _, err := c.Turn(context.Background(), user(opts.TurnID), opts); err != nil {
			fmt.Fprintln(os.Stderr, "turn:", err)
			os.Exit(3)
		}
		if i%3 == 1 {
			if _, err := c.WarmPublish(context.Background(), 1, 2, (&scripted{fields: usefulFields}).gen, []string{"o200k_base"}); err != nil {
				fmt.Fprintln(os.Stderr, "warm publish:", err)
				os.Exit(3)
			}
		}
		if !ready { // tell the parent turns are under way: the kill comes after
			ready = true
			os.WriteFile(dir+"/ready", nil, 0o644)
		}
	}
}

func TestTurnKill(t *testing.T) { testTurnKill(t, "") }

func TestPostgresTurnKill(t *testing.T) { testTurnKill(t, "postgres:"+pgtest.DSN(t)) }

func TestSQLiteTurnKill(t *testing.T) { testTurnKill(t, "sqlite:s.db") }

func testTurnKill(t *testing.T, spec string) {
	if testing.Short() {
		t.Skip("-short")
	}
	cycles := 3
	if s := os.Getenv("RLMPL_TURN_KILL_CYCLES"); s != "" {
		cycles, _ = strconv.Atoi(s)
	}
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(7, 7))
	artifacts, rounds, interrupted := 0, 0, 0
	for cycle := range cycles {
		os.Remove(dir + "/ready")
		cmd := exec.Command(os.Args[0], "-test.run=^TestTurnKillChild$")
		cmd.Env = append(os.Environ(), envTurnKillDir+"="+dir, envTurnKillSpec+"="+spec)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		for start := time.Now(); ; time.Sleep(10 * time.Millisecond) {
			if _, err := os.Stat(dir + "/ready"); err == nil {
				break
			}
			if time.Since(start) > time.Minute {
				cmd.Process.Kill()
				t.Fatal("the child took no turn in a minute")
			}
		}
		time.Sleep(time.Duration(r.IntN(500)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		artifacts, rounds, interrupted = checkTurns(t, dir, spec, cycle)
	}
	t.Logf("%d cycles: %d turns interrupted by a kill, each with its failed receipt", cycles, interrupted)
	if artifacts == 0 || rounds == 0 {
		t.Fatalf("%d warm artifacts and %d direct tool rounds before the kills", artifacts, rounds)
	}
}

// checkTurns reopens the store and checks every turn's messages against
// its receipts, and the warm artifact's versions; it returns how many
// versions, direct tool rounds and interrupted turns there are.
func checkTurns(t *testing.T, dir, spec string, cycle int) (versions, rounds, interrupted int) {
	t.Helper()
	rt, err := New(&Options{StateDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	st, err := rt.OpenStore(turnKillStore(t, spec))
	if err != nil {
		t.Fatalf("cycle %d: reopen: %v", cycle, err)
	}
	c := st.Conversation("c")
	recs, err := c.Messages(store.All(), 0)
	if err != nil {
		t.Fatal(err)
	}
	users := map[string]int64{}
	assistants := map[int64]bool{}
	for i, r := range recs {
		if r.Seq != int64(i+1) {
			t.Fatalf("cycle %d: sequences not dense at %d", cycle, r.Seq)
		}
		switch r.Message.Role {
		case store.RoleUser:
			if _, dup := users[r.Message.Content.Text]; dup {
				t.Fatalf("cycle %d: user message %q stored twice", cycle, r.Message.Content.Text)
			}
			users[r.Message.Content.Text] = r.Seq
		case store.RoleAssistant:
			if len(r.Message.ToolCalls) == 0 {
				assistants[r.Seq] = true
				break
			}
			// A direct turn's tool round: its call, then its result, then
			// (a round or) the answer — stored together, never cut.
			next := recs[min(i+1, len(recs)-1)].Message
			if i+2 >= len(recs) || next.Role != store.RoleTool || next.ToolCallID != r.Message.ToolCalls[0].ID {
				t.Fatalf("cycle %d: tool call at %d without its result", cycle, r.Seq)
			}
			rounds++
		case store.RoleTool:
			if prev := recs[max(i-1, 0)].Message; i == 0 || len(prev.ToolCalls) == 0 || prev.ToolCalls[0].ID != r.Message.ToolCallID {
				t.Fatalf("cycle %d: orphan tool result at %d", cycle, r.Seq)
			}
		}
	}
	rs, err := c.Receipts(false)
	if err != nil {
		t.Fatal(err)
	}
	// Every turn has a receipt: the one it stored, or — killed before it
	// could — the failed one the next turn stored (interrupted), or for
	// the last turn one listed as interrupted but not stored yet (no turn
	// ran after the kill). None is running: the child is dead.
	if len(rs) != len(users) {
		t.Fatalf("cycle %d: %d receipts for %d turns", cycle, len(rs), len(users))
	}
	withReceipt := map[int64]bool{}
	for i, r := range rs {
		if users[r.TurnID] != r.UserSeq {
			t.Fatalf("cycle %d: receipt %s names user message %d, stored at %d", cycle, r.TurnID, r.UserSeq, users[r.TurnID])
		}
		switch {
		case r.Status == StatusRunning:
			t.Fatalf("cycle %d: turn %s listed as running after its process died", cycle, r.TurnID)
		case r.Version == 0 && (i != len(rs)-1 || r.Error == nil || r.Error.Kind != KindInterrupted):
			t.Fatalf("cycle %d: turn %s has no stored receipt, and it is not the last one interrupted: %+v", cycle, r.TurnID, r)
		}
		if r.Error != nil && r.Error.Kind == KindInterrupted {
			interrupted++
		}
		if r.Status == StatusCompleted {
			if !assistants[r.AssistantSeq] {
				t.Fatalf("cycle %d: completed receipt %s without its assistant message %d", cycle, r.TurnID, r.AssistantSeq)
			}
			withReceipt[r.AssistantSeq] = true
		}
	}
	for seq := range assistants {
		if !withReceipt[seq] {
			t.Fatalf("cycle %d: assistant message %d has no completed receipt", cycle, seq)
		}
	}
	if len(recs) == 0 {
		t.Fatalf("cycle %d: the child stored nothing", cycle)
	}
	arts, err := c.WarmList(true)
	if err != nil {
		t.Fatalf("cycle %d: warm artifacts: %v", cycle, err)
	}
	for i, a := range arts {
		if a.Version != i+1 || a.Key != "range_1_2" || len(a.Variants) != 4 {
			t.Fatalf("cycle %d: artifact %d is %s v%d with %d variants", cycle, i, a.Key, a.Version, len(a.Variants))
		}
	}
	if len(arts) > 0 {
		cp, err := c.Pack(context.Background(), PackOptions{Policy: testPolicy(100000, 1, 8), Utilities: testUtilities, Warm: &WarmOptions{Policy: testWarmPolicy}})
		if err != nil || cp.Warm.Stale != 0 || cp.Warm.Available != 1 {
			t.Fatalf("cycle %d: warm after reopen: %+v, %v", cycle, cp.Warm, err)
		}
	}
	return len(arts), rounds, interrupted
}
