package handle

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func kindOf(err error) Kind {
	var he *Error
	if errors.As(err, &he) {
		return he.Kind
	}
	return ""
}

func mustDo(t *testing.T, r *Registry, ref Ref, q Request, lim Limits) Result {
	t.Helper()
	res, err := r.Do(context.Background(), ref, q, lim)
	if err != nil {
		t.Fatalf("Do(%+v): %v", q, err)
	}
	return res
}

func TestLargeTextStaysOpaqueAndSearchable(t *testing.T) {
	var sb strings.Builder
	for i := range 2500 {
		fmt.Fprintf(&sb, "row-%d needle payload\n", i)
	}
	r := New(nil)
	ref, meta, err := r.RegisterText(sb.String(), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if meta.Kind != "text" || meta.Bytes <= 20000 || meta.Items != 2500 {
		t.Fatalf("metadata %+v", meta)
	}
	if strings.Contains(meta.Describe(), "needle") || strings.Contains(ref.String(), "needle") {
		t.Fatal("payload leaked into the descriptor")
	}
	res := mustDo(t, r, ref, Request{Op: OpSearch, Pattern: "needle", CaseSensitive: true}, Limits{MaxResults: 3, MaxBytes: 512})
	if ms := res.Value.([]Match); len(ms) != 3 || ms[2].Index != 2 || !res.Truncated || res.Next != 3 {
		t.Fatalf("search = %+v truncated=%v next=%d", res.Value, res.Truncated, res.Next)
	}
	// Paging with the cursor continues where the first page stopped.
	res = mustDo(t, r, ref, Request{Op: OpSearch, Pattern: "needle", Cursor: res.Next}, Limits{MaxResults: 2})
	if ms := res.Value.([]Match); ms[0].Index != 3 || ms[1].Index != 4 {
		t.Fatalf("page 2 = %+v", ms)
	}
	ev, err := r.Trace(ref, 10)
	if err != nil || len(ev) != 2 || ev[0].Seq != 1 || ev[1].Seq != 2 || ev[0].BytesInspected == 0 || !ev[0].Truncated {
		t.Fatalf("trace = %+v, %v", ev, err)
	}
}

// TestTruncatedOnlyWhenSomethingLeftOut: the upstream flags were noisy.
func TestTruncatedOnlyWhenSomethingLeftOut(t *testing.T) {
	r := New(nil)
	ref, _, _ := r.RegisterText("alpha\nbeta\ngamma hit\n", Limits{})
	for _, tc := range []struct {
		name string
		q    Request
		lim  Limits
		want any
		cut  bool
	}{
		{"head within text", Request{Op: OpPeek, Selector: "head", N: 5}, Limits{}, "alpha", false},
		{"head beyond text", Request{Op: OpPeek, Selector: "head", N: 500}, Limits{}, "alpha\nbeta\ngamma hit\n", false},
		{"head byte-capped", Request{Op: OpPeek, Selector: "head", N: 500}, Limits{MaxBytes: 3}, "alp", true},
		{"tail", Request{Op: OpPeek, Selector: "tail", N: 4}, Limits{}, "hit\n", false},
		{"slice", Request{Op: OpSlice, Start: 6, Length: 4}, Limits{}, "beta", false},
		{"slice past end", Request{Op: OpSlice, Start: 20, Length: 10}, Limits{}, "\n", false},
		{"count", Request{Op: OpReduce, Reducer: "count"}, Limits{}, int64(3), false},
		{"byte_count", Request{Op: OpReduce, Reducer: "byte_count"}, Limits{}, int64(21), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := mustDo(t, r, ref, tc.q, tc.lim)
			if fmt.Sprint(res.Value) != fmt.Sprint(tc.want) || res.Truncated != tc.cut {
				t.Fatalf("= %q truncated=%v, want %q truncated=%v", res.Value, res.Truncated, tc.want, tc.cut)
			}
		})
	}
	// One match, max_results(1): nothing else matches, so not truncated.
	res := mustDo(t, r, ref, Request{Op: OpSearch, Pattern: "hit"}, Limits{MaxResults: 1})
	if res.Truncated || len(res.Value.([]Match)) != 1 {
		t.Fatalf("search = %+v truncated=%v", res.Value, res.Truncated)
	}
}

func TestSearchResultCountIsBounded(t *testing.T) {
	r := New(nil)
	ref, _, _ := r.RegisterText(strings.Repeat("a hit\n", 5), Limits{})
	res := mustDo(t, r, ref, Request{Op: OpSearch, Pattern: "HIT"}, Limits{MaxResults: 2})
	if len(res.Value.([]Match)) != 2 || !res.Truncated {
		t.Fatalf("search = %+v %v", res.Value, res.Truncated)
	}
	res = mustDo(t, r, ref, Request{Op: OpSearch, Pattern: "HIT", CaseSensitive: true}, Limits{})
	if len(res.Value.([]Match)) != 0 || res.Truncated {
		t.Fatalf("case-sensitive search = %+v", res.Value)
	}
}

func TestPartitionBudgets(t *testing.T) {
	r := New(nil)
	ref, _, _ := r.RegisterText(strings.Repeat("x", 200), Limits{})
	res := mustDo(t, r, ref, Request{Op: OpPartition, Partition: "fixed", N: 30}, Limits{MaxResults: 3, MaxBytes: 60})
	if Size(res.Value) > 60 || !res.Truncated {
		t.Fatalf("partition size %d truncated=%v", Size(res.Value), res.Truncated)
	}
	res = mustDo(t, r, ref, Request{Op: OpPartition, Partition: "fixed", N: 10}, Limits{MaxResults: 2})
	if len(res.Value.([]Part)) != 2 || !res.Truncated {
		t.Fatalf("partition = %+v", res.Value)
	}
	res = mustDo(t, r, ref, Request{Op: OpPartition, Partition: "fixed", N: 100}, Limits{})
	if len(res.Value.([]Part)) != 2 || res.Truncated {
		t.Fatalf("whole partition = %d parts truncated=%v", len(res.Value.([]Part)), res.Truncated)
	}
	_, err := r.Do(context.Background(), ref, Request{Op: OpPartition, Partition: "fixed", N: 0}, Limits{})
	if kindOf(err) != KindInvalidArgument {
		t.Fatalf("fixed(0): %v", err)
	}
}

func TestTermsContext(t *testing.T) {
	r := New(nil)
	items := []Item{{"alpha(1)", 1}, {"beta(2)", 2}, {"gamma(3)", 3}, {"delta(4)", 4}}
	ref, meta, err := r.RegisterTerms(items, Limits{})
	if err != nil || meta.Items != 4 || meta.Kind != "terms" {
		t.Fatal(meta, err)
	}
	if res := mustDo(t, r, ref, Request{Op: OpPeek, Selector: "item", N: 1}, Limits{}); res.Value.(Item).Value != 2 {
		t.Fatalf("item(1) = %+v", res.Value)
	}
	if res := mustDo(t, r, ref, Request{Op: OpSlice, Start: 1, Length: 2}, Limits{}); len(res.Value.([]Item)) != 2 || res.Truncated {
		t.Fatalf("slice = %+v", res.Value)
	}
	res := mustDo(t, r, ref, Request{Op: OpMap, Transform: "uppercase"}, Limits{MaxResults: 2})
	if fmt.Sprint(res.Value) != "[ALPHA(1) BETA(2)]" || !res.Truncated {
		t.Fatalf("map = %v truncated=%v", res.Value, res.Truncated)
	}
	if res := mustDo(t, r, ref, Request{Op: OpReduce, Reducer: "count"}, Limits{}); res.Value != int64(4) {
		t.Fatalf("count = %v", res.Value)
	}
	if _, err := r.Do(context.Background(), ref, Request{Op: OpPeek, Selector: "item", N: 4}, Limits{}); kindOf(err) != KindOutOfRange {
		t.Fatalf("item(4): %v", err)
	}
	if _, err := r.Do(context.Background(), ref, Request{Op: OpPartition, Partition: "lines", N: 1}, Limits{}); kindOf(err) != KindUnsupportedPartition {
		t.Fatalf("lines on terms: %v", err)
	}
}

func TestClosedTransformsAndReducers(t *testing.T) {
	r := New(nil)
	ref, _, _ := r.RegisterTerms([]Item{{"a", nil}}, Limits{})
	for _, q := range []Request{{Op: OpMap, Transform: "call(shell)"}, {Op: OpReduce, Reducer: "call(system)"}} {
		if _, err := r.Do(context.Background(), ref, q, Limits{}); kindOf(err) != KindCapabilityDenied {
			t.Fatalf("%+v: %v", q, err)
		}
	}
}

func TestLimitsValidatedBeforeWork(t *testing.T) {
	r := New(nil)
	for _, lim := range []Limits{{MaxBytes: -1}, {MaxResults: -1}, {TimeLimit: -1}} {
		if _, _, err := r.RegisterText("x", lim); kindOf(err) != KindInvalidLimit {
			t.Fatalf("register %+v: %v", lim, err)
		}
		// Even on an unknown handle, the limits are checked first.
		if _, err := r.Do(context.Background(), Ref{"nope", 1}, Request{Op: OpPeek, Selector: "head", N: 1}, lim); kindOf(err) != KindInvalidLimit {
			t.Fatalf("do %+v: %v", lim, err)
		}
	}
	if _, err := r.Do(context.Background(), Ref{"nope", 1}, Request{Op: OpSearch}, Limits{}); kindOf(err) != KindInvalidPattern {
		t.Fatalf("empty pattern: %v", err)
	}
}

func TestHandleLifecycle(t *testing.T) {
	r := New(&Options{Tombstones: 2})
	if _, err := r.Metadata(Ref{}); kindOf(err) != KindInvalidHandle {
		t.Fatalf("zero ref: %v", err)
	}
	if _, err := r.Metadata(Ref{"0123", 1}); kindOf(err) != KindUnknownHandle {
		t.Fatalf("unknown: %v", err)
	}
	ref, _, _ := r.RegisterText("x", Limits{})
	if _, err := r.Metadata(Ref{ref.ID, 2}); kindOf(err) != KindStaleHandle {
		t.Fatalf("other version: %v", err)
	}
	mustDo(t, r, ref, Request{Op: OpPeek, Selector: "metadata"}, Limits{})
	if err := r.Delete(ref); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Metadata(ref); kindOf(err) != KindStaleHandle {
		t.Fatalf("deleted: %v", err)
	}
	if ev, err := r.Trace(ref, 5); err != nil || len(ev) != 1 {
		t.Fatalf("trace of deleted handle: %v %v", ev, err)
	}
	// Tombstones are a bounded ring: after two more deletions the first is
	// forgotten and reads as unknown.
	for range 2 {
		h, _, _ := r.RegisterText("y", Limits{})
		_ = r.Delete(h)
	}
	if _, err := r.Metadata(ref); kindOf(err) != KindUnknownHandle {
		t.Fatalf("evicted tombstone: %v", err)
	}
}

func TestTraceRingIsBounded(t *testing.T) {
	r := New(&Options{TraceEvents: 3})
	ref, _, _ := r.RegisterText("x", Limits{})
	for range 10 {
		mustDo(t, r, ref, Request{Op: OpReduce, Reducer: "count"}, Limits{})
	}
	ev, _ := r.Trace(ref, 100)
	if len(ev) != 3 || ev[0].Seq != 8 || ev[2].Seq != 10 {
		t.Fatalf("trace = %+v", ev)
	}
	if _, err := r.Trace(ref, 0); kindOf(err) != KindInvalidLimit {
		t.Fatalf("limit 0: %v", err)
	}
}

func TestUTF8TruncationNeverSplitsRunes(t *testing.T) {
	r := New(nil)
	text := strings.Repeat("é👩‍💻–", 50)
	ref, _, _ := r.RegisterText(text, Limits{})
	for n := 1; n < 40; n++ {
		res := mustDo(t, r, ref, Request{Op: OpPeek, Selector: "head", N: 1000}, Limits{MaxBytes: n})
		s := res.Value.(string)
		if !utf8.ValidString(s) || len(s) > n || !strings.HasPrefix(text, s) || !res.Truncated {
			t.Fatalf("max_bytes(%d): %q", n, s)
		}
	}
}

// fakeAdapter is a trusted adapter with peek and search over three records.
type fakeAdapter struct{ extra string }

func (fakeAdapter) Name() string     { return "fake_external" }
func (fakeAdapter) Operations() []Op { return []Op{OpPeek, OpSearch} }
func (a fakeAdapter) Describe(ctx context.Context, source any) (string, int64, int64, []Field, error) {
	return "fake", 3, -1, []Field{F("source_id", source), F("note", a.extra)}, nil
}
func (fakeAdapter) Do(ctx context.Context, source any, q Request, lim Limits) (Work, error) {
	// Ignores lim on purpose: the core must re-bound.
	return Work{Value: []Item{{"needle one", 1}, {"needle two", 2}, {"needle three", 3}}, ItemsInspected: 3}, nil
}

func TestAdapterOutputIsReboundedByCore(t *testing.T) {
	r := New(nil)
	if err := r.RegisterAdapter(fakeAdapter{}); err != nil {
		t.Fatal(err)
	}
	ref, meta, err := r.RegisterSource(context.Background(), "fake_external", "test", Limits{})
	if err != nil || meta.Backend != "adapter(fake_external)" || meta.Items != 3 {
		t.Fatal(meta, err)
	}
	res := mustDo(t, r, ref, Request{Op: OpSearch, Pattern: "needle"}, Limits{MaxResults: 1, MaxBytes: 4096})
	if items := res.Value.([]Item); len(items) != 1 || items[0].Text != "needle one" || !res.Truncated {
		t.Fatalf("search = %+v truncated=%v", res.Value, res.Truncated)
	}
	if _, err := r.Do(context.Background(), ref, Request{Op: OpSlice, Length: 1}, Limits{}); kindOf(err) != KindCapabilityDenied {
		t.Fatalf("undeclared slice: %v", err)
	}
	// peek(metadata) is answered by the core.
	if res := mustDo(t, r, ref, Request{Op: OpPeek, Selector: "metadata"}, Limits{}); res.Value.(Metadata).Kind != "fake" {
		t.Fatalf("metadata = %+v", res.Value)
	}
}

func TestAdapterMetadataCapAndPinning(t *testing.T) {
	r := New(nil)
	big := fakeAdapter{extra: strings.Repeat("z", 4096)}
	if err := r.RegisterAdapter(big); err != nil {
		t.Fatal(err)
	}
	_, _, err := r.RegisterSource(context.Background(), "fake_external", "test", Limits{MaxBytes: 512})
	var he *Error
	if !errors.As(err, &he) || he.Kind != KindAdapterMetadataLarge {
		t.Fatalf("oversized metadata: %v", err)
	}
	if fmt.Sprint(he.Details) != fmt.Sprintf("[{adapter fake_external} {bytes %d} {max_bytes 512}]", he.Details[1].Value) || he.Details[1].Value.(int) <= 512 {
		t.Fatalf("details %v", he.Details)
	}
	if r.Live() != 0 {
		t.Fatal("a handle was created")
	}
	if err := r.UnregisterAdapter("fake_external"); err != nil {
		t.Fatalf("unregister with no live handles: %v", err)
	}
	// A live handle pins the adapter.
	_ = r.RegisterAdapter(fakeAdapter{})
	ref, _, err := r.RegisterSource(context.Background(), "fake_external", "test", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.UnregisterAdapter("fake_external"); kindOf(err) != KindAdapterInUse {
		t.Fatalf("unregister in use: %v", err)
	}
	_ = r.Delete(ref)
	if err := r.UnregisterAdapter("fake_external"); err != nil {
		t.Fatal(err)
	}
	if err := r.UnregisterAdapter("fake_external"); kindOf(err) != KindAdapterNotRegistered {
		t.Fatalf("unregister unknown: %v", err)
	}
	if err := r.RegisterAdapter(fakeAdapter{}); err != nil {
		t.Fatal(err)
	}
	if err := r.RegisterAdapter(fakeAdapter{extra: "other"}); kindOf(err) != KindAdapterConflict {
		t.Fatalf("conflict: %v", err)
	}
}

func TestTimeLimit(t *testing.T) {
	r := New(nil)
	ref, _, _ := r.RegisterText(strings.Repeat("no match here\n", 200000), Limits{})
	_, err := r.Do(context.Background(), ref, Request{Op: OpSearch, Pattern: "needle"}, Limits{TimeLimit: 1})
	if kindOf(err) != KindTimeLimitExceeded {
		t.Fatalf("err = %v", err)
	}
}

// BenchmarkRegisterText: the cost of registering a 64 KiB text context
// (bytes/op approximates the memory a live handle holds beyond its text).
func BenchmarkRegisterText(b *testing.B) {
	r := New(&Options{Tombstones: 16})
	text := strings.Repeat("a line of context text\n", 2900)
	b.ReportAllocs()
	for b.Loop() {
		ref, _, err := r.RegisterText(text, Limits{})
		if err != nil {
			b.Fatal(err)
		}
		_ = r.Delete(ref)
	}
}
