package host_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/rlmpl/rlmpl/host"
)

// TestRegisterEncodingFromRanksFile: a user adds a vocabulary at run time
// from a tiktoken-format ranks file, and counts with it exactly.
func TestRegisterEncodingFromRanksFile(t *testing.T) {
	var ranks strings.Builder
	for b := range 256 {
		fmt.Fprintf(&ranks, "%s %d\n", base64.StdEncoding.EncodeToString([]byte{byte(b)}), b)
	}
	fmt.Fprintf(&ranks, "%s 256\n", base64.StdEncoding.EncodeToString([]byte("ab")))
	h, err := host.New(&host.Options{FS: fstest.MapFS{"tiny.tiktoken": {Data: []byte(ranks.String())}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s, err := h.NewSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Once(ctx, `token_register_encoding(tiny, 'tiny.tiktoken', [specials(["<|end|>"-257])], R1),
		token_count_text("ababc", [encoding(tiny)], ok(token_count(P))), memberchk(tokens(N), P), memberchk(method(M), P)`)
	if err != nil {
		t.Fatal(err)
	}
	if got["R1"] != "ok(registered(tiny))" || got["N"] != "3" || got["M"] != "exact" {
		t.Fatalf("got %v", got)
	}
	// Another session of the same host sees it too.
	s2, _ := h.NewSession(ctx)
	if _, err := s2.Once(ctx, `token_count_text("ab", [encoding(tiny)], ok(_))`); err != nil {
		t.Fatal(err)
	}
	got, err = s.Once(ctx, `token_register_encoding(bad, 'missing.tiktoken', [], R)`)
	if err == nil {
		t.Fatalf("missing file: %v", got)
	}
}
