package prolog_test

import (
	"context"
	"testing"

	"github.com/rlmpl/rlmpl/prolog"
)

func TestScratch(t *testing.T) {
	in := prolog.New(nil)
	for _, g := range []string{
		`X = (x = (a,b))`, `X = (x = (a:-b,c;d))`, `X = (x = -(1))`, `X = (x = -a)`, `X = (x = 1-(-1))`, `X = (x = f(-1))`, `X = (x = 1.0)`, `X = (x = {a,b})`, `X = (x = [1,2|T])`, `X = (x = - (-(a)))`, `X = (x = \+a)`, `X = (x = f(:-, -))`, `X = (x = (:-))`, `X = (x = 'hello world')`, `X = (x = -(-(1)))`, `X = (x = a- (-1))`, `X = (x = 2** -1)`, `X = (x = [-])`, `X = (x = f(a;b))`, `X = (x = (a->b;c))`, `X = (x = 1.0e10)`, `X = (x = -0.0)`, `X = (x = "it's")`, `X = (x = 'it''s')`, `X = (x = f(x,-))`, `X = (x = (- - a))`, `X = (x = (-(-)))`, `X = (x = \ (-1))`,
	} {
		bs, err := in.Once(context.Background(), g)
		if err != nil {
			t.Logf("%s: %v", g, err)
			continue
		}
		t.Logf("%-30s  %s", g, in.WriteQ(bs[0].Value, nil))
	}
}
