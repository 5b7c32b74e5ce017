package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rlmpl/rlmpl/store/pgtest"
)

// TestPostgresServerGoneAndBack: the database goes away mid-run (through
// a proxy: connections reset, then refused). While it is away every call
// fails with ErrUnavailable within the retry bound (the connect timeout,
// here 1s), never hanging; a call made while it is away and still within
// the bound succeeds once it is back; afterwards the store works on new
// connections and nothing acknowledged is lost.
func TestPostgresServerGoneAndBack(t *testing.T) {
	proxy, dsn := pgtest.NewProxy(t, pgtest.DSN(t))
	o := Options{Postgres: &PostgresOptions{DSN: dsn, ConnectTimeout: time.Second, StatementTimeout: 5 * time.Second}}
	db := openWith(t, &o)
	mustCreate(t, db, "c")
	for i := range 10 {
		mustAppend(t, db, "c", user(fmt.Sprint("before ", i)))
	}

	proxy.Down()
	for _, call := range []struct {
		name string
		f    func() error
	}{
		{"Append", func() error { _, err := db.Append("c", user("while down"), AppendOptions{}); return err }},
		{"Messages", func() error { _, err := db.Messages("c", All(), 0); return err }},
		{"Create", func() error { _, err := db.Create("d", nil); return err }},
	} {
		start := time.Now()
		err := call.f()
		if !errors.Is(err, ErrUnavailable) {
			t.Errorf("%s while the server is away = %v, want ErrUnavailable", call.name, err)
		}
		if d := time.Since(start); d > 4*time.Second {
			t.Errorf("%s took %v to fail with a 1s connect timeout", call.name, d)
		}
	}

	done := make(chan error, 1)
	go func() {
		_, err := db.Append("c", user("sent while down, retried"), AppendOptions{IdempotencyKey: "k"})
		done <- err
	}()
	time.Sleep(300 * time.Millisecond)
	proxy.Up()
	if err := <-done; err != nil {
		t.Fatalf("an append retried across the server's return = %v", err)
	}
	mustAppend(t, db, "c", user("after"))
	if _, err := db.Append("c", user("sent while down, retried"), AppendOptions{IdempotencyKey: "k"}); err != nil {
		t.Fatal(err)
	}
	recs, err := db.Messages("c", All(), 0)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for i, r := range recs {
		if r.Seq != int64(i+1) {
			t.Errorf("message %d has seq %d", i, r.Seq)
		}
		texts = append(texts, r.Message.Content.PlainText())
	}
	if len(recs) != 12 || texts[10] != "sent while down, retried" || texts[11] != "after" {
		t.Errorf("after the outage: %d messages %q, want the 10 acknowledged, the retried one, then after", len(recs), texts)
	}
}

// TestPostgresTerminatedBackends: the server ends the store's sessions
// (pg_terminate_backend: admin_shutdown, 57P01, as a restart does) in the
// middle of a transaction; the transaction is retried on a new connection
// and commits once.
func TestPostgresTerminatedBackends(t *testing.T) {
	app := fmt.Sprintf("rlmpl_pg_term_%d", time.Now().UnixNano())
	dsn := pgtest.DSN(t) + "&application_name=" + app
	if !strings.Contains(dsn, "?") {
		t.Skip("the test server's DSN is not a URL")
	}
	db := openWith(t, &Options{Postgres: &PostgresOptions{DSN: dsn}})
	mustCreate(t, db, "c")
	mustAppend(t, db, "c", user("one"))
	kill := func() {
		pgtest.Exec(t, pgtest.BaseDSN(), "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = '"+app+"'")
	}
	runs := 0
	err := db.kv.Update(func(txn kvTxn) error {
		runs++
		if runs == 1 {
			if err := txn.Set([]byte("zz-test"), []byte("x")); err != nil {
				return err
			}
			kill()
			_, err := txn.Get([]byte("zz-test"))
			return err
		}
		return txn.Set([]byte("zz-test"), []byte("y"))
	})
	if err != nil || runs != 2 {
		t.Fatalf("Update whose backend was terminated = %v after %d runs, want nil after 2", err, runs)
	}
	kill()
	mustAppend(t, db, "c", user("two"))
	if st, err := db.Stats("c"); err != nil || st.Messages != 2 {
		t.Errorf("after two terminations: %+v, %v", st, err)
	}
}

// TestPostgresRealRestart restarts the test server itself mid-run:
// writers keep appending (with idempotency keys, retrying what failed)
// while it goes down and comes back; every acknowledged append is there,
// dense, and calls fail with ErrUnavailable, never hang, while it is down.
// It disturbs everyone using the server, so it runs only when
// RLMPL_PG_RESTART_TEST=1 (and the pg_ctlcluster of a local Debian
// cluster is available); the cluster is started again whatever happens.
func TestPostgresRealRestart(t *testing.T) {
	if os.Getenv("RLMPL_PG_RESTART_TEST") != "1" {
		t.Skip("restarts the shared PostgreSQL server: set RLMPL_PG_RESTART_TEST=1")
	}
	versions, err := os.ReadDir("/etc/postgresql")
	if err != nil || len(versions) != 1 {
		t.Skipf("no single local cluster in /etc/postgresql: %v", err)
	}
	ctl := func(action string) {
		out, err := exec.Command("pg_ctlcluster", "--skip-systemctl-redirect", versions[0].Name(), "main", action).CombinedOutput()
		if err != nil {
			t.Errorf("pg_ctlcluster %s: %v\n%s", action, err, out)
		}
	}
	t.Cleanup(func() {
		// Start it again whatever happened (an error when it runs).
		_ = exec.Command("pg_ctlcluster", "--skip-systemctl-redirect", versions[0].Name(), "main", "start").Run()
	})
	dsn := pgtest.DSN(t)
	db := openWith(t, &Options{Postgres: &PostgresOptions{DSN: dsn, ConnectTimeout: 2 * time.Second, StatementTimeout: 5 * time.Second}})
	mustCreate(t, db, "c")
	ctx, stop := context.WithCancel(context.Background())
	var (
		wg          sync.WaitGroup
		mu          sync.Mutex
		acked       = map[string]bool{}
		unavailable int
		slowest     time.Duration
	)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				key := fmt.Sprintf("w%d-%d", w, i)
				for ctx.Err() == nil {
					start := time.Now()
					_, err := db.Append("c", user(key), AppendOptions{IdempotencyKey: key})
					mu.Lock()
					slowest = max(slowest, time.Since(start))
					if err == nil {
						acked[key] = true
					} else if errors.Is(err, ErrUnavailable) {
						unavailable++
					} else {
						t.Errorf("append %s: %v", key, err)
					}
					mu.Unlock()
					if err == nil {
						break
					}
				}
			}
		}()
	}
	time.Sleep(500 * time.Millisecond)
	ctl("stop")
	time.Sleep(4 * time.Second) // longer than the retry bound: calls fail meanwhile
	ctl("start")
	time.Sleep(2 * time.Second)
	stop()
	wg.Wait()
	recs, err := db.Messages("c", All(), 0)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for i, r := range recs {
		if r.Seq != int64(i+1) || seen[r.Message.Content.PlainText()] {
			t.Fatalf("message %d: seq %d, %q (duplicate: %v)", i, r.Seq, r.Message.Content.PlainText(), seen[r.Message.Content.PlainText()])
		}
		seen[r.Message.Content.PlainText()] = true
	}
	for k := range acked {
		if !seen[k] {
			t.Errorf("acknowledged append %s lost", k)
		}
	}
	t.Logf("%d appends acknowledged, %d stored, %d ErrUnavailable while down, slowest call %v", len(acked), len(recs), unavailable, slowest)
	if unavailable == 0 {
		t.Error("no call failed while the server was down for longer than the retry bound")
	}
	if slowest > 8*time.Second {
		t.Errorf("a call took %v with a 2s connect timeout and 5s statement timeout", slowest)
	}
}
