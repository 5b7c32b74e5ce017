package main

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rlmpl/rlmpl/host/provider/providertest"
)

// TestChatBesideReadersOnSQLite: `rlmpl chat` runs in one process on an
// SQLite store while another process (this one) lists conversations,
// searches them and reads the chat's receipts, with no server; then the
// chat, still running, shows what the other process appended. On badger
// the second process would be refused (store_locked): a directory is one
// process's.
func TestChatBesideReadersOnSQLite(t *testing.T) {
	state := t.TempDir()
	const spec = "sqlite:agent.db"
	srv := providertest.NewServer(providertest.Completion(`{"steps":[{"op":"final","value":"noted"}]}`, 10, 5))
	defer srv.Close()
	cmd := exec.Command(os.Args[0], "chat", "--state", state, "--store", spec, "--conv", "live",
		"--provider", "local", "--base-url", srv.BaseURL(), "--model", "tiny")
	cmd.Env = append(os.Environ(), "RLMPL_TEST_MAIN=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	expect := func(want string) {
		t.Helper()
		timeout := time.After(30 * time.Second)
		for {
			select {
			case line, ok := <-lines:
				if !ok {
					t.Fatalf("chat ended before %q: %s", want, stderr.String())
				}
				if strings.Contains(line, want) {
					return
				}
			case <-timeout:
				t.Fatalf("chat never printed %q: %s", want, stderr.String())
			}
		}
	}
	io.WriteString(stdin, "the staging port is 8443\n")
	expect("noted")

	// The chat is still running: another process reads the store.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"conv", "list"}, "live"},
		{[]string{"conv", "search", "live", "staging port"}, "8443"},
		{[]string{"receipt", "list", "--conv", "live"}, "completed"},
		{[]string{"receipt", "stats", "--conv", "live"}, "turns"},
	} {
		args := append(tc.args, "--state", state, "--store", spec)
		out, errs, code := rlmpl(t, args...)
		if code != 0 || !strings.Contains(out, tc.want) {
			t.Errorf("rlmpl %s beside a running chat: exit %d, want %q in\n%s%s", strings.Join(args, " "), code, tc.want, out, errs)
		}
	}
	// And writes: the chat shows another process's message as it waits.
	if _, errs, code := rlmpl(t, "conv", "import", "--state", state, "--store", spec, "live", writeFile(t, filepath.Join(t.TempDir(), "m.jsonl"), `{"role":"user","name":"bob","content":"from another process"}`+"\n")); code != 0 {
		t.Fatalf("conv import beside a running chat: %s", errs)
	}
	expect("from another process")
	io.WriteString(stdin, "/quit\n")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("chat: %v: %s", err, stderr.String())
	}
}

// TestBadStoreSpecIsAConfigurationError: a store spec that does not parse,
// from --store or RLMPL_STORE, stops a command with exit 2 and a message
// naming the bad part (a password redacted), before anything is opened.
func TestBadStoreSpecIsAConfigurationError(t *testing.T) {
	state := t.TempDir()
	for _, tc := range []struct{ flag, env, want string }{
		{"sqlit:a.db", "", `unknown scheme "sqlit"`},
		{"sqlite:", "", `"sqlite:" names no file (sqlite:PATH)`},
		{"", "postgress://u:secret@h/db", `"postgress://u:xxxxx@h/db"`},
	} {
		t.Setenv("RLMPL_STORE", tc.env)
		args := []string{"conv", "list", "--state", state}
		if tc.flag != "" {
			args = append(args, "--store", tc.flag)
		}
		_, errs, code := rlmpl(t, args...)
		if code != 2 || !strings.Contains(errs, tc.want) || strings.Contains(errs, "secret") {
			t.Errorf("conv list with store %q%q: exit %d, stderr %q; want 2 and %s", tc.flag, tc.env, code, errs, tc.want)
		}
	}
	if entries, _ := os.ReadDir(state); len(entries) != 0 {
		t.Errorf("a bad spec left %d files in the state directory", len(entries))
	}
}
