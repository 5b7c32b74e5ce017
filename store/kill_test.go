package store

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rlmpl/rlmpl/store/pgtest"
)

// The kill -9 test re-executes the test binary as a writer (TestKillChild),
// kills it at a random moment, reopens the store and checks that every
// acknowledged append is there with its content and that every
// conversation's sequences are dense. Six writers append to four
// conversations, so on badger two pairs of them share commits on one
// conversation as well as across conversations. RLMPL_KILL_CYCLES sets
// the number of cycles (default 5). TestPostgresKill does the same on
// PostgreSQL, TestSQLiteKill on SQLite with two writer processes at once,
// killed at different moments.

const (
	envKillDir   = "RLMPL_KILL_CHILD_DIR"
	envKillDSN   = "RLMPL_KILL_CHILD_DSN"    // set: the store is on PostgreSQL
	envKillFile  = "RLMPL_KILL_CHILD_SQLITE" // set: the store is this SQLite file
	killWriters  = 6                         // on 4 conversations: two of them have two writers
	killConvs    = 4
	killAckFile  = "acks.log"
	killCycleEnv = "RLMPL_KILL_CYCLES"
)

// TestKillChild is the writer process of TestKill; it does nothing unless
// started by it.
func TestKillChild(t *testing.T) {
	dir := os.Getenv(envKillDir)
	if dir == "" {
		t.Skip("only run as TestKill's child")
	}
	acks, err := os.OpenFile(filepath.Join(dir, killAckFile), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	db, err := Open(killStore(dir, os.Getenv(envKillDSN), os.Getenv(envKillFile)))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := 0; w < killWriters; w++ {
		conv := fmt.Sprint("conv", w%killConvs)
		if _, err := db.Create(conv, nil); err != nil && !strings.Contains(err.Error(), "exists") {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				text := fmt.Sprintf("%s pid%d n%dw%d", conv, os.Getpid(), i, w)
				r, err := db.Append(conv, user(text), AppendOptions{IdempotencyKey: text})
				if err != nil {
					fmt.Fprintln(os.Stderr, "append:", err)
					os.Exit(3)
				}
				// One write(2) per ack, after Append returned: an ack on
				// disk implies an acknowledged append.
				if _, err := acks.WriteString(fmt.Sprintf("ACK %s %d %s\n", conv, r.Seq, text)); err != nil {
					os.Exit(4)
				}
			}
		}()
	}
	wg.Wait()
}

// killStore is the store of the kill test: badger in dir, PostgreSQL at
// dsn, or the SQLite file file.
func killStore(dir, dsn, file string) *Options {
	switch {
	case dsn != "":
		return &Options{Postgres: &PostgresOptions{DSN: dsn}}
	case file != "":
		return &Options{Spec: Spec{Scheme: schemeSQLite, Target: file}}
	}
	return &Options{Dir: filepath.Join(dir, "db")}
}

func TestKill(t *testing.T) { testKill(t, "", "", 1) }

// TestPostgresKill: kill -9 of a process appending to PostgreSQL from six
// goroutines; every acknowledged append is there, sequences are dense, and
// every stored message has exactly one search document (they commit
// together).
func TestPostgresKill(t *testing.T) { testKill(t, pgtest.DSN(t), "", 1) }

// TestSQLiteKill: kill -9 of two processes appending to one SQLite store
// (synchronous=FULL) from six goroutines each, at different moments; every
// acknowledged append is there, sequences are dense, and the index, from
// its watermarks, finds every message once the next open indexed what was
// pending.
func TestSQLiteKill(t *testing.T) {
	testKill(t, "", filepath.Join(t.TempDir(), "store.db"), 2)
}

// testKill kills procs writer processes per cycle, each at its own moment.
func testKill(t *testing.T, dsn, file string, procs int) {
	if testing.Short() {
		t.Skip("-short")
	}
	cycles := 5
	if s := os.Getenv(killCycleEnv); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			t.Fatalf("%s=%q: want a count", killCycleEnv, s)
		}
		cycles = n
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	totalAcks, totalExtra := 0, 0
	for c := 0; c < cycles; c++ {
		var wg sync.WaitGroup
		errs := make(chan error, procs)
		for range procs {
			cmd := exec.Command(os.Args[0], "-test.run=^TestKillChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), envKillDir+"="+dir, envKillDSN+"="+dsn, envKillFile+"="+file)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Give it time to start and append, then kill at a random point.
			wait := time.Duration(150+rng.IntN(450)) * time.Millisecond
			wg.Add(1)
			go func() {
				defer wg.Done()
				time.Sleep(wait)
				_ = cmd.Process.Signal(syscall.SIGKILL)
				err := cmd.Wait()
				if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
					errs <- fmt.Errorf("cycle %d: writer exited on its own (%v): %s", c, err, stderr.String())
				}
			}()
		}
		wg.Wait()
		close(errs)
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
		acks, extra := verifyKill(t, dir, dsn, file, c)
		totalAcks, totalExtra = acks, extra
	}
	t.Logf("%d kill -9 cycles: %d acknowledged appends, all present, sequences dense; %d unacknowledged but committed (killed between commit and ack)", cycles, totalAcks, totalExtra)
}

// verifyKill reopens the store and checks it against the acks; it returns
// the number of acks and of stored messages beyond the acked ones.
func verifyKill(t *testing.T, dir, dsn, file string, cycle int) (acks, extra int) {
	t.Helper()
	db, err := Open(killStore(dir, dsn, file))
	if err != nil {
		t.Fatalf("cycle %d: reopen: %v", cycle, err)
	}
	defer db.Close()
	f, err := os.Open(filepath.Join(dir, killAckFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := map[string]map[int64]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		parts := strings.SplitN(line, " ", 4)
		if len(parts) != 4 || parts[0] != "ACK" {
			continue // a line torn by the kill
		}
		seq, err := strconv.ParseInt(parts[2], 10, 64)
		if err != nil {
			continue
		}
		if want[parts[1]] == nil {
			want[parts[1]] = map[int64]string{}
		}
		want[parts[1]][seq] = parts[3]
		acks++
	}
	for conv, bySeq := range want {
		rs, err := db.Messages(conv, All(), 0)
		if err != nil {
			t.Fatalf("cycle %d: %s: %v", cycle, conv, err)
		}
		st, _ := db.Stats(conv)
		if st.Messages != int64(len(rs)) {
			t.Fatalf("cycle %d: %s: Stats.Messages %d, %d records", cycle, conv, st.Messages, len(rs))
		}
		for i, r := range rs {
			if r.Seq != int64(i+1) {
				t.Fatalf("cycle %d: %s: record %d has seq %d (gap or duplicate)", cycle, conv, i, r.Seq)
			}
		}
		for seq, text := range bySeq {
			if seq > int64(len(rs)) {
				t.Fatalf("cycle %d: %s: acknowledged seq %d lost (only %d stored)", cycle, conv, seq, len(rs))
			}
			if got := rs[seq-1].Message.Content.Text; got != text {
				t.Fatalf("cycle %d: %s seq %d = %q, acknowledged %q", cycle, conv, seq, got, text)
			}
		}
		extra += len(rs) - len(bySeq)
	}
	if dsn != "" {
		// Every conversation, those without an ack yet included (killed
		// between its first commit and the ack's write). The killed
		// process's last COMMIT may still be landing on the server: the
		// messages are counted between two counts of the documents, and
		// again until no commit fell in between.
		stored, docs := int64(0), ""
		for try := 0; ; try++ {
			before := pgtest.Scalar(t, dsn, "SELECT count(*) FROM rlmpl_doc")
			convs, err := db.List(Asc, 0)
			if err != nil {
				t.Fatal(err)
			}
			stored = 0
			for _, c := range convs {
				st, err := db.Stats(c.ID)
				if err != nil {
					t.Fatal(err)
				}
				stored += st.Messages
			}
			if docs = pgtest.Scalar(t, dsn, "SELECT count(*) FROM rlmpl_doc"); docs == before || try == 50 {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if docs != strconv.FormatInt(stored, 10) {
			t.Fatalf("cycle %d: %s search documents for %d messages", cycle, docs, stored)
		}
	}
	// The index recovers from its watermarks: the newest message of each
	// conversation is findable, and the indexer catches up.
	for conv := range want {
		last, err := db.Messages(conv, Recent(1), 0)
		if err != nil || len(last) != 1 {
			t.Fatalf("cycle %d: %s: recent(1): %v", cycle, conv, err)
		}
		word := strings.Fields(last[0].Message.Content.Text)[2] // "nK"
		hits, _, err := db.Search(conv, strings.Fields(last[0].Message.Content.Text)[1]+" "+word, SearchOptions{MaxResults: 1000})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, h := range hits {
			found = found || h.Seq == last[0].Seq
		}
		if !found {
			t.Fatalf("cycle %d: %s: search misses the newest message %d", cycle, conv, last[0].Seq)
		}
	}
	if err := db.WaitIndexed(60 * time.Second); err != nil {
		t.Fatalf("cycle %d: %v", cycle, err)
	}
	// Nothing is pending now, so these hits come from the index itself: a
	// watermark must never claim a document the index lost in the kill.
	checked := 0
	for conv, bySeq := range want {
		for seq, text := range bySeq {
			if checked++; checked > 40 {
				break
			}
			f := strings.Fields(text) // conv pidP nKwW
			hits, _, err := db.Search(conv, f[1]+" "+f[2], SearchOptions{MaxResults: 1})
			if err != nil || len(hits) != 1 || hits[0].Seq != seq {
				t.Fatalf("cycle %d: %s seq %d (%q) not found in the index: %v %v", cycle, conv, seq, text, searchSeqs(hits), err)
			}
		}
	}
	return acks, extra
}
