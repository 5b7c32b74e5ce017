package runtime

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"strings"
)

// ChartStages are the parts a context chart stacks, bottom to top: what
// a receipt's ledger charged for the planner's request, grouped so that a
// reader sees where the budget goes.
var ChartStages = []string{"pinned", "scaffolding", "tools", "warm", "older_turns", "boundary", "hot_tail"}

// chartColors are the stages' fill colours, in ChartStages order.
var chartColors = []string{"#7b3294", "#969696", "#fdae61", "#abd9e9", "#2c7bb6", "#d7191c", "#1a9641"}

// ChartBar is one turn of a context chart: tokens per [ChartStages] entry
// (they sum to the sent part of the planner request's ledger), the
// ceiling for what is sent (the limit less the reserve), and the share of
// the turn's prompt tokens the provider served from cache (-1 when it
// reported nothing).
type ChartBar struct {
	TurnID      string
	Tokens      []int64
	Ceiling     int64
	CachedShare float64
}

// ChartBarOf reads a receipt's bar. Fixed sections are scaffolding
// (planner instructions, grammar, capabilities, budget, goal, a direct
// turn's reply priming, and the caller's system prompt, instructions and
// skills) except what is tools: the planner's tool schemas, a direct
// turn's tool definitions and the tool rounds (calls and results) it sends
// back; conversation messages are the hot tail or older turns; warm
// summaries, the boundary and pinned messages are their own.
func ChartBarOf(r Receipt) ChartBar {
	bar := ChartBar{TurnID: r.TurnID, Tokens: make([]int64, len(ChartStages)), CachedShare: -1}
	if r.Context == nil {
		return bar
	}
	units := map[string]ReceiptUnit{}
	for _, u := range r.Context.Selected {
		units[u.ID] = u
	}
	var reserved int64
	for _, s := range r.Context.Stages {
		stage := "scaffolding"
		switch {
		case s.Kind == "reserve":
			reserved += s.Charged
			continue
		case s.Kind == "context_unit":
			u := units[s.Name]
			switch {
			case u.Section == "pinned":
				stage = "pinned"
			case u.Section == "warm":
				stage = "warm"
			case u.Section == "cold_history_boundary":
				stage = "boundary"
			case u.Hot:
				stage = "hot_tail"
			default:
				stage = "older_turns"
			}
		case s.Name == "tool_schemas" || s.Name == "tool_definitions" || strings.HasPrefix(s.Name, "tool_round_"):
			stage = "tools"
		}
		for i, name := range ChartStages {
			if name == stage {
				bar.Tokens[i] += s.Charged
			}
		}
	}
	bar.Ceiling = r.Context.Limit - reserved
	if ts := r.Stats(); ts.PromptTokens > 0 {
		if _, reported := r.CachedTokens(); reported {
			bar.CachedShare = ts.CachedShare
		}
	}
	return bar
}

// The legend's geometry: a chart of a few turns is narrow, so the legend
// wraps into rows of legendRowH pixels, in a drawing at least
// minChartWidth wide; a name is taken as 7 pixels a character.
const (
	minChartWidth = 320.0
	legendRowH    = 16.0
)

// legendEntry is one entry of the legend: a stage (its index in
// ChartStages), the ceiling or the cached share, placed at x in row.
type legendEntry struct {
	name  string
	stage int
	x     float64
	row   int
}

// legendLayout places the legend's entries left to right, starting a new
// row where the next would cross the drawing's right edge.
func legendLayout(width float64) []legendEntry {
	var out []legendEntry
	for k, name := range append(append([]string(nil), ChartStages...), "ceiling", "cached share") {
		out = append(out, legendEntry{name: name, stage: k})
	}
	const margin = 8
	x, row := float64(margin), 0
	for i := range out {
		w := 14 + 7*float64(len(out[i].name))
		if x > margin && x+w > width-margin {
			x, row = margin, row+1
		}
		out[i].x, out[i].row = x, row
		x += w + 12
	}
	return out
}

// WriteContextChart draws receipts as a self-contained SVG (no script, no
// external reference): a bar per turn stacking its request's tokens by
// [ChartStages], the ceiling over each bar, and the provider-reported
// cached share as a dot on a 0–100% scale at the right. Each rect carries
// data-turn, data-stage and data-tokens, and a title for a tooltip.
func WriteContextChart(w io.Writer, rs []Receipt) error {
	bars := make([]ChartBar, len(rs))
	var top int64 = 1
	for i, r := range rs {
		bars[i] = ChartBarOf(r)
		var sum int64
		for _, n := range bars[i].Tokens {
			sum += n
		}
		top = max(top, sum, bars[i].Ceiling)
	}
	const (
		left, right, topM, bottom = 70, 60, 30, 60
		plotH                     = 320
	)
	barW := 12.0
	if len(bars) > 0 {
		barW = max(2, min(24, 900/float64(len(bars))))
	}
	plotW := barW * float64(max(1, len(bars)))
	width := max(float64(left+right)+plotW, minChartWidth)
	legend := legendLayout(width)
	height := float64(topM+plotH+bottom) + legendRowH*float64(legend[len(legend)-1].row)
	y := func(tokens int64) float64 { return topM + plotH - float64(plotH)*float64(tokens)/float64(top) }
	bw := bufio.NewWriter(w)
	p := func(format string, a ...any) { fmt.Fprintf(bw, format, a...) }
	p(`<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="11">`+"\n",
		width, height, width, height)
	p(`<title>context per turn: tokens by stage, ceiling and provider-cached share</title>` + "\n")
	p(`<rect x="0" y="0" width="%.0f" height="%.0f" fill="#ffffff"/>`+"\n", width, height)
	// Axes: tokens at the left, the cached share at the right.
	for k := 0; k <= 4; k++ {
		v := top * int64(k) / 4
		p(`<line x1="%d" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e0e0e0"/>`+"\n", left, y(v), float64(left)+plotW, y(v))
		p(`<text x="%d" y="%.1f" text-anchor="end">%d</text>`+"\n", left-4, y(v)+4, v)
		p(`<text x="%.1f" y="%.1f">%d%%</text>`+"\n", float64(left)+plotW+4, y(v)+4, 25*k)
	}
	p(`<text x="%d" y="%d">tokens</text>`+"\n", 4, topM-10)
	p(`<text x="%.1f" y="%d" text-anchor="end">cached</text>`+"\n", width-4, topM-10)
	for i, b := range bars {
		x := float64(left) + barW*float64(i)
		var base int64
		for k, n := range b.Tokens {
			if n == 0 {
				continue
			}
			p(`<rect x="%.2f" y="%.2f" width="%.2f" height="%.2f" fill="%s" data-turn="%d" data-stage="%s" data-tokens="%d"><title>turn %d (%s): %s %d tokens</title></rect>`+"\n",
				x, y(base+n), max(1, barW-1), y(base)-y(base+n), chartColors[k], i+1, ChartStages[k], n, i+1, html.EscapeString(b.TurnID), ChartStages[k], n)
			base += n
		}
		if b.Ceiling > 0 {
			p(`<line x1="%.2f" y1="%.2f" x2="%.2f" y2="%.2f" stroke="#000000" stroke-width="2" data-turn="%d" data-ceiling="%d"/>`+"\n",
				x, y(b.Ceiling), x+barW, y(b.Ceiling), i+1, b.Ceiling)
		}
		if b.CachedShare >= 0 {
			cy := topM + plotH - plotH*b.CachedShare
			p(`<circle cx="%.2f" cy="%.2f" r="%.1f" fill="#ffffff" stroke="#000000" data-turn="%d" data-cached-share="%.4f"><title>turn %d: %.1f%% of prompt tokens cached</title></circle>`+"\n",
				x+barW/2, cy, max(1.5, min(3, barW/3)), i+1, b.CachedShare, i+1, 100*b.CachedShare)
		}
	}
	// Legend: in rows, each entry a mark and its name.
	for _, e := range legend {
		ly := float64(topM+plotH+30) + legendRowH*float64(e.row)
		switch e.name {
		case "ceiling":
			p(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#000000" stroke-width="2"/>`, e.x, ly+5, e.x+10, ly+5)
		case "cached share":
			p(`<circle cx="%.1f" cy="%.1f" r="3" fill="#ffffff" stroke="#000000"/>`, e.x+5, ly+5)
		default:
			p(`<rect x="%.1f" y="%.1f" width="10" height="10" fill="%s"/>`, e.x, ly, chartColors[e.stage])
		}
		p(`<text x="%.1f" y="%.1f" data-legend="%s">%s</text>`+"\n", e.x+14, ly+9, e.name, e.name)
	}
	p(`<text x="%d" y="%d">turn 1 .. %d</text>`+"\n", left, topM+plotH+16, len(bars))
	p("</svg>\n")
	return bw.Flush()
}
