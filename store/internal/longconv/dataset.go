package longconv

import (
	"encoding/json"
	"fmt"
	"os"
	"time"
)

// Dataset is a set of long conversations with labelled questions.
type Dataset struct {
	Name          string         `json:"name"`
	Conversations []Conversation `json:"conversations"`
}

// Conversation is two speakers talking over many sessions.
type Conversation struct {
	ID        string     `json:"id"`
	Speakers  [2]string  `json:"speakers"`
	Sessions  []Session  `json:"sessions"`
	Questions []Question `json:"questions"`
}

// Session is one sitting, with the time it started.
type Session struct {
	ID    string    `json:"id"`
	Time  time.Time `json:"time"`
	Turns []Turn    `json:"turns"`
}

// Turn is one message. Caption describes an image shared with it.
type Turn struct {
	ID      string `json:"id"`
	Speaker string `json:"speaker"`
	Text    string `json:"text"`
	Caption string `json:"caption,omitempty"`
}

// Question is asked about a conversation; an answer is found when a
// search returns one of its evidence turns.
type Question struct {
	Text     string   `json:"q"`
	Type     string   `json:"type"`
	Evidence []string `json:"evidence"`
}

// Turns returns the turns of c in order.
func (c Conversation) Turns() []Turn {
	var out []Turn
	for _, s := range c.Sessions {
		out = append(out, s.Turns...)
	}
	return out
}

// Load reads a dataset written by [Save].
func Load(path string) (Dataset, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Dataset{}, err
	}
	var d Dataset
	if err := json.Unmarshal(b, &d); err != nil {
		return Dataset{}, fmt.Errorf("longconv: %s: %w", path, err)
	}
	return d, d.check()
}

// Marshal encodes d as indented JSON, one value per line where short.
func (d Dataset) Marshal() ([]byte, error) {
	b, err := json.MarshalIndent(d, "", " ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// check verifies that every evidence label names a turn.
func (d Dataset) check() error {
	for _, c := range d.Conversations {
		ids := map[string]bool{}
		for _, t := range c.Turns() {
			if ids[t.ID] {
				return fmt.Errorf("longconv: %s: turn %s twice", c.ID, t.ID)
			}
			ids[t.ID] = true
		}
		for _, q := range c.Questions {
			if len(q.Evidence) == 0 {
				return fmt.Errorf("longconv: %s: %q has no evidence", c.ID, q.Text)
			}
			for _, e := range q.Evidence {
				if !ids[e] {
					return fmt.Errorf("longconv: %s: %q: evidence %s is no turn", c.ID, q.Text, e)
				}
			}
		}
	}
	return nil
}
