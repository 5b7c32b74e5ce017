package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/term"
)

// The top level's line editor. rlwrap cannot serve: it line-buffers, so
// the one-key ; after an answer would need a return, and no pure-Go
// editor on the module proxy lets the top level read a single key between
// lines from the same input. This one is small and owns nothing but the
// line being typed: the terminal is raw only while a line (or a key) is
// read, and cooked while a goal runs, so Ctrl-C then is SIGINT as before.
//
// Keys (Emacs's, as in bash and SWI-Prolog's editline):
//
//	Left Right Home End, Ctrl-B Ctrl-F Ctrl-A Ctrl-E   move
//	Alt-B Alt-F, Ctrl-Left Ctrl-Right                  move by word
//	Backspace, Delete, Ctrl-D (on a non-empty line)    delete a character
//	Ctrl-W, Alt-Backspace / Ctrl-K / Ctrl-U / Alt-D    kill (word back, to end, to start, word on)
//	Ctrl-Y                                             yank what was killed
//	Ctrl-T                                             transpose characters
//	Up Down, Ctrl-P Ctrl-N                             history
//	Ctrl-R                                             reverse search in history
//	Ctrl-L                                             clear the screen
//	Ctrl-C                                             drop the line
//	Ctrl-D (on an empty line)                          end of input
//	Ctrl-Z                                             suspend
//
// A line longer than the terminal scrolls sideways instead of wrapping.
// Text that arrives while a line is typed (chat's messages from other
// workers, see notify) is shown above the line, which is then redrawn.

// historyMax is how many entries the history file keeps.
const historyMax = 1000

// historyFile is the name of the top level's history in the state
// directory.
const historyFile = "repl_history"

// editor reads lines from a terminal with editing and history.
type editor struct {
	in   *ttyReader
	out  io.Writer
	fd   int
	warn io.Writer // where a history file problem is reported, once

	history []string // oldest first
	file    string   // the history file; "" keeps history in memory only

	// The line being edited.
	prompt string
	buf    []rune
	pos    int // cursor, an index into buf
	hidx   int // the history entry shown; len(history) is the new line
	draft  []rune
	yank   []rune

	// Notices wait here until readLine shows them above the line: any
	// goroutine may queue one (notify), only readLine writes to out.
	noticeMu sync.Mutex // protects notices
	notices  []string
	wake     chan struct{} // a notice is queued; capacity 1
}

// newEditor returns an editor on the terminal fd whose history lives in
// file (none when file is "").
func newEditor(in *ttyReader, out io.Writer, fd int, file string, warn io.Writer) *editor {
	e := &editor{in: in, out: out, fd: fd, file: file, warn: warn, wake: make(chan struct{}, 1)}
	e.loadHistory()
	return e
}

// loadHistory reads the history file: one entry per line, oldest first.
// A file beyond historyMax entries is cut to its newest ones.
func (e *editor) loadHistory() {
	if e.file == "" {
		return
	}
	b, err := os.ReadFile(e.file)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			e.historyFailed(err)
		}
		return
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(l) != "" {
			e.history = append(e.history, l)
		}
	}
	if len(e.history) > historyMax {
		e.history = e.history[len(e.history)-historyMax:]
		if err := os.WriteFile(e.file, []byte(strings.Join(e.history, "\n")+"\n"), 0o600); err != nil {
			e.historyFailed(err)
		}
	}
}

// historyFailed reports a history file that cannot be read or written and
// keeps the history in memory from then on.
func (e *editor) historyFailed(err error) {
	fmt.Fprintf(e.warn, "%% history is not saved: %v\n", err)
	e.file = ""
}

// add appends entry (a goal; its line breaks become spaces) to the history
// and its file, unless it repeats the newest entry.
func (e *editor) add(entry string) {
	entry = strings.Join(strings.Fields(entry), " ")
	if entry == "" || (len(e.history) > 0 && e.history[len(e.history)-1] == entry) {
		return
	}
	e.history = append(e.history, entry)
	if len(e.history) > historyMax {
		e.history = e.history[1:]
	}
	if e.file == "" {
		return
	}
	if err := os.MkdirAll(filepath.Dir(e.file), 0o700); err != nil {
		e.historyFailed(err)
		return
	}
	f, err := os.OpenFile(e.file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err == nil {
		_, err = f.WriteString(entry + "\n")
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		e.historyFailed(err)
	}
}

// readLine reads one edited line, with its newline. It returns
// errInterrupted on Ctrl-C, with the line typed so far (to be dropped), and
// io.EOF on Ctrl-D at an empty line or at the end of the input.
func (e *editor) readLine(prompt string) (string, error) {
	state, err := term.MakeRaw(e.fd)
	if err != nil {
		return "", err
	}
	defer term.Restore(e.fd, state)
	e.prompt, e.buf, e.pos, e.hidx, e.draft = prompt, nil, 0, len(e.history), nil
	io.WriteString(e.out, prompt)
	for {
		for !e.in.waitFor(e.wake) {
			e.showNotices()
		}
		e.showNotices() // queued while the line before was read
		r, _, err := e.in.ReadRune()
		if err != nil {
			if len(e.buf) > 0 && errors.Is(err, io.EOF) {
				io.WriteString(e.out, "\r\n")
				return string(e.buf), nil
			}
			return "", err
		}
		line, done, err := e.key(r, state)
		if done || err != nil {
			return line, err
		}
	}
}

// notify queues text to be shown above the line being typed, now if a
// line is being read, else when the next one is. Safe for concurrent use.
func (e *editor) notify(text string) {
	e.noticeMu.Lock()
	e.notices = append(e.notices, text)
	e.noticeMu.Unlock()
	select {
	case e.wake <- struct{}{}:
	default: // already woken
	}
}

// showNotices writes the queued notices over the prompt's line, a line
// each, and redraws the prompt and the line being typed below them.
func (e *editor) showNotices() {
	e.noticeMu.Lock()
	notices := e.notices
	e.notices = nil
	e.noticeMu.Unlock()
	if len(notices) == 0 {
		return
	}
	var b strings.Builder
	b.WriteString("\r\x1b[K")
	for _, n := range notices {
		b.WriteString(strings.ReplaceAll(n, "\n", "\r\n")) // raw: no newline translation
		b.WriteString("\r\n")
	}
	io.WriteString(e.out, b.String())
	e.refresh()
}

// key handles one key press. done reports the line ended (line is it, or
// err says why not).
func (e *editor) key(r rune, state *term.State) (line string, done bool, err error) {
	switch r {
	case '\r', '\n':
		e.end()
		io.WriteString(e.out, "\r\n")
		return string(e.buf) + "\n", true, nil
	case 3: // Ctrl-C
		e.end()
		io.WriteString(e.out, "^C")
		return string(e.buf), true, errInterrupted // the caller drops it
	case 4: // Ctrl-D
		if len(e.buf) == 0 {
			return "", true, io.EOF
		}
		e.deleteAt(e.pos)
	case 1: // Ctrl-A
		e.move(0)
	case 5: // Ctrl-E
		e.move(len(e.buf))
	case 2: // Ctrl-B
		e.move(e.pos - 1)
	case 6: // Ctrl-F
		e.move(e.pos + 1)
	case 8, 127: // Backspace
		if e.pos > 0 {
			e.pos--
			e.deleteAt(e.pos)
		}
	case 11: // Ctrl-K
		e.kill(e.pos, len(e.buf))
	case 21: // Ctrl-U
		e.kill(0, e.pos)
	case 23: // Ctrl-W
		e.kill(e.wordBack(), e.pos)
	case 25: // Ctrl-Y
		e.insert(e.yank...)
	case 20: // Ctrl-T
		if e.pos > 0 && len(e.buf) > 1 {
			if e.pos == len(e.buf) {
				e.pos--
			}
			e.buf[e.pos-1], e.buf[e.pos] = e.buf[e.pos], e.buf[e.pos-1]
			e.pos++
			e.refresh()
		}
	case 12: // Ctrl-L
		io.WriteString(e.out, "\x1b[H\x1b[2J")
		e.refresh()
	case 16: // Ctrl-P
		e.historyMove(-1)
	case 14: // Ctrl-N
		e.historyMove(+1)
	case 18: // Ctrl-R
		return e.search(state)
	case 26: // Ctrl-Z: raw mode took it from the terminal; suspend as it would
		term.Restore(e.fd, state)
		_ = syscall.Kill(0, syscall.SIGTSTP)
		if s, err := term.MakeRaw(e.fd); err == nil {
			*state = *s
		}
		e.refresh()
	case '\t':
		e.insert([]rune("    ")...)
	case 27:
		e.escape()
	default:
		if unicode.IsPrint(r) {
			e.insert(r)
		}
	}
	return "", false, nil
}

// escape handles an escape sequence: the arrows, Home, End, Delete, and
// Alt (Meta) keys.
func (e *editor) escape() {
	// A sequence arrives at once; a lone Escape is followed by nothing
	// (the reader goroutine may still be handing the rest over).
	c, err := e.in.readByteWithin(escapeWait)
	if err != nil {
		return // a lone Escape
	}
	switch c {
	case '[', 'O':
		// CSI: parameters, then a final byte in @..~.
		var params []byte
		for {
			b, err := e.in.ReadByte()
			if err != nil {
				return
			}
			if b >= 0x40 && b <= 0x7e {
				e.csi(string(params), b)
				return
			}
			params = append(params, b)
		}
	case 'b', 'B':
		e.move(e.wordBack())
	case 'f', 'F':
		e.move(e.wordOn())
	case 'd', 'D':
		e.kill(e.pos, e.wordOn())
	case 127, 8:
		e.kill(e.wordBack(), e.pos)
	}
}

func (e *editor) csi(params string, final byte) {
	word := strings.HasSuffix(params, ";5") || strings.HasSuffix(params, ";3") // Ctrl or Alt
	switch {
	case final == 'A':
		e.historyMove(-1)
	case final == 'B':
		e.historyMove(+1)
	case final == 'C' && word:
		e.move(e.wordOn())
	case final == 'D' && word:
		e.move(e.wordBack())
	case final == 'C':
		e.move(e.pos + 1)
	case final == 'D':
		e.move(e.pos - 1)
	case final == 'H', final == '~' && (params == "1" || params == "7"):
		e.move(0)
	case final == 'F', final == '~' && (params == "4" || params == "8"):
		e.move(len(e.buf))
	case final == '~' && params == "3":
		e.deleteAt(e.pos)
	}
}

// search is Ctrl-R: an incremental search back through the history.
// Return runs the match; Ctrl-C or Ctrl-G leaves the line as it was; any
// other key takes the match for editing and is handled as usual.
func (e *editor) search(state *term.State) (string, bool, error) {
	orig, origPos := e.buf, e.pos
	var query []rune
	at := len(e.history) // the entry matched; len(history): none
	find := func(from int) {
		q := string(query)
		for i := min(from, len(e.history)-1); i >= 0; i-- {
			if strings.Contains(e.history[i], q) {
				at = i
				return
			}
		}
	}
	show := func() {
		match, failed := "", ""
		if at < len(e.history) {
			match = e.history[at]
		}
		if len(query) > 0 && (at == len(e.history) || !strings.Contains(match, string(query))) {
			failed = "failed "
		}
		line := []rune(fmt.Sprintf("%s(reverse-i-search)'%s': %s", failed, string(query), match))
		if cols := e.cols(); len(line) >= cols {
			line = line[:cols-1] // no wrapping: \r must reach the line's start
		}
		fmt.Fprintf(e.out, "\r%s\x1b[K", string(line))
	}
	show()
	for {
		r, _, err := e.in.ReadRune()
		if err != nil {
			return "", true, err
		}
		switch {
		case r == 18: // Ctrl-R again: an older match
			if at > 0 {
				find(at - 1)
			}
		case r == 8 || r == 127:
			if len(query) > 0 {
				query = query[:len(query)-1]
				at = len(e.history)
				find(len(e.history) - 1)
			}
		case r == 3 || r == 7: // Ctrl-C, Ctrl-G
			e.buf, e.pos = orig, origPos
			io.WriteString(e.out, "\r\x1b[K")
			e.refresh()
			return "", false, nil
		case unicode.IsPrint(r):
			query = append(query, r)
			find(at)
		default:
			if at < len(e.history) {
				e.buf = []rune(e.history[at])
				e.pos = len(e.buf)
				e.hidx = at
			}
			io.WriteString(e.out, "\r\x1b[K")
			e.refresh()
			return e.key(r, state)
		}
		show()
	}
}

// historyMove shows the entry d steps away (-1: older), keeping the line
// being typed as the newest.
func (e *editor) historyMove(d int) {
	i := e.hidx + d
	if i < 0 || i > len(e.history) {
		return
	}
	if e.hidx == len(e.history) {
		e.draft = append([]rune(nil), e.buf...)
	}
	e.hidx = i
	if i == len(e.history) {
		e.buf = e.draft
	} else {
		e.buf = []rune(e.history[i])
	}
	e.pos = len(e.buf)
	e.refresh()
}

func (e *editor) insert(rs ...rune) {
	if len(rs) == 0 {
		return
	}
	e.buf = append(e.buf[:e.pos], append(append([]rune(nil), rs...), e.buf[e.pos:]...)...)
	e.pos += len(rs)
	if e.pos == len(e.buf) && e.width(len(e.buf)) < e.cols() {
		io.WriteString(e.out, string(rs)) // typing at the end: just echo
		return
	}
	e.refresh()
}

func (e *editor) deleteAt(i int) {
	if i < 0 || i >= len(e.buf) {
		return
	}
	e.buf = append(e.buf[:i], e.buf[i+1:]...)
	e.refresh()
}

func (e *editor) kill(from, to int) {
	if from >= to {
		return
	}
	e.yank = append([]rune(nil), e.buf[from:to]...)
	e.buf = append(e.buf[:from], e.buf[to:]...)
	e.pos = from
	e.refresh()
}

func (e *editor) move(i int) {
	if i < 0 || i > len(e.buf) || i == e.pos {
		return
	}
	e.pos = i
	e.refresh()
}

// end moves the cursor after the line, so that what follows starts below.
func (e *editor) end() {
	if e.pos != len(e.buf) {
		e.pos = len(e.buf)
		e.refresh()
	}
}

func isWord(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' }

func (e *editor) wordBack() int {
	i := e.pos
	for i > 0 && !isWord(e.buf[i-1]) {
		i--
	}
	for i > 0 && isWord(e.buf[i-1]) {
		i--
	}
	return i
}

func (e *editor) wordOn() int {
	i := e.pos
	for i < len(e.buf) && !isWord(e.buf[i]) {
		i++
	}
	for i < len(e.buf) && isWord(e.buf[i]) {
		i++
	}
	return i
}

// cols is the terminal's width (80 when unknown).
func (e *editor) cols() int {
	if w, _, err := term.GetSize(e.fd); err == nil && w > 0 {
		return w
	}
	return 80
}

// width is the number of columns the prompt and the first n runes of the
// line take (one per rune).
func (e *editor) width(n int) int { return len([]rune(e.prompt)) + n }

// refresh redraws the prompt and the line, scrolled sideways so that the
// cursor is on the screen.
func (e *editor) refresh() {
	cols := e.cols()
	plen := len([]rune(e.prompt))
	start, end := 0, len(e.buf)
	for plen+e.pos-start >= cols && start < e.pos {
		start++
	}
	for plen+end-start > cols-1 && end > e.pos {
		end--
	}
	var b strings.Builder
	b.WriteString("\r")
	b.WriteString(e.prompt)
	b.WriteString(string(e.buf[start:end]))
	b.WriteString("\x1b[K\r")
	if n := plen + e.pos - start; n > 0 {
		fmt.Fprintf(&b, "\x1b[%dC", n)
	}
	io.WriteString(e.out, b.String())
}

// ttyReader reads the terminal in a goroutine of its own and hands its
// bytes over a channel, so that a read given up (a goal reading
// user_input, interrupted by Ctrl-C) leaves nothing blocked on the
// terminal that would take the next line from the editor. It lives as
// long as the process (a read of a terminal cannot be cancelled).
type ttyReader struct {
	ch   chan ttyByte
	next *ttyByte // taken from ch by waitFor, not read yet
}

type ttyByte struct {
	b   byte
	err error
}

func newTTYReader(f io.Reader) *ttyReader {
	r := &ttyReader{ch: make(chan ttyByte, 4096)}
	go func() {
		buf := make([]byte, 1024)
		for {
			n, err := f.Read(buf)
			for _, b := range buf[:n] {
				r.ch <- ttyByte{b: b}
			}
			if err != nil {
				r.ch <- ttyByte{err: err}
				if !errors.Is(err, io.EOF) {
					return // the terminal is gone
				}
				// Ctrl-D on a cooked terminal: the next read goes on.
			}
		}
	}()
	return r
}

// ReadByte returns the next byte, waiting for it.
func (r *ttyReader) ReadByte() (byte, error) {
	if v, ok := r.takeNext(); ok {
		return v.b, v.err
	}
	v := <-r.ch
	return v.b, v.err
}

// takeNext returns the byte waitFor set aside, if any.
func (r *ttyReader) takeNext() (ttyByte, bool) {
	if r.next == nil {
		return ttyByte{}, false
	}
	v := *r.next
	r.next = nil
	return v, true
}

// waitFor waits until a byte can be read (true) or wake fires first
// (false).
func (r *ttyReader) waitFor(wake <-chan struct{}) bool {
	if r.next != nil {
		return true
	}
	select {
	case v := <-r.ch:
		r.next = &v
		return true
	case <-wake:
		return false
	}
}

// readByte is ReadByte that gives up when done is closed.
func (r *ttyReader) readByte(done <-chan struct{}) (byte, error) {
	if v, ok := r.takeNext(); ok {
		return v.b, v.err
	}
	select {
	case v := <-r.ch:
		return v.b, v.err
	case <-done:
		return 0, errInterrupted
	}
}

// escapeWait is how long the bytes of an escape sequence may take to
// follow its Escape.
const escapeWait = 50 * time.Millisecond

// readByteWithin is ReadByte that gives up after d.
func (r *ttyReader) readByteWithin(d time.Duration) (byte, error) {
	if v, ok := r.takeNext(); ok {
		return v.b, v.err
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case v := <-r.ch:
		return v.b, v.err
	case <-t.C:
		return 0, errInterrupted
	}
}

// Buffered reports how many bytes (or errors) are waiting.
func (r *ttyReader) Buffered() int {
	if r.next != nil {
		return len(r.ch) + 1
	}
	return len(r.ch)
}

// ReadRune returns the next UTF-8 encoded rune (invalid bytes are
// utf8.RuneError).
func (r *ttyReader) ReadRune() (rune, int, error) {
	b, err := r.ReadByte()
	if err != nil {
		return 0, 0, err
	}
	if b < utf8.RuneSelf {
		return rune(b), 1, nil
	}
	n := 0
	switch {
	case b&0xe0 == 0xc0:
		n = 2
	case b&0xf0 == 0xe0:
		n = 3
	case b&0xf8 == 0xf0:
		n = 4
	default:
		return utf8.RuneError, 1, nil
	}
	p := []byte{b}
	for len(p) < n {
		c, err := r.ReadByte()
		if err != nil {
			return utf8.RuneError, len(p), nil
		}
		p = append(p, c)
	}
	ru, size := utf8.DecodeRune(p)
	return ru, size, nil
}
