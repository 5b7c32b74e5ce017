package runtime

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rlmpl/rlmpl/host/handle"
	"github.com/rlmpl/rlmpl/host/pack"
	"github.com/rlmpl/rlmpl/store"
	"github.com/rlmpl/rlmpl/store/pgtest"
)

func testPolicy(cap int64, minRecent, maxCandidates int) pack.Policy {
	return pack.Policy{MaxContextTokens: cap, ProviderContextTokens: cap, MinRecentTurns: minRecent,
		MaxCandidates: maxCandidates, Overflow: "deny", Window: pack.Contiguous}
}

var testUtilities = pack.Utilities{HotBase: 1_000_000, HotPerSeq: 1, OlderBase: 1_000, OlderPerSeq: 1, Boundary: 2_000_000}

// backend is one store implementation the conversation tests run on
// unchanged (the conformance suite): spec names a fresh store of it.
type backend struct {
	name string
	spec func(t testing.TB) StoreSpec
}

var backends = []backend{
	{"badger-disk", func(testing.TB) StoreSpec { return StoreSpec{Dir: "store"} }},
	{"badger-memory", func(testing.TB) StoreSpec { return StoreSpec{Memory: true} }},
	{"postgres", func(t testing.TB) StoreSpec { return StoreSpec{Postgres: &store.PostgresOptions{DSN: pgtest.DSN(t)}} }},
	{"sqlite", func(testing.TB) StoreSpec { return StoreSpec{Store: store.Spec{Scheme: "sqlite", Target: "store.db"}} }},
}

// eachBackend runs f as a subtest per backend.
func eachBackend(t *testing.T, f func(t *testing.T, be backend)) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) { f(t, b) })
	}
}

// conv returns conversation c of a fresh store of be (its runtime closed
// at cleanup), holding msgs with o200k_base counts.
func (be backend) conv(t *testing.T, msgs ...store.Message) Conversation {
	t.Helper()
	return convOn(t, be.spec(t), nil, msgs...) // the spec first: its cleanup runs after the runtime's
}

// memConv is conv on a memory store.
func memConv(t *testing.T, msgs ...store.Message) Conversation {
	t.Helper()
	return convOn(t, StoreSpec{Memory: true}, nil, msgs...)
}

// memConvWith is memConv on a runtime with opts.
func memConvWith(t *testing.T, opts *Options, msgs ...store.Message) Conversation {
	t.Helper()
	return convOn(t, StoreSpec{Memory: true}, opts, msgs...)
}

// convOn opens spec on a fresh runtime with opts (a temporary state
// directory unless opts names one) and creates conversation c in it.
func convOn(t *testing.T, spec StoreSpec, opts *Options, msgs ...store.Message) Conversation {
	t.Helper()
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.StateDir == "" {
		o.StateDir = t.TempDir()
	}
	rt, err := New(&o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	st, err := rt.OpenStore(spec)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Create("c", nil); err != nil {
		t.Fatal(err)
	}
	c := st.Conversation("c")
	for _, m := range msgs {
		if _, err := c.Append(m, AppendOptions{Encodings: []string{"o200k_base"}}); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

func user(text string) store.Message {
	return store.Message{Role: store.RoleUser, Content: store.TextContent(text)}
}

// TestStoreDirectories: one resolution rule — a relative name is one plain
// segment under the state directory; an absolute one must be inside it or
// granted; links are resolved before the check; a store never nests in
// another or is the state directory; nothing without a state directory.
func TestStoreDirectories(t *testing.T) {
	state, grant, elsewhere := t.TempDir(), t.TempDir(), t.TempDir()
	rt, err := New(&Options{StateDir: state, Grants: []string{grant}})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	outer, err := rt.OpenStore(StoreSpec{Dir: filepath.Join(state, "outer")})
	if err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{
		"link_out":   elsewhere,
		"link_in":    filepath.Join(state, "outer"),
		"link_grant": grant,
		"dangling":   filepath.Join(elsewhere, "missing"),
	} {
		if err := os.Symlink(target, filepath.Join(state, link)); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		dir     string
		want    string // "" when refused with wantErr
		wantErr error
	}{
		{"tour", filepath.Join(state, "tour"), nil},
		{"a/b", "", ErrStorePath},
		{"../x", "", ErrStorePath},
		{"a/../../x", "", ErrStorePath},
		{".", "", ErrStorePath},
		{"", "", ErrStorePath},
		{state, "", ErrStorePath},
		{filepath.Join(state, "y"), filepath.Join(state, "y"), nil},
		{filepath.Join(state, "a", "b"), filepath.Join(state, "a", "b"), nil},
		{grant, grant, nil},
		{filepath.Join(grant, "sub"), filepath.Join(grant, "sub"), nil},
		{"/tmp/elsewhere-" + filepath.Base(state), "", ErrPathNotGranted},
		{"link_out", "", ErrPathNotGranted},
		{filepath.Join(state, "link_out", "x"), "", ErrPathNotGranted},
		{"link_in", filepath.Join(state, "outer"), nil},
		{"link_grant", grant, nil},
		{"dangling", "", ErrStorePath},
		{filepath.Join(outer.Dir(), "kv"), "", ErrStorePath},
		{filepath.Join(outer.Dir(), "index"), "", ErrStorePath},
		{filepath.Join(outer.Dir(), "new", "deeper"), "", ErrStorePath},
		{filepath.Join(state, "link_in", "kv"), "", ErrStorePath},
	} {
		got, err := rt.Resolve(tc.dir)
		if tc.want == "" {
			if !errors.Is(err, tc.wantErr) {
				t.Errorf("Resolve(%q) = %q, %v; want %v", tc.dir, got, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", tc.dir, got, err, tc.want)
		}
	}
	// A store is not made in a directory that holds other files, and an
	// Existing open creates nothing.
	full := filepath.Join(state, "full")
	os.MkdirAll(full, 0o755)
	os.WriteFile(filepath.Join(full, "notes.txt"), []byte("x"), 0o600)
	if _, err := rt.OpenStore(StoreSpec{Dir: "full"}); !errors.Is(err, ErrStorePath) {
		t.Errorf("store over other files: %v", err)
	}
	if _, err := rt.OpenStore(StoreSpec{Dir: "typo", Existing: true}); !errors.Is(err, ErrStoreNotFound) {
		t.Errorf("Existing open of a missing store: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(state, "typo")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Existing open left %q behind: %v", "typo", err)
	}
	if st, err := rt.OpenStore(StoreSpec{Dir: "outer", Existing: true}); err != nil || st != outer {
		t.Errorf("Existing open of a store: %v", err)
	}
	none, _ := New(nil)
	if _, err := none.OpenStore(StoreSpec{Dir: "x"}); !errors.Is(err, ErrPathNotGranted) {
		t.Errorf("without a state dir: %v", err)
	}
	// A file where a store should be is ErrStoreOpen, not a panic or a raw
	// badger error.
	file := filepath.Join(state, "file")
	os.WriteFile(file, []byte("x"), 0o600)
	if _, err := rt.OpenStore(StoreSpec{Dir: "file"}); !errors.Is(err, ErrStoreOpen) {
		t.Errorf("store over a file: %v", err)
	}
	// Opening a directory twice shares one store.
	a, err := rt.OpenStore(StoreSpec{Dir: "shared"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := rt.OpenStore(StoreSpec{Dir: filepath.Join(state, "shared")})
	if err != nil || a != b {
		t.Fatalf("second open: %v, same store %t", err, a == b)
	}
}

// TestPackValidatesBeforeIO: a bad pack request writes nothing (no count is
// recorded); a good one records the counts it had to compute, so the next
// pack does not re-tokenize.
func TestPackValidatesBeforeIO(t *testing.T) { eachBackend(t, testPackValidatesBeforeIO) }

func testPackValidatesBeforeIO(t *testing.T, be backend) {
	c := be.conv(t, user("one two three"), user("four five"))
	bad := PackOptions{Policy: testPolicy(1000, 1, 8), Encoding: "cl100k_base",
		Units: []pack.Unit{{ID: "x"}}, Utilities: testUtilities}
	if _, err := c.Pack(context.Background(), bad); err == nil {
		t.Fatal("a unit without variants packed")
	}
	if r, _ := c.Message(1); r.TokenCounts["cl100k_base"] != 0 {
		t.Fatalf("a rejected pack wrote counts: %v", r.TokenCounts)
	}
	good := bad
	good.Units = nil
	if _, err := c.Pack(context.Background(), good); err != nil {
		t.Fatal(err)
	}
	if r, _ := c.Message(1); r.TokenCounts["cl100k_base"] != 3 {
		t.Fatalf("counts after a pack: %v", r.TokenCounts)
	}
	for _, tc := range []PackOptions{
		{Policy: testPolicy(0, 1, 8)},
		{Policy: testPolicy(100, 1, 8), Model: "gpt-4o", Encoding: "o200k_base"},
		{Policy: testPolicy(100, 1, 8), Boundary: true},
		{Policy: testPolicy(100, 1, 8), Sections: []pack.TextSection{{Name: "s", Visibility: "nobody"}}},
	} {
		var fe *pack.FieldError
		if _, err := c.Pack(context.Background(), tc); !errors.As(err, &fe) {
			t.Errorf("Pack(%+v) = %v, want a field error", tc, err)
		}
	}
}

// TestHotTailNeverStartsInsideAToolGroup: when the hot tail would begin at
// a tool result, it moves back to the call — even with no older candidates
// — so the group is kept whole and the boundary tells the truth.
func TestHotTailNeverStartsInsideAToolGroup(t *testing.T) {
	eachBackend(t, testHotTailNeverStartsInsideAToolGroup)
}

func testHotTailNeverStartsInsideAToolGroup(t *testing.T, be backend) {
	call := store.Message{Role: store.RoleAssistant, ToolCalls: []store.ToolCall{{ID: "c1", Name: "f", Arguments: "{}"}, {ID: "c2", Name: "g", Arguments: "{}"}}}
	res := func(id string) store.Message {
		return store.Message{Role: store.RoleTool, ToolCallID: id, Content: store.TextContent("42")}
	}
	c := be.conv(t, user("old"), user("ask"), call, res("c1"), res("c2"), user("thanks"))
	cp, err := c.Pack(context.Background(), PackOptions{Policy: testPolicy(10000, 2, 0), Boundary: true,
		BoundaryTemplates: []string{"1..{cold_through} cold"}, Utilities: testUtilities})
	if err != nil {
		t.Fatal(err)
	}
	if cp.Boundary.HotStart != 3 || cp.Boundary.ColdThrough != 2 {
		t.Fatalf("boundary %+v: want the tail to start at the call (3)", cp.Boundary)
	}
	var roles []string
	for _, m := range cp.Request.Messages {
		roles = append(roles, m.Role)
	}
	if got := strings.Join(roles, " "); got != "system assistant tool tool user" {
		t.Fatalf("request roles %q", got)
	}
}

// TestImportCountsLikeAppend: imported messages carry the same counts an
// append would have stored.
func TestImportCountsLikeAppend(t *testing.T) { eachBackend(t, testImportCountsLikeAppend) }

func testImportCountsLikeAppend(t *testing.T, be backend) {
	c := be.conv(t, user("hello world"))
	n, err := c.Import(strings.NewReader(`{"role":"user","content":"hello world"}`+"\n"), ImportOptions{Encodings: []string{"o200k_base", "cl100k_base"}})
	if err != nil || n.Imported != 1 {
		t.Fatalf("Import = %+v, %v", n, err)
	}
	appended, _ := c.Message(1)
	imported, _ := c.Message(2)
	if imported.TokenCounts["o200k_base"] != appended.TokenCounts["o200k_base"] || imported.TokenCounts["cl100k_base"] != 2 {
		t.Fatalf("appended %v, imported %v", appended.TokenCounts, imported.TokenCounts)
	}
	if _, err := c.Import(strings.NewReader(""), ImportOptions{Encodings: []string{"no_such"}}); err == nil {
		t.Fatal("an unknown encoding imported")
	}
}

// TestColdSearchBringsTheAnswer: a cold-history search hit comes with the
// turns around it, so a question that matches brings its answer, within
// the handle's byte budget.
func TestColdSearchBringsTheAnswer(t *testing.T) { eachBackend(t, testColdSearchBringsTheAnswer) }

func testColdSearchBringsTheAnswer(t *testing.T, be backend) {
	assistant := func(text string) store.Message {
		return store.Message{Role: store.RoleAssistant, Content: store.TextContent(text)}
	}
	c := be.conv(t, user("hello"), assistant("hi"),
		user("which port does the staging database listen on?"), assistant("5433, since the migration."),
		user("thanks"), assistant("any time"))
	reg := handle.New(nil)
	ref, meta, err := c.ColdContext(context.Background(), reg, handle.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	// The model is told which store it reads (a PostgreSQL store once
	// said memory).
	kind := map[string]string{"badger-disk": "persist", "badger-memory": "memory", "postgres": "postgres", "sqlite": "sqlite"}[be.name]
	if i := slices.IndexFunc(meta.Source, func(f handle.Field) bool { return f.Key == "store_backend" }); i < 0 || meta.Source[i].Value != kind {
		t.Errorf("cold-history metadata %+v, want store_backend %s", meta.Source, kind)
	}
	res, err := reg.Do(context.Background(), ref, handle.Request{Op: handle.OpSearch, Pattern: "staging database port"}, handle.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	ms := res.Value.([]handle.Match)
	if len(ms) == 0 || ms[0].Index != 2 {
		t.Fatalf("matches %+v", ms)
	}
	it := ms[0].Value.(handle.Item)
	want := "[2] assistant: hi\n[3] user: which port does the staging database listen on?\n[4] assistant: 5433, since the migration."
	if it.Text != want {
		t.Errorf("hit text:\n%s\nwant:\n%s", it.Text, want)
	}
	if v := it.Value.(MessageView); v.Sequence != 3 || len(v.Window) != 2 || v.Window[1].Sequence != 4 {
		t.Errorf("hit value %+v", v)
	}
	// A budget too small for the window keeps the hit and says so.
	res, err = reg.Do(context.Background(), ref, handle.Request{Op: handle.OpSearch, Pattern: "staging database port"}, handle.Limits{MaxBytes: 100})
	if err != nil {
		t.Fatal(err)
	}
	if ms := res.Value.([]handle.Match); len(ms) == 0 || ms[0].Index != 2 || len(ms[0].Value.(handle.Item).Value.(MessageView).Window) == 2 || !res.Truncated {
		t.Errorf("small budget: %+v truncated=%v", res.Value, res.Truncated)
	}
	// A pattern past the store's query bounds is invalid_pattern, which
	// a planner can act on, on every backend.
	long := strings.Repeat("port ", store.MaxQueryBytes/5+1)
	_, err = reg.Do(context.Background(), ref, handle.Request{Op: handle.OpSearch, Pattern: long}, handle.Limits{})
	if he := (*handle.Error)(nil); !errors.As(err, &he) || he.Kind != handle.KindInvalidPattern {
		t.Errorf("a search for %d bytes = %v, want invalid_pattern", len(long), err)
	}
}
