package store

import (
	"fmt"
	"math"
	"os"
	"testing"
	"time"

	"github.com/rlmpl/rlmpl/store/internal/longconv"
)

// The retrieval evaluation (make eval-retrieval): every question of a long
// conversation benchmark is one search of its conversation with the
// question's text, as the planner searches cold history; a question is
// answered at k when one of its evidence turns is among the first k hits.
// The store's search is measured against plain BM25 (longconv.Plain) on
// the committed synthetic set and, when RLMPL_LOCOMO names a copy of the
// LoCoMo data (the released locomo10.json or the directory of
// per-conversation files; fetch it yourself, it is CC BY-NC), on LoCoMo.
// On every set the search must gain at least evalGain10 in recall@10 and
// evalGain1 in recall@1.
const (
	evalGain10 = 0.13
	evalGain1  = 0.07
	// evalBackendGap bounds how far another backend's recall (PostgreSQL,
	// SQLite) may be from badger's on the same set.
	evalBackendGap = 0.02
	envLoCoMo      = "RLMPL_LOCOMO"
)

func TestRetrievalEval(t *testing.T) {
	syn, err := longconv.Load("internal/longconv/testdata/synthetic.json")
	if err != nil {
		t.Fatal(err)
	}
	sets := []longconv.Dataset{syn}
	if path := os.Getenv(envLoCoMo); path != "" {
		d, err := longconv.LoadLoCoMo(path)
		if err != nil {
			t.Fatal(err)
		}
		sets = append(sets, d)
	} else {
		t.Logf("%s not set: LoCoMo skipped", envLoCoMo)
	}
	for _, d := range sets {
		table := evaluate(t, d, Options{Dir: t.TempDir(), NoSync: true})
		if testing.Verbose() {
			fmt.Println(table)
		}
		base, ours, _ := table.Total()
		for _, be := range backends {
			if !be.durable || be.name == "badger-disk" {
				continue
			}
			t.Run(be.name+"/"+d.Name, func(t *testing.T) {
				// The same set on another backend: its search must agree
				// with badger's within evalBackendGap at @1 and @10.
				other := evaluate(t, d, be.fresh(t))
				if testing.Verbose() {
					fmt.Println(be.name+":", other)
				}
				_, otherOurs, _ := other.Total()
				for _, at := range []int{0, 2} {
					if gap := math.Abs(otherOurs.At(at) - ours.At(at)); gap > evalBackendGap {
						t.Errorf("%s: recall@%d on %s %.3f, on badger %.3f: apart by more than %.2f", d.Name, longconv.Ks[at], be.name, otherOurs.At(at), ours.At(at), evalBackendGap)
					}
				}
				t.Logf("%s: recall@1 badger %.3f %s %.3f; recall@10 badger %.3f %s %.3f", d.Name, ours.At(0), be.name, otherOurs.At(0), ours.At(2), be.name, otherOurs.At(2))
			})
		}
		if g := ours.At(2) - base.At(2); g < evalGain10 {
			t.Errorf("%s: recall@10 gains %.3f over plain BM25, want >= %.2f\n%v", d.Name, g, evalGain10, table)
		}
		if g := ours.At(0) - base.At(0); g < evalGain1 {
			t.Errorf("%s: recall@1 gains %.3f over plain BM25, want >= %.2f\n%v", d.Name, g, evalGain1, table)
		}
	}
}

// evaluate loads d into a store, one conversation per conversation of d
// (speaker A as the user, B as the assistant, each turn with its speaker's
// name, its session and the session's time, an image's caption as the
// image part's alt text), and runs every question through the store and
// through plain BM25.
func evaluate(t *testing.T, d longconv.Dataset, o Options) *longconv.Table {
	// A persistent store, as in use: rankings are the same in memory
	// (TestScoringSameEverywhere), but its index is faster.
	db, err := Open(&o)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	table := longconv.NewTable(d.Name)
	ids := make([][]string, len(d.Conversations)) // seq-1 → turn id
	for i, c := range d.Conversations {
		conv := fmt.Sprintf("%d-%s", i, c.ID)
		if _, err := db.Create(conv, nil); err != nil {
			t.Fatal(err)
		}
		for _, s := range c.Sessions {
			for _, turn := range s.Turns {
				m := Message{Role: RoleAssistant, Name: turn.Speaker, Content: TextContent(turn.Text)}
				if turn.Speaker == c.Speakers[0] {
					m.Role = RoleUser
				}
				if turn.Caption != "" {
					m.Content = PartsContent(TextPart(turn.Text), CaptionedImagePart("https://images.invalid/"+turn.ID, "", turn.Caption))
				}
				if _, err := db.Append(conv, m, AppendOptions{Time: s.Time, Session: s.ID}); err != nil {
					t.Fatal(err)
				}
				ids[i] = append(ids[i], turn.ID)
			}
		}
	}
	if err := db.WaitIndexed(5 * time.Minute); err != nil {
		t.Fatal(err)
	}
	for i, c := range d.Conversations {
		plain, err := longconv.NewPlain(c)
		if err != nil {
			t.Fatal(err)
		}
		conv := fmt.Sprintf("%d-%s", i, c.ID)
		for _, q := range c.Questions {
			var base, ours []string
			for _, d := range plain.Rank(q.Text) {
				base = append(base, ids[i][d])
			}
			hits, _, err := db.Search(conv, q.Text, SearchOptions{MaxResults: longconv.Ks[len(longconv.Ks)-1]})
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range hits {
				ours = append(ours, ids[i][h.Seq-1])
			}
			// What the planner gets from one search for k hits with a
			// window of one turn each side.
			var windowed [len(longconv.Ks)][]string
			for j, k := range longconv.Ks {
				res, err := db.Find(conv, q.Text, SearchOptions{MaxResults: k, Window: 1})
				if err != nil {
					t.Fatal(err)
				}
				for _, h := range res.Hits {
					windowed[j] = append(windowed[j], ids[i][h.Seq-1])
					for _, r := range h.Window {
						windowed[j] = append(windowed[j], ids[i][r.Seq-1])
					}
				}
			}
			table.Add(q, base, ours, windowed)
		}
	}
	return table
}
