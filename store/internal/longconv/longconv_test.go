package longconv

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// locomoSample is one conversation in LoCoMo's shape (made up, tiny).
const locomoSample = `{
 "speaker_a": "Caroline", "speaker_b": "Melanie",
 "session_1_date_time": "1:56 pm on 8 May, 2023",
 "session_1": [
  {"speaker": "Caroline", "dia_id": "D1:1", "text": "Hey Mel!"},
  {"speaker": "Melanie", "dia_id": "D1:2", "text": "I painted a lake sunrise.", "img_url": ["http://x"], "blip_caption": "a painting of a lake"}
 ],
 "session_2_date_time": "10:37 am on 27 June, 2023",
 "session_2": [{"speaker": "Caroline", "dia_id": "D2:1", "text": "I ran a charity race."}],
 "session_3_date_time": "1:00 pm on 1 July, 2023",
 "qa": [
  {"question": "What did Melanie paint?", "answer": "a lake sunrise", "evidence": ["D1:2"], "category": 4},
  {"question": "When did Caroline run?", "answer": "June", "evidence": ["D2:1; D1:01"], "category": 2},
  {"question": "Unlabelled?", "evidence": [], "category": 5}
 ]
}`

func TestLoadLoCoMo(t *testing.T) {
	want := Dataset{Name: "locomo", Conversations: []Conversation{{
		ID:       "26",
		Speakers: [2]string{"Caroline", "Melanie"},
		Sessions: []Session{
			{ID: "session_1", Time: time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC), Turns: []Turn{
				{ID: "D1:1", Speaker: "Caroline", Text: "Hey Mel!"},
				{ID: "D1:2", Speaker: "Melanie", Text: "I painted a lake sunrise.", Caption: "a painting of a lake"},
			}},
			{ID: "session_2", Time: time.Date(2023, 6, 27, 10, 37, 0, 0, time.UTC), Turns: []Turn{
				{ID: "D2:1", Speaker: "Caroline", Text: "I ran a charity race."},
			}},
		},
		Questions: []Question{
			{Text: "What did Melanie paint?", Type: "single-hop", Evidence: []string{"D1:2"}},
			{Text: "When did Caroline run?", Type: "temporal", Evidence: []string{"D2:1", "D1:1"}},
		},
	}}}
	dir := t.TempDir()
	// The repository's per-conversation layout.
	if err := os.WriteFile(filepath.Join(dir, "26.json"), []byte(locomoSample), 0o644); err != nil {
		t.Fatal(err)
	}
	// The released locomo10.json: a list of samples.
	var conv map[string]json.RawMessage
	if err := json.Unmarshal([]byte(locomoSample), &conv); err != nil {
		t.Fatal(err)
	}
	qa := conv["qa"]
	delete(conv, "qa")
	list, _ := json.Marshal([]map[string]any{{"sample_id": "26", "conversation": conv, "qa": qa}})
	file := filepath.Join(t.TempDir(), "locomo10.json")
	if err := os.WriteFile(file, list, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{dir, file} {
		got, err := LoadLoCoMo(path)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("LoadLoCoMo(%s) =\n%+v\nwant\n%+v", path, got, want)
		}
	}
	if _, err := LoadLoCoMo(t.TempDir()); err == nil {
		t.Error("an empty directory loaded")
	}
}

// TestPlain checks the baseline against BM25 computed by hand.
func TestPlain(t *testing.T) {
	c := Conversation{Sessions: []Session{{Turns: []Turn{
		{Text: "the badger digs"}, // 2 tokens: badger, digs
		{Text: "Badgers dig; a badger sleeps", Caption: "badger badger"}, // 4 tokens; captions are not content
		{Text: "nothing here"}, // 1 token: "here" is a stop word
	}}}}
	p, err := NewPlain(c)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Rank("badger"); !reflect.DeepEqual(got, []int{0, 1}) {
		t.Fatalf("Rank(badger) = %v", got)
	}
	n, df, avgdl := 3.0, 2.0, 7.0/3
	idf := math.Log(1 + (n-df+0.5)/(df+0.5))
	bm := func(tf, dl float64) float64 { return idf * tf * 2.2 / (tf + 1.2*(0.25+0.75*dl/avgdl)) }
	if got, want := p.Scores("badger"), []float64{bm(1, 2), bm(1, 4), 0}; math.Abs(got[0]-want[0]) > 1e-12 || math.Abs(got[1]-want[1]) > 1e-12 || got[2] != 0 {
		t.Errorf("Scores(badger) = %v, want %v", got, want)
	}
	if got := p.Rank("digging"); len(got) != 0 {
		t.Errorf("Rank(digging) = %v: the baseline does not stem", got)
	}
}
