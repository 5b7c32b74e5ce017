package runtime

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/rlmpl/rlmpl/host/handle"
	"github.com/rlmpl/rlmpl/host/plan"
	"github.com/rlmpl/rlmpl/store"
	"github.com/rlmpl/rlmpl/store/pgtest"
)

// freezingPlanner stops the proxy from relaying, then answers: the turn's
// writes after its plan (the answer, the receipt) meet a frozen
// connection.
type freezingPlanner struct {
	planner
	proxy *pgtest.Proxy
}

func (p *freezingPlanner) Plan(ctx context.Context, req plan.PlannerRequest) (plan.PlannerReply, error) {
	p.proxy.Freeze()
	return p.planner.Plan(ctx, req)
}

// TestPostgresTurnOnAFrozenConnection: a managed turn whose database stops
// answering mid-turn (a proxy that stops relaying, sockets open) fails
// with store.ErrUnavailable instead of waiting for traffic to resume, and
// the same turn id completes once it does.
func TestPostgresTurnOnAFrozenConnection(t *testing.T) {
	proxy, dsn := pgtest.NewProxy(t, pgtest.DSN(t))
	spec := StoreSpec{Postgres: &store.PostgresOptions{DSN: dsn, StatementTimeout: time.Second, ConnectTimeout: 500 * time.Millisecond}}
	c := convOn(t, spec, nil, user("earlier question"))
	p := &freezingPlanner{planner: planner{answers: []string{final("hello back")}}, proxy: proxy}
	opts := turnOpts(p, handle.New(nil))
	opts.TurnID = "t1"
	done := make(chan error, 1)
	go func() {
		_, err := c.Turn(context.Background(), user("hello"), opts)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, store.ErrUnavailable) {
			t.Errorf("a turn whose database froze = %v, want store.ErrUnavailable", err)
		}
	case <-time.After(time.Minute):
		proxy.Thaw()
		t.Fatalf("a turn whose database froze returned only when traffic resumed: %v", <-done)
	}
	proxy.Thaw()
	opts.Deps.Planner = &p.planner
	res, err := c.Turn(context.Background(), user("hello"), opts)
	if err != nil || res.Assistant.Message.Content.Text != "hello back" {
		t.Errorf("the same turn once the database answers again = %+v, %v", res, err)
	}
}
