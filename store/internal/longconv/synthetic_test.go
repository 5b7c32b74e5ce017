package longconv

import (
	"bytes"
	"flag"
	"os"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/synthetic.json from Synthetic()")

const syntheticFile = "testdata/synthetic.json"

// TestSyntheticUpToDate checks that the committed set is what Synthetic
// generates (run with -update after changing the generator, and review
// the diff: the evaluation's numbers change with it).
func TestSyntheticUpToDate(t *testing.T) {
	d := Synthetic()
	if err := d.check(); err != nil {
		t.Fatal(err)
	}
	b, err := d.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(syntheticFile, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old, err := os.ReadFile(syntheticFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(old, b) {
		t.Errorf("%s is not what Synthetic() generates; run go test ./store/internal/longconv -update", syntheticFile)
	}
	if b2, _ := Synthetic().Marshal(); !bytes.Equal(b, b2) {
		t.Error("Synthetic() is not deterministic")
	}
}
