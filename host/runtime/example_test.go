package runtime_test

import (
	"context"
	"fmt"

	"github.com/rlmpl/rlmpl/host/pack"
	"github.com/rlmpl/rlmpl/host/runtime"
	"github.com/rlmpl/rlmpl/store"
)

// Embedding without Prolog: a Go program opens a store, appends, packs the
// conversation under a hard cap and prints the ledger.
func Example() {
	rt, _ := runtime.New(nil)
	defer rt.Close()
	st, _ := rt.OpenStore(runtime.StoreSpec{Memory: true})
	info, _ := st.Create("demo", nil)
	conv := st.Conversation(info.ID)
	for i, text := range []string{"What is a fencing token?", "A number that only grows, checked by every writer.",
		"And leases?", "Leases expire; the token tells a stale holder apart."} {
		role := store.RoleUser
		if i%2 == 1 {
			role = store.RoleAssistant
		}
		conv.Append(store.Message{Role: role, Content: store.TextContent(text)}, runtime.AppendOptions{Encodings: []string{"o200k_base"}})
	}
	cp, err := conv.Pack(context.Background(), runtime.PackOptions{
		Policy: pack.Policy{MaxContextTokens: 60, ProviderContextTokens: 128000, ReserveOutputTokens: 10,
			MinRecentTurns: 2, MaxCandidates: 64, Overflow: "deny", Window: pack.Contiguous},
		Model:             "gpt-4o-2024-08-06",
		Boundary:          true,
		BoundaryTemplates: []string{"Turns 1..{cold_through} of {conversation} may be absent; search them."},
		Utilities:         pack.Utilities{HotBase: 1_000_000, HotPerSeq: 1, OlderBase: 1_000, OlderPerSeq: 1, Boundary: 2_000_000},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range cp.Ledger.Stages {
		fmt.Printf("%-32s %3d %s\n", s.Name, s.Charged, s.Count.Method)
	}
	fmt.Printf("total %d of %d; left out %v\n", cp.Ledger.Total, cp.Ledger.Limit, cp.Boundary.Omitted)
	// Output:
	// reply_priming                      3 exact
	// managed_cold_history_boundary     18 exact
	// conversation_message_3             7 exact
	// conversation_message_4            16 exact
	// output_reserve                    10 exact
	// safety_margin                      0 exact
	// total 54 of 60; left out [{1 2}]
}
