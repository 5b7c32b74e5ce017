package host_test

import (
	"context"
	"testing"

	"github.com/rlmpl/rlmpl/host"
)

// BenchmarkNewSession: interpreter + prelude + predicate table + lib/.
func BenchmarkNewSession(b *testing.B) {
	h, err := host.New(nil)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		s, err := h.NewSession(ctx)
		if err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
}
