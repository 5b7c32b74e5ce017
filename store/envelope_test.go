package store

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestEnvelope checks what the caller says about a message at append
// (time, session, metadata, image captions): stored, returned, kept across
// a reopen and through Export and Import.
func TestEnvelope(t *testing.T) { eachDurableBackend(t, testEnvelope) }

func testEnvelope(t *testing.T, be backend) {
	o := be.fresh(t)
	db := openWith(t, &o)
	mustCreate(t, db, "a")
	said := time.Date(2023, 5, 8, 13, 56, 0, 0, time.FixedZone("CEST", 2*3600))
	opts := AppendOptions{Time: said, Session: "session_1", Metadata: []KV{{"z", []byte(`{ "a" : 1 }`)}, {"dia_id", []byte(`"D1:3"`)}}}
	m := Message{Role: RoleUser, Name: "Caroline", Content: PartsContent(TextPart("look at this"), CaptionedImagePart("http://x/p.png", "", "a dog walking past a mural"))}
	r1, err := db.Append("a", m, opts)
	if err != nil {
		t.Fatal(err)
	}
	r2 := mustAppend(t, db, "a", user("no envelope"))
	want := []KV{{"z", []byte(`{"a":1}`)}, {"dia_id", []byte(`"D1:3"`)}}
	check := func(what string, r Record) {
		t.Helper()
		if !r.Time.Equal(said) || r.Session != "session_1" || !reflect.DeepEqual(r.Metadata, want) || r.Message.Content.Parts[1].Alt != "a dog walking past a mural" {
			t.Errorf("%s: time %v session %q metadata %q parts %+v", what, r.Time, r.Session, r.Metadata, r.Message.Content.Parts)
		}
		if !r.When().Equal(said) {
			t.Errorf("%s: When() = %v, want %v", what, r.When(), said)
		}
	}
	check("append", r1)
	if !r2.Time.IsZero() || r2.Session != "" || r2.Metadata != nil || !r2.When().Equal(r2.CreatedAt) {
		t.Errorf("plain append has an envelope: %+v", r2)
	}
	// A retry with the same key must say the same about the message.
	if _, err := db.Append("a", m, AppendOptions{IdempotencyKey: "k", Session: "s"}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Append("a", m, AppendOptions{IdempotencyKey: "k", Session: "other"}); !errors.Is(err, ErrIdempotencyMismatch) {
		t.Errorf("retry in another session = %v, want ErrIdempotencyMismatch", err)
	}
	db.Close()
	db = openWith(t, &o)
	defer db.Close()
	got, err := db.Message("a", 1)
	if err != nil {
		t.Fatal(err)
	}
	check("reopen", got)

	var out bytes.Buffer
	if err := db.Export("a", &out, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	wantLine := `{"role":"user","content":[{"type":"text","text":"look at this"},{"type":"image_url","image_url":{"url":"http://x/p.png","detail":"auto"},"alt":"a dog walking past a mural"}],"name":"Caroline","timestamp":"2023-05-08T11:56:00Z","session":"session_1","metadata":{"z":{"a":1},"dia_id":"D1:3"}}`
	if len(lines) != 3 || lines[0] != wantLine || lines[1] != `{"role":"user","content":"no envelope"}` {
		t.Fatalf("export:\n%s\nwant first line\n%s", out.String(), wantLine)
	}
	mustCreate(t, db, "b")
	if n, err := db.Import("b", &out, ImportOptions{}); err != nil || n.Imported != 3 {
		t.Fatalf("import = %d, %v", n, err)
	}
	got, _ = db.Message("b", 1)
	check("import", got)
	if got, _ := db.Message("b", 2); !got.Time.IsZero() || got.Session != "" || got.Metadata != nil {
		t.Errorf("imported plain line has an envelope: %+v", got)
	}
}

func TestEnvelopeErrors(t *testing.T) { eachBackend(t, testEnvelopeErrors) }

func testEnvelopeErrors(t *testing.T, be backend) {
	db := be.open(t)
	mustCreate(t, db, "a")
	for _, tc := range []struct {
		name  string
		m     Message
		opts  AppendOptions
		field string
	}{
		{"long session", user("x"), AppendOptions{Session: strings.Repeat("s", maxIDLen+1)}, "session"},
		{"bad session", user("x"), AppendOptions{Session: "\xff"}, "session"},
		// PostgreSQL's text cannot hold NUL: refused the same everywhere,
		// not a storage failure on one backend only.
		{"NUL in session", user("x"), AppendOptions{Session: "a\x00b"}, "session"},
		{"U+FFFD in session", user("x"), AppendOptions{Session: "a\uFFFDb"}, "session"},
		{"NUL in key", user("x"), AppendOptions{IdempotencyKey: "k\x00"}, "idempotency_key"},
		{"bad metadata", user("x"), AppendOptions{Metadata: []KV{{"k", []byte("{")}}}, "metadata.k"},
		{"duplicate metadata", user("x"), AppendOptions{Metadata: []KV{{"k", []byte("1")}, {"k", []byte("2")}}}, "metadata[1].key"},
		{"huge metadata", user("x"), AppendOptions{Metadata: []KV{{"k", []byte(`"` + strings.Repeat("v", maxMessageMetadataBytes) + `"`)}}}, "metadata"},
		{"time out of range", user("x"), AppendOptions{Time: time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)}, "time"},
		{"caption on text", Message{Role: RoleUser, Content: PartsContent(Part{Type: PartText, Text: "t", Alt: "a"})}, AppendOptions{}, "content[0]"},
		{"bad caption", Message{Role: RoleUser, Content: PartsContent(CaptionedImagePart("u", "", "\xff"))}, AppendOptions{}, "content[0].alt"},
	} {
		_, err := db.Append("a", tc.m, tc.opts)
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != tc.field || !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: Append = %v, want a ValidationError on %s", tc.name, err, tc.field)
		}
	}
	if st, _ := db.Stats("a"); st.Messages != 0 {
		t.Errorf("a refused append wrote %d messages", st.Messages)
	}
	for _, line := range []string{
		`{"role":"user","content":"x","timestamp":"yesterday"}`,
		`{"role":"user","content":"x","timestamp":12}`,
		`{"role":"user","content":"x","metadata":[1]}`,
		`{"role":"user","content":"x","session":3}`,
	} {
		if _, err := db.Import("a", strings.NewReader(line), ImportOptions{}); !errors.Is(err, ErrInvalid) {
			t.Errorf("Import(%s) = %v, want ErrInvalid", line, err)
		}
	}
}
