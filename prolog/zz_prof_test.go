package prolog_test

import (
	"context"
	"os"
	"testing"

	"github.com/rlmpl/rlmpl/prolog"
)

func TestZZProf(t *testing.T) {
	g := os.Getenv("PROF_GOAL")
	if g == "" {
		t.Skip()
	}
	in := prolog.New(nil)
	if f := os.Getenv("PROF_FILE"); f != "" {
		b, _ := os.ReadFile(f)
		if err := in.Consult(context.Background(), f, string(b)); err != nil {
			t.Fatal(err)
		}
	}
	_, err := in.Once(context.Background(), g)
	t.Log(err)
}
