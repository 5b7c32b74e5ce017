package prolog

import "testing"

// TestPromiseLayout: the host's mirror of engine.Promise matches ichiban's
// layout. If it fails, ichiban changed: update promise (solve.go) or
// Query.Last reports every answer as possibly not the last.
func TestPromiseLayout(t *testing.T) {
	if !layoutOK {
		t.Fatal("engine.Promise's layout differs from the mirror in solve.go")
	}
}
