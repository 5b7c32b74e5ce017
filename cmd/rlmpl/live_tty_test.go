package main

import (
	"context"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/rlmpl/rlmpl/host/provider/providertest"
	"github.com/rlmpl/rlmpl/store/pgtest"
)

// TestChatTerminalShowsOtherChat: two chats on one PostgreSQL
// conversation. While the first, on a terminal, has half a line typed, the
// second takes a turn: the first shows the other chat's question and
// answer above its prompt, marked as from elsewhere, and redraws the half
// line, which is then finished and sent whole. Nothing the other chat wrote
// appears on a prompt line as if typed.
func TestChatTerminalShowsOtherChat(t *testing.T) {
	url := pgtest.DSN(t)
	srv := providertest.NewServer(providertest.Completion(`{"steps":[{"op":"final","value":"done"}]}`, 10, 5))
	defer srv.Close()
	args := []string{"chat", "--store", url, "--conv", "live", "--base-url", srv.BaseURL(), "--model", "tiny"}
	term := startTerminal(t, append(args, "--state", t.TempDir())...)
	term.expect("> ")
	term.send("half a li")
	term.expect("half a li")

	var stdout, stderr syncBuffer
	if code := run(context.Background(), append(args, "--state", t.TempDir()), strings.NewReader("from the other chat\n"), &stdout, &stderr); code != 0 {
		t.Fatalf("the other chat: exit %d: %s", code, stderr.String())
	}
	term.expect("from the other chat")
	term.expect("done")
	waitScreen(t, term, func(s []string) bool { return s[len(s)-1] == "> half a li" })
	screen := term.screen()
	want := []string{
		"[1] user, from elsewhere: from the other chat",
		"[2] assistant, from elsewhere: done",
		"> half a li",
	}
	if got := screen[len(screen)-3:]; strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("screen ends\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	term.send("ne\r")
	term.expect("done\n> ") // the prompt: the editor holds the terminal again
	term.send("\x04")
	if err := term.wait(); err != nil {
		t.Fatalf("exit: %v, want status 0", err)
	}
	out, _, _ := rlmpl(t, "conv", "show", "live", "--store", url)
	if want := "[1] user: from the other chat\n[2] assistant: done\n[3] user: half a line\n[4] assistant: done\n"; out != want {
		t.Fatalf("conversation:\n%s\nwant\n%s", out, want)
	}
}

// wait waits for the command to exit. One that does not within 20
// seconds is made to print its goroutines (SIGQUIT), and the test fails
// with what the terminal showed.
func (term *terminal) wait() error {
	term.t.Helper()
	done := make(chan error, 1)
	go func() { done <- term.cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(20 * time.Second):
		term.cmd.Process.Signal(syscall.SIGQUIT)
		<-done
		term.mu.Lock()
		defer term.mu.Unlock()
		term.t.Fatalf("the command did not exit; the terminal showed:\n%s", term.out.String())
		return nil
	}
}

// waitScreen waits until ok holds for the terminal's screen.
func waitScreen(t *testing.T, term *terminal, ok func([]string) bool) {
	t.Helper()
	for start := time.Now(); !ok(term.screen()); time.Sleep(20 * time.Millisecond) {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("terminal screen:\n%s", strings.Join(term.screen(), "\n"))
		}
	}
}

// screen renders what the terminal shows: the output so far played on a
// screen as wide as the pty (carriage return, line feed, backspace, erase
// to the end of the line, cursor forward and back, clear), one string per
// line with trailing blanks cut, the cursor's line last.
func (term *terminal) screen() []string {
	term.mu.Lock()
	out := term.out.String()
	term.mu.Unlock()
	const cols = 100
	lines := [][]rune{nil}
	row, col := 0, 0
	put := func(r rune) {
		for len(lines[row]) <= col {
			lines[row] = append(lines[row], ' ')
		}
		lines[row][col] = r
		col++
		if col == cols {
			col, row = 0, row+1
			lines = append(lines, nil)
		}
	}
	for i := 0; i < len(out); {
		r, size := utf8.DecodeRuneInString(out[i:])
		i += size
		switch r {
		case '\r':
			col = 0
		case '\n':
			row++
			if row == len(lines) {
				lines = append(lines, nil)
			}
		case '\b':
			col = max(col-1, 0)
		case 0x1b:
			if i >= len(out) || out[i] != '[' {
				continue
			}
			j := i + 1
			for j < len(out) && (out[j] < 0x40 || out[j] > 0x7e) {
				j++
			}
			if j == len(out) {
				i = j
				continue
			}
			n, err := strconv.Atoi(out[i+1 : j])
			if err != nil {
				n = 1
			}
			switch out[j] {
			case 'K':
				if col < len(lines[row]) {
					lines[row] = lines[row][:col]
				}
			case 'C':
				col = min(col+n, cols-1)
			case 'D':
				col = max(col-n, 0)
			case 'J':
				lines, row, col = [][]rune{nil}, 0, 0
			}
			i = j + 1
		default:
			if r >= ' ' {
				put(r)
			}
		}
	}
	s := make([]string, row+1)
	for k := range s {
		s[k] = strings.TrimRight(string(lines[k]), " ")
	}
	return s
}
