package longconv

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Synthetic returns the synthetic evaluation set: ten conversations
// between two friends over 22–26 sessions (about 450 turns each) who tell
// each other about pets, trips, dishes, lessons, races and more (topics.go),
// with questions of five types:
//
//	single-hop     about a piece of news, or the image shared with it
//	reply          answered by the reply to the other's follow-up question
//	speaker        both friends had such news: only the name tells them apart
//	temporal       when it happened, or what happened in a named month
//	multi-session  about news spread over several sessions (lessons kept up, cities visited)
//
// It is deterministic (its own generator, no map order): the same source
// always gives the same set, which testdata/synthetic.json holds
// (TestSyntheticUpToDate regenerates it with -update).
func Synthetic() Dataset {
	g := &generator{r: splitmix{0x5eed2024}}
	d := Dataset{Name: "synthetic"}
	for i := 0; i < 10; i++ {
		d.Conversations = append(d.Conversations, g.conversation(i))
	}
	return d
}

// splitmix is SplitMix64: small, fast, and fixed forever, unlike a library
// generator whose stream may change between Go versions.
type splitmix struct{ s uint64 }

func (r *splitmix) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

func (r *splitmix) intn(n int) int { return int(r.next() % uint64(n)) }

func (r *splitmix) pick(xs []string) string { return xs[r.intn(len(xs))] }

// perm returns a random permutation of 0..n-1.
func (r *splitmix) perm(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	for i := n - 1; i > 0; i-- {
		j := r.intn(i + 1)
		p[i], p[j] = p[j], p[i]
	}
	return p
}

var names = []string{"Ann", "Bruno", "Chioma", "Dmitri", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jonas", "Keiko", "Liam",
	"Maya", "Nikhil", "Olga", "Pablo", "Quinn", "Rosa", "Samir", "Tara", "Umar", "Vera", "Wes", "Yuki"}

type generator struct{ r splitmix }

// episode is one piece of news told in a session.
type episode struct {
	speaker int // 0 or 1
	topic   *topic
	object  string
	detail  string
	follow  int // 0: the news itself; n > 0: the n-th follow-up of an arc
	session int
	// filled while writing the session:
	news, reply string // turn ids
	caption     int    // index into topic.captions, -1 without an image
	at          time.Time
}

func fill(s string, kv ...string) string {
	return strings.NewReplacer(kv...).Replace(s)
}

func (g *generator) conversation(i int) Conversation {
	r := &g.r
	p := r.perm(len(names))
	c := Conversation{ID: fmt.Sprintf("syn%02d", i+1), Speakers: [2]string{names[p[0]], names[p[1]]}}

	// Sessions: every 3 to 20 days from a start in 2022-2023.
	at := time.Date(2022, 1, 3, 0, 0, 0, 0, time.UTC).AddDate(0, 0, r.intn(500))
	n := 22 + r.intn(5)
	for s := 0; s < n; s++ {
		at = at.AddDate(0, 0, 3+r.intn(18))
		start := at.Add(time.Duration(8+r.intn(14))*time.Hour + time.Duration(r.intn(60))*time.Minute)
		c.Sessions = append(c.Sessions, Session{ID: fmt.Sprintf("session_%d", s+1), Time: start})
	}

	// News: four topics both friends have, four each of their own; one
	// to three pieces of news per topic, or an arc of three sessions.
	tp := r.perm(len(topics))
	var eps []*episode
	used := map[string]bool{} // objects and details are not repeated within a conversation
	fresh := func(xs []string) string {
		for k := 0; k < 50; k++ {
			if x := r.pick(xs); !used[x] {
				used[x] = true
				return x
			}
		}
		return r.pick(xs)
	}
	for sp := 0; sp < 2; sp++ {
		mine := append(slices.Clone(tp[:4]), tp[4+4*sp:8+4*sp]...)
		for _, ti := range mine {
			t := &topics[ti]
			if len(t.follow) > 0 {
				sessions := r.perm(n)[:3]
				slices.Sort(sessions)
				o, d := fresh(t.objects), fresh(t.details)
				for k, s := range sessions {
					eps = append(eps, &episode{speaker: sp, topic: t, object: o, detail: d, follow: k, session: s})
				}
				continue
			}
			for k := 1 + r.intn(3); k > 0; k-- {
				eps = append(eps, &episode{speaker: sp, topic: t, object: fresh(t.objects), detail: fresh(t.details), session: r.intn(n)})
			}
		}
	}

	for s := range c.Sessions {
		g.session(&c, s, eps)
	}
	g.questions(&c, eps)
	return c
}

// session writes session s: greetings, its news with small talk between,
// goodbyes.
func (g *generator) session(c *Conversation, s int, eps []*episode) {
	r := &g.r
	ses := &c.Sessions[s]
	say := func(sp int, text, caption string) string {
		// {x} and {y} both name the one spoken to.
		id := fmt.Sprintf("D%d:%d", s+1, len(ses.Turns)+1)
		to := c.Speakers[1-sp]
		ses.Turns = append(ses.Turns, Turn{ID: id, Speaker: c.Speakers[sp], Text: fill(text, "{x}", to, "{y}", to), Caption: caption})
		return id
	}
	chat := func() {
		sp := r.intn(2)
		pair := chatter[r.intn(len(chatter))]
		say(sp, pair[0], "")
		say(1-sp, pair[1], "")
	}
	first := r.intn(2)
	say(first, r.pick(greetings), "")
	say(1-first, r.pick(answers), "")
	for j := 1 + r.intn(2); j > 0; j-- {
		chat()
	}
	var here []*episode
	for _, e := range eps {
		if e.session == s {
			here = append(here, e)
		}
	}
	for _, k := range r.perm(len(here)) {
		e := here[k]
		t := e.topic
		sp := e.speaker
		e.at, e.caption = ses.Time, -1
		o := []string{"{o}", e.object, "{d}", e.detail}
		if e.follow > 0 {
			e.news = say(sp, fill(t.follow[r.intn(len(t.follow))], o...), "")
			say(1-sp, r.pick(reactions), "")
		} else {
			caption := ""
			if len(t.captions) > 0 && r.intn(5) < 2 {
				e.caption = r.intn(len(t.captions))
				caption = fill(t.captions[e.caption], o...)
			}
			e.news = say(sp, fill(r.pick(t.stmt), o...), caption)
			say(1-sp, fill(r.pick(t.ask), o...), "")
			e.reply = say(sp, fill(r.pick(t.reply), o...), "")
			say(1-sp, r.pick(reactions), "")
		}
		for j := 1 + r.intn(3); j > 0; j-- {
			chat()
		}
	}
	last := r.intn(2)
	say(last, r.pick(closings), "")
	if r.intn(2) == 0 {
		say(1-last, r.pick(closings), "")
	}
}

// questions asks two questions of each piece of news and one of each
// speaker's news spread over sessions.
func (g *generator) questions(c *Conversation, eps []*episode) {
	r := &g.r
	asked := map[string]bool{}
	ask := func(typ, tmpl string, e *episode, evidence ...string) {
		q := fill(tmpl, "{s}", c.Speakers[e.speaker], "{o}", e.object, "{m}", e.at.Format("January 2006"))
		if !asked[q] { // the same words about other news of the same kind
			asked[q] = true
			c.Questions = append(c.Questions, Question{Text: q, Type: typ, Evidence: evidence})
		}
	}
	// A question that does not name the object is answered by any such
	// news of the speaker (or the reply to it).
	answers := func(tmpl string, e *episode, reply bool) []string {
		var ev []string
		for _, o := range eps {
			if o == e || !strings.Contains(tmpl, "{o}") && o.speaker == e.speaker && o.topic == e.topic && o.follow == 0 {
				if reply {
					ev = append(ev, o.reply)
				} else {
					ev = append(ev, o.news)
				}
			}
		}
		return ev
	}
	// News in order of telling, so that questions come in a stable order.
	slices.SortStableFunc(eps, func(a, b *episode) int { return strings.Compare(turnKey(a.news), turnKey(b.news)) })
	for _, e := range eps {
		if e.follow > 0 || e.news == "" {
			continue
		}
		t := e.topic
		shared := false
		for _, o := range eps {
			shared = shared || o.speaker != e.speaker && o.topic == t
		}
		kinds := []string{"single-hop", "reply", "temporal"}
		p := r.perm(len(kinds))
		two := []string{kinds[p[0]], kinds[p[1]]}
		if shared {
			two = []string{"speaker", []string{"reply", "temporal"}[r.intn(2)]}
		}
		for _, kind := range two {
			switch kind {
			case "speaker":
				q := r.pick(t.single)
				ask(kind, q, e, answers(q, e, false)...)
			case "single-hop":
				if e.caption >= 0 {
					ask(kind, t.captionQ[e.caption], e, e.news)
				} else {
					q := r.pick(t.single)
					ask(kind, q, e, answers(q, e, false)...)
				}
			case "reply":
				q := r.pick(t.replyQ)
				ask(kind, q, e, answers(q, e, true)...)
			case "temporal":
				if len(t.month) > 0 && (len(t.when) == 0 || r.intn(2) == 0) {
					// Every such news of the speaker in that month answers.
					var ev []string
					for _, o := range eps {
						if o.speaker == e.speaker && o.topic == t && o.follow == 0 && o.at.Year() == e.at.Year() && o.at.Month() == e.at.Month() {
							ev = append(ev, o.news)
						}
					}
					ask(kind, r.pick(t.month), e, ev...)
				} else if len(t.when) > 0 {
					ask(kind, r.pick(t.when), e, e.news)
				} else {
					q := r.pick(t.single)
					ask("single-hop", q, e, answers(q, e, false)...)
				}
			}
		}
	}
	// News spread over sessions: an arc, or the same topic told twice.
	for sp := 0; sp < 2; sp++ {
		for ti := range topics {
			t := &topics[ti]
			var ev []string
			var head *episode
			for _, e := range eps {
				if e.speaker == sp && e.topic == t {
					ev = append(ev, e.news)
					if head == nil {
						head = e
					}
				}
			}
			if len(ev) >= 2 && len(t.multi) > 0 {
				ask("multi-session", r.pick(t.multi), head, ev...)
			}
		}
	}
}

// turnKey orders turn ids "D<session>:<turn>" numerically.
func turnKey(id string) string {
	var s, t int
	fmt.Sscanf(id, "D%d:%d", &s, &t)
	return fmt.Sprintf("%04d:%04d", s, t)
}
