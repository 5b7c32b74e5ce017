package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/rlmpl/rlmpl/host/mcp/mcptest"
	"github.com/rlmpl/rlmpl/host/provider/providertest"
	"github.com/rlmpl/rlmpl/host/runtime"
)

// TestMain lets the test binary stand in for rlmpl in TestREPLTerminal.
func TestMain(m *testing.M) {
	mcptest.ServeChild() // the binary is the tests' stdio MCP server too
	if os.Getenv("RLMPL_TEST_MAIN") == "1" {
		main()
	}
	// The commands' default store comes from the environment too; the
	// tests name theirs.
	os.Unsetenv("RLMPL_STORE")
	os.Exit(m.Run())
}

// terminal is a pty running `rlmpl repl` as its controlling process.
type terminal struct {
	t   *testing.T
	pty *os.File
	cmd *exec.Cmd
	mu  sync.Mutex
	out bytes.Buffer // everything the terminal showed
	at  int          // how much of out (with \r\n as \n) expect has matched
}

func startTerminal(t *testing.T, args ...string) *terminal {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "RLMPL_TEST_MAIN=1")
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 100})
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	term := &terminal{t: t, pty: f, cmd: cmd}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := f.Read(buf)
			term.mu.Lock()
			term.out.Write(buf[:n])
			term.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = f.Close()
	})
	return term
}

func (term *terminal) send(s string) {
	term.t.Helper()
	if _, err := term.pty.Write([]byte(s)); err != nil {
		term.t.Fatal(err)
	}
}

// expect waits until the terminal shows want (after what earlier calls
// matched), with \r\n as \n.
func (term *terminal) expect(want string) {
	term.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		term.mu.Lock()
		got := strings.ReplaceAll(term.out.String(), "\r\n", "\n")[term.at:]
		term.mu.Unlock()
		if i := strings.Index(got, want); i >= 0 {
			term.at += i + len(want)
			return
		}
		if time.Now().After(deadline) {
			term.t.Fatalf("terminal shows\n%s\nwant (after what was matched)\n%s", got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestREPLTerminal drives the top level in a real terminal, as a person
// would, and checks it against SWI-Prolog 9's transcript of the same keys
// (one key press answers a non-deterministic answer; Ctrl-C interrupts).
func TestREPLTerminal(t *testing.T) {
	term := startTerminal(t, "repl", "--state", t.TempDir())
	term.expect("?- ")
	term.send("X = 1.\r")
	term.expect("X = 1.\nX = 1.\n\n?- ")
	term.send("member(X, [a,b,c]).\r")
	term.expect("X = a ")
	term.send(";") // one key, no return
	term.expect(";\nX = b ")
	term.send("\r")
	term.expect(".\n\n?- ")
	term.send("member(X, [a,b]).\r")
	term.expect("X = a ")
	term.send(" ")
	term.expect(";\nX = b.\n\n?- ")
	term.send("X = f(Y,Y), Z = \"text\".\r")
	term.expect("X = f(Y, Y),\nZ = \"text\".\n\n?- ")
	term.send("X = [1,\r")
	term.expect("|    ")
	term.send("2].\r")
	term.expect("X = [1, 2].\n\n?- ")
	term.send("member(X, [a,b]).\r")
	term.expect("X = a ")
	term.send("x")
	term.expect("Unknown action: x (h for help)\nAction? ")
	term.send("c")
	term.expect(".\n\n?- ")
	term.send("numlist(1, 20, L) ; true.\r") // w shows an abbreviated answer whole
	term.expect("L = [1, 2, 3, 4, 5, 6, 7, 8, 9|...] ")
	term.send("w")
	term.expect("[write]\nL = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20] ")
	term.send(";")
	term.expect(";\ntrue.\n\n?- ")
	term.send("[user].\r") // [user] reads clauses up to Ctrl-D
	term.expect("|: ")
	term.send("foo(1).\r")
	term.expect("|: ")
	term.send("\x04")
	term.expect("true.\n\n?- ")
	term.send("foo(X).\r")
	term.expect("X = 1.\n\n?- ")
	term.send("repeat, fail.\r")
	time.Sleep(300 * time.Millisecond)
	term.send("\x03") // Ctrl-C interrupts the running goal
	term.expect("% Execution Aborted\n?- ")
	term.send("true.\r")
	term.expect("true.\n\n?- ")
	term.send("foo(bar")
	term.send("\x03") // Ctrl-C at the prompt drops the line typed so far
	term.expect("?- ")
	term.send("X = after.\r")
	term.expect("X = after.\n\n?- ")
	term.send("\x03")
	term.expect("% halt. or Ctrl-D leaves the top level\n?- ")
	term.send("\x04") // Ctrl-D leaves
	if err := term.cmd.Wait(); err != nil {
		t.Fatalf("exit: %v, want status 0", err)
	}
}

// TestInterruptExitStatus: SIGINT ends a running script, and a top level
// reading from a pipe, with status 130.
func TestInterruptExitStatus(t *testing.T) {
	script := t.TempDir() + "/loop.pl"
	if err := os.WriteFile(script, []byte(":- initialization(main, main).\nmain :- write(ready), nl, flush_output, repeat, fail.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"run", script}, {"repl"}} {
		t.Run(args[0], func(t *testing.T) {
			cmd := exec.Command(os.Args[0], args...)
			cmd.Env = append(os.Environ(), "RLMPL_TEST_MAIN=1")
			cmd.Stdin = strings.NewReader("write(ready), nl, flush_output, repeat, fail.\n")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// The goal prints "ready" once it runs (the handler is in
			// place by then), however slow the machine.
			if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || !strings.Contains(line, "ready") {
				t.Fatalf("child: %q %v (stderr %q)", line, err, stderr.String())
			}
			if err := cmd.Process.Signal(os.Interrupt); err != nil {
				t.Fatal(err)
			}
			err = cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 130 {
				t.Fatalf("exit: %v (stderr %q), want status 130", err, stderr.String())
			}
		})
	}
}

// TestChatTerminalInterrupts drives `rlmpl chat` in a terminal: Ctrl-C
// during a turn cancels that turn (its receipt records the cancellation)
// and chat goes on with a new prompt; Ctrl-C at the prompt clears the
// line, which is never sent; Ctrl-D leaves, with status 1 since a turn
// failed (the cancelled one), as any failed turn makes chat exit.
func TestChatTerminalInterrupts(t *testing.T) {
	started := make(chan struct{})
	srv := providertest.NewServer(providertest.Hang(started), providertest.Completion(`{"steps":[{"op":"final","value":"second answer"}]}`, 10, 5))
	defer srv.Close()
	state := t.TempDir()
	term := startTerminal(t, "chat", "--state", state, "--conv", "c", "--base-url", srv.BaseURL(), "--model", "tiny")
	term.expect("> ")
	term.send("first\r")
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the turn's request never reached the server")
	}
	term.send("\x03") // Ctrl-C during the turn cancels it
	term.expect("turn cancelled")
	term.expect("> ")
	term.send("second\r")
	term.expect("second answer\n> ")
	term.send("never sent")
	term.send("\x03") // Ctrl-C at the prompt clears the line
	term.expect("\n> ")
	term.send("\x04") // Ctrl-D leaves
	var ee *exec.ExitError
	if err := term.wait(); !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("exit: %v, want status 1 (a turn failed: it was cancelled)", err)
	}
	out, _, _ := rlmpl(t, "conv", "show", "c", "--state", state)
	if want := "[1] user: first\n[2] user: second\n[3] assistant: second answer\n"; out != want {
		t.Fatalf("conversation:\n%s\nwant\n%s", out, want)
	}
	h, st, err := openStore(state, defaultStore, false)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	rs, err := st.Conversation("c").Receipts(false)
	if err != nil || len(rs) != 2 {
		t.Fatalf("receipts: %v %v", rs, err)
	}
	if rs[0].Status != runtime.StatusFailed || rs[0].Error == nil || !strings.Contains(rs[0].Error.Message, "cancel") || rs[1].Status != runtime.StatusCompleted {
		t.Fatalf("receipts: %+v, want the first failed by its cancellation, the second completed", rs)
	}
	// The request Ctrl-C ended is in the failed receipt, with why.
	checkCallInFlight(t, rs[0], srv.Requests()[0].Raw, "interrupted by Ctrl-C")
}

// checkCallInFlight checks that a failed receipt lists exactly the one
// request sent (its hash) and why it ended.
func checkCallInFlight(t *testing.T, r runtime.Receipt, sent, why string) {
	t.Helper()
	sum := sha256.Sum256([]byte(sent))
	if len(r.Calls) != 1 || r.Calls[0].RequestSHA256 != hex.EncodeToString(sum[:]) || r.Calls[0].Attempt != 1 || !strings.Contains(r.Calls[0].Error, why) {
		t.Fatalf("failed receipt's calls %+v, want the request in flight, ended by %q", r.Calls, why)
	}
}

// turnScript is a script that takes one managed turn, t1, on
// conversation demo of store s, against the provider at baseURL.
func turnScript(t *testing.T, baseURL string) string {
	file := t.TempDir() + "/turn.pl"
	script := `:- initialization(main, main).
main :-
    conversation_store_open(persist(s), ok(S)),
    conversation_create(S, [id(demo)], ok(C)),
    conversation_turn(C, message(user, "hello?"),
                      [turn_id(t1), completion_options([provider(provider(local, [base_url("` + baseURL + `"), model(tiny)]))])], _).
`
	if err := os.WriteFile(file, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// startTurn runs turnScript in a child rlmpl and returns once its
// request reached the server (started).
func startTurn(t *testing.T, state, script string, started <-chan struct{}) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "run", "--state", state, script)
	cmd.Env = append(os.Environ(), "RLMPL_TEST_MAIN=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("the turn's request never reached the server: %s", stderr.String())
	}
	return cmd, &stderr
}

// TestKilledTurnIsRecordedAndNoted: kill -9 during a script's managed
// turn leaves its user message alone in the store; receipt list shows the
// turn interrupted (not stored yet), chat records its failed receipt when
// it opens the conversation and says so, and chat's first request notes
// the unanswered message right after it.
func TestKilledTurnIsRecordedAndNoted(t *testing.T) {
	started := make(chan struct{})
	hang := providertest.NewServer(providertest.Hang(started))
	defer hang.Close()
	state := t.TempDir()
	cmd, _ := startTurn(t, state, turnScript(t, hang.BaseURL()), started)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	// t1's row of receipt list: turn, run, status.
	t1 := func() string {
		out, errs, code := rlmpl(t, "receipt", "list", "--state", state, "--store", "s", "--conv", "demo")
		if code != 0 {
			t.Fatalf("receipt list: %s", errs)
		}
		for _, l := range strings.Split(out, "\n") {
			if f := strings.Fields(l); len(f) > 2 && f[0] == "t1" {
				return strings.Join(f[:3], " ")
			}
		}
		return out
	}
	if got := t1(); got != "t1 - interrupted" {
		t.Fatalf("receipt list after kill -9: %s", got)
	}
	srv := providertest.NewServer(providertest.Completion(`{"steps":[{"op":"final","value":"here now"}]}`, 10, 5))
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"chat", "--json", "--state", state, "--store", "s", "--conv", "demo", "--provider", "local",
		"--base-url", srv.BaseURL(), "--model", "tiny"}, strings.NewReader("are you there?\n"), &stdout, &stderr); code != 0 {
		t.Fatalf("chat: %d %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), `{"event":"interrupted","turn_id":"t1"}`) {
		t.Errorf("chat did not say it recorded t1:\n%s", stdout.String())
	}
	if got := t1(); got != "t1 1 interrupted" {
		t.Fatalf("receipt list after chat: %s", got)
	}
	var conv []string
	for _, m := range srv.Requests()[0].Body["messages"].([]any) {
		m := m.(map[string]any)
		if m["role"] == "user" || m["role"] == "assistant" {
			conv = append(conv, m["role"].(string)+": "+m["content"].(string))
		}
	}
	if len(conv) < 3 || conv[0] != "user: hello?" || !strings.HasPrefix(conv[1], "assistant: [No reply: the turn that received message 1 ended") ||
		conv[2] != "user: are you there?" {
		t.Fatalf("chat's request:\n%s", strings.Join(conv, "\n"))
	}
}

// TestInterruptedRunRecordsTheCallInFlight: SIGINT during a script's
// managed turn ends the turn with a failed receipt that lists the request
// on the wire (its hash, "interrupt signal received"), and replay renders
// it again.
func TestInterruptedRunRecordsTheCallInFlight(t *testing.T) {
	started := make(chan struct{})
	srv := providertest.NewServer(providertest.Hang(started))
	defer srv.Close()
	state := t.TempDir()
	cmd, stderr := startTurn(t, state, turnScript(t, srv.BaseURL()), started)
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err == nil {
		t.Fatal("the interrupted script exited 0")
	}
	h, st, err := openStore(state, "s", false)
	if err != nil {
		t.Fatal(err)
	}
	r, err := st.Conversation("demo").Receipt("t1")
	if err != nil || r.Status != runtime.StatusFailed {
		t.Fatalf("receipt %+v, %v (stderr %s)", r, err, stderr.String())
	}
	checkCallInFlight(t, r, srv.Requests()[0].Raw, "interrupt signal received")
	h.Close()
	if out, errs, code := rlmpl(t, "turn", "replay", "t1", "--state", state, "--store", "s", "--conv", "demo"); code != 0 || !strings.Contains(out, "1 requests rendered again") {
		t.Fatalf("replay: %d %s %s", code, out, errs)
	}
}

// TestREPLLineEditing: the top level edits lines (arrows, Ctrl-A/E/K/U/W,
// Backspace), recalls goals with Up and Ctrl-R, keeps them in the state
// directory for the next session, and ; stays one key press.
func TestREPLLineEditing(t *testing.T) {
	state := t.TempDir()
	term := startTerminal(t, "repl", "--state", state)
	term.expect("?- ")
	term.send("X = abc.\r")
	term.expect("X = abc.\n\n?- ")
	term.send("Y = 2\x1b[D\x1b[D\x1b[D\x1b[D\x1b[D\x1bOHZ = 1, \x05.\r") // Left x5, Home, insert, Ctrl-E
	term.expect("Z = 1,\nY = 2.\n\n?- ")
	term.send("foo\x7f\x7f\x7fatom_length(abc, N)\x01\x0b") // Backspace x3; Ctrl-A Ctrl-K kills it all
	term.send("length(L, N)\x17\x17")                       // Ctrl-W twice leaves "length("
	term.send("\x19")                                       // Ctrl-Y yanks "N)" back... the last kill
	term.send("\x15member(X, [p,q]).\r")                    // Ctrl-U, a fresh goal
	term.expect("X = p ")
	term.send(";")
	term.expect(";\nX = q.\n\n?- ")
	term.send("\x1b[A\x1b[A\r") // Up twice: the goal before the last
	term.expect("Z = 1,\nY = 2.\n\n?- ")
	term.send("\x12abc\r") // Ctrl-R finds X = abc.
	term.expect("(reverse-i-search)'abc': X = abc.")
	term.expect("X = abc.\n\n?- ")
	term.send("\x12nomatch") // a failed search, then Ctrl-G gives the line back
	term.expect("failed (reverse-i-search)'nomatch'")
	term.send("\x07")
	term.send("true.\r")
	term.expect("true.\n\n?- ")
	term.send("\x04")
	if err := term.cmd.Wait(); err != nil {
		t.Fatalf("exit: %v, want status 0", err)
	}
	b, err := os.ReadFile(state + "/repl_history")
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	if want := "X = abc.\nZ = 1, Y = 2.\nmember(X, [p,q]).\nZ = 1, Y = 2.\nX = abc.\ntrue.\n"; got != want {
		t.Fatalf("history file:\n%s\nwant\n%s", got, want)
	}

	// The next session starts with the history: Up recalls the last goal.
	term = startTerminal(t, "repl", "--state", state)
	term.expect("?- ")
	term.send("\x1b[A\x1b[A\r")
	term.expect("X = abc.\n\n?- ")
	term.send("\x04")
	if err := term.cmd.Wait(); err != nil {
		t.Fatalf("exit: %v, want status 0", err)
	}
}

// TestREPLGoalReadsTerminal: a goal reading user_input at the terminal
// prompts |: (as SWI), takes lines typed ahead while the editor held the
// terminal raw, and, interrupted by Ctrl-C, leaves nothing behind that
// would swallow the next goal.
func TestREPLGoalReadsTerminal(t *testing.T) {
	term := startTerminal(t, "repl", "--state", t.TempDir())
	term.expect("?- ")
	term.send("[user].\rz(1).\rz(2).\r\x04z(X).\r") // all typed ahead
	term.expect("true.\n\n?- ")
	term.expect("X = 1 ")
	term.send(";")
	term.expect(";\nX = 2.\n\n?- ")
	term.send("read(T).\r")
	term.expect("|: ")
	term.send("\x03")
	term.expect("% Execution Aborted\n?- ")
	term.send("X = after.\r")
	term.expect("X = after.\n\n?- ")
	term.send("read(T).\r")
	term.expect("|: ")
	term.send("f(x).\r")
	term.expect("T = f(x).\n\n?- ")
	term.send("\x04")
	if err := term.cmd.Wait(); err != nil {
		t.Fatalf("exit: %v, want status 0", err)
	}
}
