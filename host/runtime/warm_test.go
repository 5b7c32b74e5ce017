package runtime

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/rlmpl/rlmpl/host/handle"
	"github.com/rlmpl/rlmpl/store"
)

// scripted is a generator that returns fixed fields and counts its calls.
type scripted struct {
	fields WarmFields
	calls  int
}

func (s *scripted) gen(ctx context.Context, src WarmSource) (WarmFields, WarmGeneration, error) {
	s.calls++
	return s.fields, WarmGeneration{Kind: "callback"}, nil
}

var usefulFields = WarmFields{Summary: "compact useful summary", Decisions: []string{"d1", "d2", "d3"},
	Facts: []string{"f1", "f2", "f3"}, Unresolved: []string{"next task"}, Entities: []string{"e1", "e2"},
	Topics: []string{"t1", "t2"}, Files: []string{"a.go", "b.go"}, Symbols: []string{"S1", "S2"}}

var testWarmPolicy = WarmPolicy{MaxCandidates: 8,
	Fidelity: map[string]int64{"verbatim": 95, "detailed_summary": 90, "compact_summary": 70, "facts_only": 60},
	Weights:  map[string]int64{"pinned": 100000, "direct_reference": 1000, "recency": 1}}

func TestWarmPublishPreservesTheSource(t *testing.T) {
	eachBackend(t, testWarmPublishPreservesTheSource)
}

func testWarmPublishPreservesTheSource(t *testing.T, be backend) {
	long := strings.Repeat("a", 150)
	c := be.conv(t, user(long), user(strings.Repeat("b", 150)), user("current"))
	g := &scripted{fields: usefulFields}
	a, err := c.WarmPublish(context.Background(), 1, 2, g.gen, []string{"o200k_base"})
	if err != nil {
		t.Fatal(err)
	}
	if a.Key != "range_1_2" || a.Version != 1 || len(a.SourceRefs) != 2 || a.SourceRefs[1] != 2 {
		t.Fatalf("artifact %+v", a)
	}
	var kinds []string
	for _, v := range a.Variants {
		kinds = append(kinds, v.Kind)
		if v.Counts["o200k_base"] <= 0 {
			t.Fatalf("%s not counted at publish: %v", v.Kind, v.Counts)
		}
	}
	if strings.Join(kinds, " ") != "verbatim detailed_summary compact_summary facts_only" {
		t.Fatalf("kinds %v", kinds)
	}
	if a.Variants[2].Text != "Summary: compact useful summary\nUnresolved:\n- next task\n" {
		t.Fatalf("compact = %q", a.Variants[2].Text)
	}
	if m, _ := c.Message(1); m.Message.Content.Text != long {
		t.Fatal("the source changed")
	}
	// Recompaction is a new version; the old stays.
	if b, err := c.WarmPublish(context.Background(), 1, 2, g.gen, nil); err != nil || b.Version != 2 {
		t.Fatalf("second publish: %+v %v", b, err)
	}
	if all, _ := c.WarmList(true); len(all) != 2 {
		t.Fatalf("history %d", len(all))
	}
	if latest, _ := c.WarmList(false); len(latest) != 1 || latest[0].Version != 2 {
		t.Fatalf("latest %+v", latest)
	}
}

func TestWarmSchemaFailsClosed(t *testing.T) {
	for raw, want := range map[string]string{
		`{"summary":"s"}`: "missing_required_field",
		`{"summary":"s","decisions":[],"facts":[],"unresolved":[],"entities":[],"topics":[],"files":[],"symbols":[],"mood":"x"}`: "unexpected_field",
		`{"summary":1,"decisions":[],"facts":[],"unresolved":[],"entities":[],"topics":[],"files":[],"symbols":[]}`:              "invalid_field",
		`not json`: "invalid_json",
	} {
		_, err := ParseWarmFields([]byte(raw))
		var se *SchemaError
		if !errors.As(err, &se) || se.Kind != want {
			t.Errorf("ParseWarmFields(%s) = %v, want %s", raw, err, want)
		}
	}
	if _, err := ParseWarmFields([]byte(`{"summary":"s","decisions":[],"facts":[],"unresolved":[],"entities":[],"topics":[],"files":[],"symbols":[]}`)); err != nil {
		t.Fatal(err)
	}
}

// TestPackChoosesACompactSummaryUnderPressure: the upstream scenario — two
// long old messages summarized, a tight cap: the pack keeps the hot turn
// and the compact summary, never the raws the summary covers, and a pack
// makes no generator call (I3).
func TestPackChoosesACompactSummaryUnderPressure(t *testing.T) {
	eachBackend(t, testPackChoosesACompactSummaryUnderPressure)
}

func testPackChoosesACompactSummaryUnderPressure(t *testing.T, be backend) {
	c := be.conv(t, user(strings.Repeat("alpha ", 60)), user(strings.Repeat("beta ", 60)), user("current"))
	g := &scripted{fields: usefulFields}
	if _, err := c.WarmPublish(context.Background(), 1, 2, g.gen, []string{"o200k_base"}); err != nil {
		t.Fatal(err)
	}
	opts := PackOptions{Policy: testPolicy(60, 1, 8), Model: "gpt-4o-2024-08-06", Utilities: testUtilities,
		Warm: &WarmOptions{Policy: testWarmPolicy}}
	cp, err := c.Pack(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range cp.Selected {
		got[cp.Units[s.Unit].ID] = cp.Units[s.Unit].Variants[s.Variant].Kind
	}
	if got["range_1_2"] != "compact_summary" || got["conversation_message_3"] != "verbatim" || got["conversation_message_1"] != "" || len(got) != 2 {
		t.Fatalf("selected %v (ledger %d of %d)", got, cp.Ledger.Total, cp.Ledger.Limit)
	}
	if cp.Warm != (WarmStatus{Configured: true, Available: 1, Loaded: 1}) {
		t.Fatalf("status %+v", cp.Warm)
	}
	// With room, the raws win over any summary of them: the summary and its
	// raws are never both in.
	opts.Policy = testPolicy(100000, 1, 8)
	if cp, err = c.Pack(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, s := range cp.Selected {
		ids[cp.Units[s.Unit].ID] = true
	}
	if ids["range_1_2"] || !ids["conversation_message_1"] || !ids["conversation_message_2"] {
		t.Fatalf("with room the raws should win over their summary: %v", ids)
	}
	if g.calls != 1 {
		t.Fatalf("a pack called the generator: %d calls", g.calls)
	}
	// Without warm options nothing is loaded.
	opts.Warm = nil
	if cp, _ = c.Pack(context.Background(), opts); cp.Warm.Configured || cp.Warm.Loaded != 0 {
		t.Fatalf("unconfigured status %+v", cp.Warm)
	}
}

// TestWarmSignalsRankAndPin: a direct reference beats recency when the
// candidates are narrowed; a pinned artifact is mandatory.
func TestWarmSignalsRankAndPin(t *testing.T) { eachBackend(t, testWarmSignalsRankAndPin) }

func testWarmSignalsRankAndPin(t *testing.T, be backend) {
	c := be.conv(t, user("one"), user("two"), user("three"))
	g := &scripted{fields: usefulFields}
	for _, r := range [][2]int64{{1, 1}, {2, 2}} {
		if _, err := c.WarmPublish(context.Background(), r[0], r[1], g.gen, nil); err != nil {
			t.Fatal(err)
		}
	}
	pol := testWarmPolicy
	pol.MaxCandidates = 1
	w := WarmOptions{Policy: pol, Signals: []WarmSignal{{Key: "range_1_1", Kind: "direct_reference", Strength: 10}}}
	cp, err := c.Pack(context.Background(), PackOptions{Policy: testPolicy(100000, 1, 8), Utilities: testUtilities, Warm: &w})
	if err != nil {
		t.Fatal(err)
	}
	var warm []string
	for _, u := range cp.Units {
		if u.Section == "warm" {
			warm = append(warm, u.ID)
		}
	}
	if len(warm) != 1 || warm[0] != "range_1_1" {
		t.Fatalf("warm candidates %v", warm)
	}
	w.Signals = []WarmSignal{{Key: "range_2_2", Kind: "pinned", Strength: 1}}
	cp, _ = c.Pack(context.Background(), PackOptions{Policy: testPolicy(100000, 1, 8), Utilities: testUtilities, Warm: &w})
	for _, u := range cp.Units {
		if u.ID == "range_2_2" && !u.Mandatory {
			t.Fatal("a pinned artifact is optional")
		}
	}
	w.Signals = []WarmSignal{{Key: "range_2_2", Kind: "gossip", Strength: 1}}
	if _, err := c.Pack(context.Background(), PackOptions{Policy: testPolicy(100000, 1, 8), Utilities: testUtilities, Warm: &w}); !errors.Is(err, ErrUnsupportedSignal) {
		t.Fatalf("unknown signal kind: %v", err)
	}
}

// TestStaleArtifactIsNeverUsed: an artifact whose covered messages differ
// from the ones it was made from (a conversation rebuilt under the same
// id, here a second store given the first's artifact) is left out and
// counted as stale.
func TestStaleArtifactIsNeverUsed(t *testing.T) { eachBackend(t, testStaleArtifactIsNeverUsed) }

func testStaleArtifactIsNeverUsed(t *testing.T, be backend) {
	c := be.conv(t, user("original one"), user("original two"), user("now"))
	g := &scripted{fields: usefulFields}
	a, err := c.WarmPublish(context.Background(), 1, 2, g.gen, nil)
	if err != nil {
		t.Fatal(err)
	}
	other := be.conv(t, user("different one"), user("original two"), user("now"))
	body, _ := jsonArtifact(a)
	if _, err := other.st.db.PutDoc("c", store.DocPut{Collection: warmCollection, Key: a.Key, Body: body}); err != nil {
		t.Fatal(err)
	}
	cp, err := other.Pack(context.Background(), PackOptions{Policy: testPolicy(100000, 1, 8), Utilities: testUtilities, Warm: &WarmOptions{Policy: testWarmPolicy}})
	if err != nil {
		t.Fatal(err)
	}
	if cp.Warm.Stale != 1 || cp.Warm.Loaded != 0 {
		t.Fatalf("status %+v", cp.Warm)
	}
	for _, u := range cp.Units {
		if u.Section == "warm" {
			t.Fatal("a stale artifact was offered")
		}
	}
}

// TestArtifactsTravelWithTheirConversation: an export with documents
// carries the artifacts; imported as is they are current, imported with a
// covered message changed they are stale and never used.
func TestArtifactsTravelWithTheirConversation(t *testing.T) {
	eachBackend(t, testArtifactsTravelWithTheirConversation)
}

func testArtifactsTravelWithTheirConversation(t *testing.T, be backend) {
	c := be.conv(t, user("original one"), user("original two"), user("now"))
	if _, err := c.WarmPublish(context.Background(), 1, 2, (&scripted{fields: usefulFields}).gen, nil); err != nil {
		t.Fatal(err)
	}
	var backup bytes.Buffer
	if err := c.Export(&backup, store.ExportOptions{Documents: true}); err != nil {
		t.Fatal(err)
	}
	opts := PackOptions{Policy: testPolicy(100000, 1, 8), Utilities: testUtilities, Warm: &WarmOptions{Policy: testWarmPolicy}}
	for _, tc := range []struct {
		name, file string
		stale      int
	}{
		{"as is", backup.String(), 0},
		{"edited", strings.Replace(backup.String(), "original one", "rewritten one", 1), 1},
	} {
		if _, err := c.st.Create(tc.name, nil); err != nil {
			t.Fatal(err)
		}
		restored := c.st.Conversation(tc.name)
		n, err := restored.Import(strings.NewReader(tc.file), ImportOptions{})
		if err != nil || n.Imported != 3 || n.Documents != 1 {
			t.Fatalf("%s: import %+v, %v", tc.name, n, err)
		}
		cp, err := restored.Pack(context.Background(), opts)
		if err != nil {
			t.Fatal(err)
		}
		if cp.Warm.Available != 1 || cp.Warm.Stale != tc.stale {
			t.Errorf("%s: warm status %+v, want %d stale", tc.name, cp.Warm, tc.stale)
		}
	}
}

// TestSeparateWarmStore: upstream's separate artifact store. Artifacts
// published to it live there (the conversation's own store holds none), a
// pack naming it offers them, a turn's receipt copies their text (its
// recipe cannot name a version in another store) and replays byte for
// byte, and an artifact whose source changed is stale there as anywhere.
func TestSeparateWarmStore(t *testing.T) {
	c := memConv(t, user(strings.Repeat("alpha ", 60)), user(strings.Repeat("beta ", 60)), user("current"))
	ws, err := c.Store().rt.OpenStore(StoreSpec{Memory: true})
	if err != nil {
		t.Fatal(err)
	}
	wc := c.WithWarmStore(ws)
	if arts, err := wc.WarmList(false); err != nil || len(arts) != 0 {
		t.Fatalf("a fresh artifact store lists %v, %v; want none", arts, err)
	}
	g := &scripted{fields: usefulFields}
	if _, err := wc.WarmPublish(context.Background(), 1, 2, g.gen, []string{"o200k_base"}); err != nil {
		t.Fatal(err)
	}
	if own, _ := c.WarmList(true); len(own) != 0 {
		t.Fatalf("the conversation's own store holds %d artifacts, want 0", len(own))
	}
	if arts, err := wc.WarmList(false); err != nil || len(arts) != 1 || arts[0].Version != 1 {
		t.Fatalf("artifact store lists %+v, %v", arts, err)
	}
	if _, err := wc.WarmRetire(2, 3); !errors.Is(err, ErrNoArtifact) {
		t.Fatalf("retire of an unpublished range = %v, want ErrNoArtifact", err)
	}
	warm := &WarmOptions{Policy: testWarmPolicy, Store: ws}
	cp, err := c.Pack(context.Background(), PackOptions{Policy: testPolicy(60, 1, 8), Model: "gpt-4o-2024-08-06",
		Utilities: testUtilities, Warm: warm})
	if err != nil {
		t.Fatal(err)
	}
	if cp.Warm.Loaded != 1 || !cp.WarmElsewhere {
		t.Fatalf("pack warm status %+v (elsewhere %v), want the separate store's artifact", cp.Warm, cp.WarmElsewhere)
	}
	p := &planner{answers: []string{final("ok")}}
	opts := turnOpts(p, handle.New(nil))
	opts.Pack.Policy = testPolicy(1044+60, 1, 8) // the planner's fixed sections, and the same room as the pack's
	opts.Pack.Policy.ReserveOutputTokens = 0
	opts.Pack.Warm = warm
	opts.Pack.Boundary = false
	res, err := c.Turn(context.Background(), user("go on"), opts)
	if err != nil {
		t.Fatal(err)
	}
	sent := false
	for _, m := range p.reqs[0].Messages {
		sent = sent || strings.Contains(m.Content, "Summary: compact useful summary")
	}
	if !sent {
		t.Fatalf("the separate store's summary was not sent: %+v", p.reqs[0].Messages)
	}
	if _, err := c.Replay(context.Background(), res.TurnID); err != nil {
		t.Fatalf("replay: %v", err)
	}
}
