package runtime

import (
	"bytes"
	"context"
	"encoding/xml"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/rlmpl/rlmpl/host/handle"
	"github.com/rlmpl/rlmpl/host/plan"
	"github.com/rlmpl/rlmpl/host/provider"
	"github.com/rlmpl/rlmpl/host/provider/providertest"
	"github.com/rlmpl/rlmpl/store"
)

// TestContextChart: the chart of four turns is well-formed XML with no
// script or external reference; each turn's bars sum to the sent part of
// its receipt's ledger, stage by stage as ChartBarOf groups them; its
// ceiling is the limit less the reserve; the cached share is the
// provider's.
func TestContextChart(t *testing.T) {
	srv := providertest.NewServer(providertest.CompletionUsage(final("ok"), `{"prompt_tokens":1000,"completion_tokens":3,"prompt_tokens_details":{"cached_tokens":250}}`))
	defer srv.Close()
	p, err := provider.NewClient(&provider.Options{BaseURL: srv.BaseURL(), Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	var old []store.Message
	for i := range 10 {
		old = append(old, user("older question "+strconv.Itoa(i)), store.Message{Role: store.RoleAssistant, Content: store.TextContent("older answer")})
	}
	c := memConv(t, old...)
	for _, q := range []string{"a", "b", "c", "d"} {
		if _, err := c.Turn(context.Background(), user(q), turnOpts(httpPlanner{p}, handle.New(nil))); err != nil {
			t.Fatal(err)
		}
	}
	rs, err := c.Receipts(false)
	if err != nil || len(rs) != 4 {
		t.Fatal(rs, err)
	}
	var buf bytes.Buffer
	if err := WriteContextChart(&buf, rs); err != nil {
		t.Fatal(err)
	}
	svg := buf.String()
	if strings.Contains(svg, "<script") || strings.Count(svg, "http") != 1 || !strings.HasPrefix(svg, `<svg xmlns="http://www.w3.org/2000/svg"`) {
		t.Fatalf("not self-contained:\n%s", svg[:200])
	}
	sums := map[int]map[string]int64{}
	ceilings, shares := map[int]int64{}, map[int]float64{}
	dec := xml.NewDecoder(strings.NewReader(svg))
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("malformed SVG: %v", err)
		}
		el, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		a := map[string]string{}
		for _, at := range el.Attr {
			a[at.Name.Local] = at.Value
		}
		turn, _ := strconv.Atoi(a["data-turn"])
		switch {
		case a["data-stage"] != "":
			n, _ := strconv.ParseInt(a["data-tokens"], 10, 64)
			if sums[turn] == nil {
				sums[turn] = map[string]int64{}
			}
			sums[turn][a["data-stage"]] += n
		case a["data-ceiling"] != "":
			ceilings[turn], _ = strconv.ParseInt(a["data-ceiling"], 10, 64)
		case a["data-cached-share"] != "":
			shares[turn], _ = strconv.ParseFloat(a["data-cached-share"], 64)
		}
	}
	for i, r := range rs {
		ts := r.Stats()
		var total int64
		for _, n := range sums[i+1] {
			total += n
		}
		bar := ChartBarOf(r)
		for k, stage := range ChartStages {
			if sums[i+1][stage] != bar.Tokens[k] {
				t.Errorf("turn %d %s: chart %d, receipt %d", i+1, stage, sums[i+1][stage], bar.Tokens[k])
			}
		}
		if total != ts.ContextTokens || ceilings[i+1] != r.Context.Limit-ts.ReservedTokens || shares[i+1] != 0.25 {
			t.Errorf("turn %d: bars %d (ledger %d), ceiling %d, share %v", i+1, total, ts.ContextTokens, ceilings[i+1], shares[i+1])
		}
		if sums[i+1]["hot_tail"] == 0 || sums[i+1]["scaffolding"] == 0 || sums[i+1]["older_turns"] == 0 {
			t.Errorf("turn %d stages %v", i+1, sums[i+1])
		}
	}
}

// TestContextChartDirectTools: a direct turn's tool definitions and the
// tool rounds it sends back (calls and results) are drawn as tools, not
// scaffolding; only the reply priming is scaffolding.
func TestContextChartDirectTools(t *testing.T) {
	c := longConv(t)
	m := &respondModels{replies: []plan.ModelResult{search("s1", "vault code", 1), {Text: "It is ZEPHYR-4471."}}}
	res, err := c.Turn(context.Background(), user("remind me of the vault code"), directOpts(m, handle.New(nil), 600))
	if err != nil {
		t.Fatal(err)
	}
	var tools, scaffolding int64
	for _, s := range res.Receipt.Context.Stages {
		switch {
		case s.Name == "tool_definitions" || strings.HasPrefix(s.Name, "tool_round_"):
			tools += s.Charged
		case s.Kind == "fixed_section":
			scaffolding += s.Charged
		}
	}
	bar := ChartBarOf(res.Receipt)
	got := map[string]int64{}
	for k, stage := range ChartStages {
		got[stage] = bar.Tokens[k]
	}
	if tools == 0 || got["tools"] != tools || got["scaffolding"] != scaffolding {
		t.Fatalf("chart tools %d, scaffolding %d; want tools %d (definitions and rounds), scaffolding %d", got["tools"], got["scaffolding"], tools, scaffolding)
	}
}

// TestContextChartLegendFits: whatever the number of turns, every legend
// entry lies inside the drawing (at the chart's own 7 px per character).
func TestContextChartLegendFits(t *testing.T) {
	for _, turns := range []int{0, 1, 4, 60} {
		rs := make([]Receipt, turns)
		for i := range rs {
			rs[i] = Receipt{TurnID: "turn_" + strconv.Itoa(i)}
		}
		var buf bytes.Buffer
		if err := WriteContextChart(&buf, rs); err != nil {
			t.Fatal(err)
		}
		dec := xml.NewDecoder(&buf)
		var width, height float64
		legend := 0
		for {
			tok, err := dec.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			el, ok := tok.(xml.StartElement)
			if !ok {
				continue
			}
			a := map[string]string{}
			for _, at := range el.Attr {
				a[at.Name.Local] = at.Value
			}
			if el.Name.Local == "svg" {
				width, _ = strconv.ParseFloat(a["width"], 64)
				height, _ = strconv.ParseFloat(a["height"], 64)
			}
			if name := a["data-legend"]; name != "" {
				legend++
				x, _ := strconv.ParseFloat(a["x"], 64)
				y, _ := strconv.ParseFloat(a["y"], 64)
				if x < 0 || x+7*float64(len(name)) > width || y < 0 || y > height {
					t.Errorf("%d turns: legend %q at (%.0f, %.0f) is outside %.0f×%.0f", turns, name, x, y, width, height)
				}
			}
		}
		if want := len(ChartStages) + 2; legend != want {
			t.Errorf("%d turns: %d legend entries, want %d (the stages, the ceiling, the cached share)", turns, legend, want)
		}
	}
}
