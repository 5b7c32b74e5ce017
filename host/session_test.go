package host_test

import (
	"context"
	"testing"

	"github.com/rlmpl/rlmpl/host"
)

// newSession is a session on a new host with opts (nil: the defaults).
// Both are closed when the test ends.
func newSession(t testing.TB, opts *host.Options) *host.Session {
	t.Helper()
	h, err := host.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	s, err := h.NewSession(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
