package longconv

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// LoCoMo (Maharana et al., ACL 2024, github.com/snap-research/locomo) is
// ten very long conversations (about 600 turns over up to 35 sessions)
// with 1,986 questions labelled with their evidence turns. Its categories:
var locomoTypes = map[int]string{1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}

// LoadLoCoMo reads LoCoMo from path: the released locomo10.json (a list of
// samples) or a directory of per-conversation JSON files (the
// locomo10_v2 layout of the repository's data archive). Questions without
// a usable evidence label are skipped; labels are read leniently ("D8:6;
// D9:17", "D30:05").
func LoadLoCoMo(path string) (Dataset, error) {
	var raws []map[string]json.RawMessage
	fi, err := os.Stat(path)
	if err != nil {
		return Dataset{}, err
	}
	if fi.IsDir() {
		files, _ := filepath.Glob(filepath.Join(path, "*.json"))
		slices.Sort(files)
		for _, f := range files {
			var r map[string]json.RawMessage
			if err := readJSON(f, &r); err != nil {
				return Dataset{}, err
			}
			r["sample_id"], _ = json.Marshal(strings.TrimSuffix(filepath.Base(f), ".json"))
			raws = append(raws, r)
		}
	} else {
		var samples []map[string]json.RawMessage
		if err := readJSON(path, &samples); err != nil {
			return Dataset{}, err
		}
		for _, s := range samples {
			var r map[string]json.RawMessage
			if err := json.Unmarshal(s["conversation"], &r); err != nil {
				return Dataset{}, fmt.Errorf("longconv: %s: conversation: %w", path, err)
			}
			r["qa"], r["sample_id"] = s["qa"], s["sample_id"]
			raws = append(raws, r)
		}
	}
	d := Dataset{Name: "locomo"}
	for _, r := range raws {
		c, err := locomoConversation(r)
		if err != nil {
			return Dataset{}, fmt.Errorf("longconv: %s: %w", path, err)
		}
		d.Conversations = append(d.Conversations, c)
	}
	if len(d.Conversations) == 0 {
		return Dataset{}, fmt.Errorf("longconv: %s: no conversations", path)
	}
	return d, d.check()
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("longconv: %s: %w", path, err)
	}
	return nil
}

var (
	sessionKey = regexp.MustCompile(`^session_(\d+)$`)
	evidenceRE = regexp.MustCompile(`D:?(\d+):0*(\d+)`)
)

func locomoConversation(r map[string]json.RawMessage) (Conversation, error) {
	var c Conversation
	_ = json.Unmarshal(r["sample_id"], &c.ID)
	if err := json.Unmarshal(r["speaker_a"], &c.Speakers[0]); err != nil {
		return c, fmt.Errorf("speaker_a: %w", err)
	}
	if err := json.Unmarshal(r["speaker_b"], &c.Speakers[1]); err != nil {
		return c, fmt.Errorf("speaker_b: %w", err)
	}
	var nums []int
	for k := range r {
		if m := sessionKey.FindStringSubmatch(k); m != nil {
			n, _ := strconv.Atoi(m[1])
			nums = append(nums, n)
		}
	}
	slices.Sort(nums)
	ids := map[string]string{} // "session:turn" → turn id
	for _, n := range nums {
		var when string
		_ = json.Unmarshal(r[fmt.Sprintf("session_%d_date_time", n)], &when)
		at, err := time.Parse("3:04 pm on 2 January, 2006", when)
		if err != nil {
			return c, fmt.Errorf("session %d: date %q: %w", n, when, err)
		}
		var turns []struct {
			Speaker string `json:"speaker"`
			DiaID   string `json:"dia_id"`
			Text    string `json:"text"`
			Caption string `json:"blip_caption"`
		}
		if err := json.Unmarshal(r[fmt.Sprintf("session_%d", n)], &turns); err != nil {
			return c, fmt.Errorf("session %d: %w", n, err)
		}
		s := Session{ID: fmt.Sprintf("session_%d", n), Time: at}
		for _, t := range turns {
			s.Turns = append(s.Turns, Turn{ID: t.DiaID, Speaker: t.Speaker, Text: t.Text, Caption: t.Caption})
			if m := evidenceRE.FindStringSubmatch(t.DiaID); m != nil {
				ids[m[1]+":"+m[2]] = t.DiaID
			}
		}
		c.Sessions = append(c.Sessions, s)
	}
	var qa []struct {
		Question string   `json:"question"`
		Category int      `json:"category"`
		Evidence []string `json:"evidence"`
	}
	if err := json.Unmarshal(r["qa"], &qa); err != nil {
		return c, fmt.Errorf("qa: %w", err)
	}
	for _, q := range qa {
		var ev []string
		for _, e := range q.Evidence {
			for _, m := range evidenceRE.FindAllStringSubmatch(e, -1) {
				if id, ok := ids[m[1]+":"+m[2]]; ok && !slices.Contains(ev, id) {
					ev = append(ev, id)
				}
			}
		}
		if len(ev) > 0 {
			c.Questions = append(c.Questions, Question{Text: q.Question, Type: locomoTypes[q.Category], Evidence: ev})
		}
	}
	return c, nil
}
