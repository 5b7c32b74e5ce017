package runtime

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// Calibrated estimates. A model without a public tokenizer (Claude,
// Gemini, any model the table does not know) is counted with the
// conservative estimator, which is a fixed rule: about 1.8× OpenAI's
// counts on English, but a provider's own tokenizer may count more than
// it (or far less). Every call a turn sends over HTTP returns the
// provider's count of the prompt; the runtime keeps, per provider and
// model, the ratio of those counts to the estimator's count of the same
// requests over the last calibrationWindow calls, and a turn packs with
// the estimator scaled by that ratio plus CalibrationSafetyPercent
// (tokenizer.Counter.Calibrated). A request the provider refuses as too
// long teaches it too: the count the refusal states (or, when it states
// none, the limit) is a sample, so the turn fails with
// context_length_exceeded and its retry packs under the corrected ratio.
// Exact counters are never calibrated, and a calibrated count is labelled
// estimated (basis calibrated), never exact.

// CalibrationSafetyPercent is the margin a calibrated estimate adds on top
// of the learnt ratio: what covers a request whose mix of text tokenizes
// denser than the recent ones did.
const CalibrationSafetyPercent = 5

// calibrationWindow is how many recent calls a ratio is learnt from.
const calibrationWindow = 16

// calibrationFile is where the ratios are kept, under the state
// directory.
const calibrationFile = "token-calibration.json"

// Calibration is the ratio a count was calibrated with: the provider's
// reported prompt tokens per estimated token over its recent calls
// (Samples of them), and the margin added.
type Calibration struct {
	Samples       int     `json:"samples"`
	Ratio         float64 `json:"ratio"`
	SafetyPercent int     `json:"safety_percent"`
}

// calibrationSample is one call: the prompt tokens the provider reported
// and the estimator's count of the same request.
type calibrationSample struct {
	Reported  int `json:"reported"`
	Estimated int `json:"estimated"`
}

// calibrations are the runtime's ratios, by provider and model, kept in
// the state directory (path "" keeps them in memory). Each process reads
// the file once and writes it whole after every sample: with several
// processes, the last writer's window wins, which is still a recent one.
type calibrations struct {
	path string

	mu      sync.Mutex // protects the fields below
	loaded  bool
	m       map[calibrationKey][]calibrationSample
	version int // changes with every sample

	wmu     sync.Mutex // serializes writes of the file
	written int        // the version the file holds
}

type calibrationKey struct{ provider, model string }

// calibrationJSON is the file's form: entries sorted by provider and
// model.
type calibrationJSON struct {
	Version int                `json:"version"`
	Entries []calibrationEntry `json:"entries"`
}

type calibrationEntry struct {
	Provider string              `json:"provider"`
	Model    string              `json:"model"`
	Samples  []calibrationSample `json:"samples"`
}

// load reads the file once; a missing file is no calibration, a corrupt
// one is reported and replaced by the next sample.
func (c *calibrations) load() error {
	if c.loaded {
		return nil
	}
	c.loaded, c.m = true, map[calibrationKey][]calibrationSample{}
	if c.path == "" {
		return nil
	}
	data, err := os.ReadFile(c.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("runtime: token calibration: %w", err)
	}
	var f calibrationJSON
	if err := json.Unmarshal(data, &f); err != nil {
		return fmt.Errorf("runtime: token calibration %s: %w", c.path, err)
	}
	for _, e := range f.Entries {
		c.m[calibrationKey{e.Provider, e.Model}] = trimSamples(e.Samples)
	}
	return nil
}

func trimSamples(s []calibrationSample) []calibrationSample {
	s = slices.DeleteFunc(s, func(x calibrationSample) bool { return x.Reported <= 0 || x.Estimated <= 0 })
	return s[max(0, len(s)-calibrationWindow):]
}

// get returns the calibration of provider and model, or nil when no call
// taught one. An unreadable file counts as none (observe reports it).
func (c *calibrations) get(provider, model string) *Calibration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.load() != nil {
		return nil
	}
	s := c.m[calibrationKey{provider, model}]
	if len(s) == 0 {
		return nil
	}
	var rep, est int
	for _, x := range s {
		rep, est = rep+x.Reported, est+x.Estimated
	}
	return &Calibration{Samples: len(s), Ratio: float64(rep) / float64(est), SafetyPercent: CalibrationSafetyPercent}
}

// observe adds a sample (a call's reported prompt tokens against the
// estimator's count of its request) and writes the file.
func (c *calibrations) observe(provider, model string, reported, estimated int) error {
	if reported <= 0 || estimated <= 0 {
		return nil
	}
	c.mu.Lock()
	loadErr := c.load()
	k := calibrationKey{provider, model}
	c.m[k] = trimSamples(append(c.m[k], calibrationSample{reported, estimated}))
	c.version++
	if c.path == "" {
		c.mu.Unlock()
		return loadErr
	}
	snap := calibrationJSON{Version: 1}
	for k, s := range c.m {
		snap.Entries = append(snap.Entries, calibrationEntry{Provider: k.provider, Model: k.model, Samples: slices.Clone(s)})
	}
	version := c.version
	c.mu.Unlock()
	slices.SortFunc(snap.Entries, func(a, b calibrationEntry) int {
		return strings.Compare(a.Provider+"\x00"+a.Model, b.Provider+"\x00"+b.Model)
	})
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if version <= c.written {
		return nil // a later sample's write came first
	}
	data, err := json.MarshalIndent(snap, "", " ")
	if err == nil {
		err = os.MkdirAll(filepath.Dir(c.path), 0o755)
	}
	if err == nil {
		err = writeFileAtomic(c.path, data)
	}
	if err != nil {
		return fmt.Errorf("runtime: token calibration: %w", err)
	}
	c.written = version
	return loadErr
}

// writeFileAtomic replaces path with data: a reader sees the old file or
// the new one, never a part.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// Calibration returns the ratio a turn on provider would calibrate the
// estimator with for model ("" for the provider's default model), learnt
// from the prompt counts the provider reported, or nil when it has
// reported none yet.
func (r *Runtime) Calibration(provider, model string) *Calibration {
	return r.calibrations.get(provider, model)
}
