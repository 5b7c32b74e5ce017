package prolog_test

import (
	"context"
	"testing"

	"github.com/rlmpl/rlmpl/prolog"
)

// BenchmarkAnswerLongList: rendering the answer to numlist(1, 100000, L)
// abbreviated (what the top level prints) against whole (what w prints,
// and what it printed before abbreviation), in the same run.
func BenchmarkAnswerLongList(b *testing.B) {
	in := prolog.New(nil)
	q, err := in.Query(context.Background(), "numlist(1, 100000, L)")
	if err != nil {
		b.Fatal(err)
	}
	defer q.Close()
	if !q.Next() {
		b.Fatal(q.Err())
	}
	b.Run("abbreviated", func(b *testing.B) {
		for b.Loop() {
			_ = q.Answer()
		}
	})
	b.Run("whole", func(b *testing.B) {
		for b.Loop() {
			_ = q.FullAnswer()
		}
	})
}
