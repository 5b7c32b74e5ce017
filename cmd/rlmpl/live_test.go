package main

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/rlmpl/rlmpl/host/provider/providertest"
	"github.com/rlmpl/rlmpl/store"
	"github.com/rlmpl/rlmpl/store/pgtest"
)

// TestChatShowsOtherWorkersMessages: `rlmpl chat` on a PostgreSQL store
// shows, while it waits for a line, a message another worker (another
// store on the database) appended; its own turn's messages are not shown
// twice, and history from before it started is not shown.
func TestChatShowsOtherWorkersMessages(t *testing.T) {
	url := pgtest.DSN(t)
	srv := providertest.NewServer(providertest.Completion(`{"steps":[{"op":"final","value":"done"}]}`, 10, 5))
	defer srv.Close()
	other, err := store.Open(&store.Options{Postgres: &store.PostgresOptions{DSN: url}})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.Create("live", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Append("live", store.Message{Role: store.RoleUser, Content: store.TextContent("old history")}, store.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	in, feed := io.Pipe()
	var stdout, stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(context.Background(), []string{"chat", "--store", url, "--conv", "live", "--provider", "local",
			"--base-url", srv.BaseURL(), "--model", "tiny"}, in, &stdout, &stderr)
	}()
	waitFor := func(what string) {
		t.Helper()
		for start := time.Now(); !strings.Contains(stdout.String(), what); time.Sleep(20 * time.Millisecond) {
			if time.Since(start) > 20*time.Second {
				t.Fatalf("chat never showed %q:\n%s\n%s", what, stdout.String(), stderr.String())
			}
		}
	}
	feed.Write([]byte("hello\n"))
	waitFor("done\n")
	if _, err := other.Append("live", store.Message{Role: store.RoleUser, Name: "bob", Content: store.TextContent("from another worker")}, store.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor("[4] user (bob), from elsewhere: from another worker\n")
	feed.Write([]byte("/quit\n"))
	if code := <-done; code != 0 {
		t.Fatalf("chat exit %d: %s", code, stderr.String())
	}
	if out := stdout.String(); out != "done\n[4] user (bob), from elsewhere: from another worker\n" {
		t.Errorf("chat printed:\n%s", out)
	}
}
