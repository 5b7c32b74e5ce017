package mcp_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/rlmpl/rlmpl/host/mcp/mcptest"
)

func TestMain(m *testing.M) {
	mcptest.ServeChild()
	os.Exit(m.Run())
}

// logLines collects log records.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) Enabled(context.Context, slog.Level) bool { return true }
func (l *logLines) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	})
	l.mu.Lock()
	l.lines = append(l.lines, b.String())
	l.mu.Unlock()
	return nil
}
func (l *logLines) WithAttrs(as []slog.Attr) slog.Handler { return &withAttrs{l, as} }
func (l *logLines) WithGroup(string) slog.Handler         { return l }

func (l *logLines) has(s string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range l.lines {
		if strings.Contains(line, s) {
			return true
		}
	}
	return false
}

type withAttrs struct {
	l  *logLines
	as []slog.Attr
}

func (w *withAttrs) Enabled(ctx context.Context, lv slog.Level) bool { return true }
func (w *withAttrs) Handle(ctx context.Context, r slog.Record) error {
	r.AddAttrs(w.as...)
	return w.l.Handle(ctx, r)
}
func (w *withAttrs) WithAttrs(as []slog.Attr) slog.Handler {
	return &withAttrs{w.l, append(append([]slog.Attr{}, w.as...), as...)}
}
func (w *withAttrs) WithGroup(string) slog.Handler { return w }
