package config

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/runner-cli/runner/internal/fsutil"
)

// Keys each table accepts, for unknown-key checks and suggestions.
var (
	rootKeys     = []string{"executor", "guard", "prompt", "loop", "scrub"}
	executorKeys = []string{"preset", "bin", "args", "command", "timeout", "idle_timeout", "kill_grace", "output_limit", "env", "env_drop", "rate_limit_patterns", "prices"}
	pricesKeys   = []string{"input", "cached_input", "output"}
	guardKeys    = []string{"name", "run", "timeout", "output_limit"}
	promptKeys   = []string{"budget"}
	loopKeys     = []string{"max_iterations", "max_attempts", "on_blocked", "max_wait", "max_cost_usd", "max_tokens", "max_consecutive_errors", "rate_limit_backoff", "rate_limit_backoff_max", "keep_runs"}
	scrubKeys    = []string{"enabled", "rules", "allow"}
	scrubRuleKey = []string{"name", "regex"}
)

// tableKeys maps each table path to the keys it accepts; "did you mean"
// looks here for a key written in the wrong table.
var tableKeys = map[string][]string{
	"":         rootKeys,
	"executor": executorKeys,
	"guard":    guardKeys,
	"prompt":   promptKeys,
	"loop":     loopKeys,
	"scrub":    scrubKeys,
}

// decoder turns the generic TOML tree into a Config, collecting every
// problem instead of stopping at the first.
type decoder struct {
	file     string
	data     []byte
	lines    map[string]int // key path -> line, computed on first use
	set      map[string]bool
	problems []Problem
}

func newDecoder(file string, data []byte) *decoder {
	return &decoder{file: file, data: data, set: map[string]bool{}}
}

// line returns the line of path, or of its nearest ancestor the file
// mentions, or 0.
func (d *decoder) line(path string) int {
	if d.data == nil {
		return 0
	}
	if d.lines == nil {
		d.lines = keyLines(string(d.data))
	}
	for p := path; p != ""; p = parentPath(p) {
		if l, ok := d.lines[p]; ok {
			return l
		}
	}
	return 0
}

func (d *decoder) addf(path, format string, args ...any) {
	d.addAt(path, path, format, args...)
}

// addAt reports a problem with key path on the line of another key, for a
// key that is missing because of what another one says.
func (d *decoder) addAt(linePath, path, format string, args ...any) {
	d.problems = append(d.problems, Problem{File: d.file, Line: d.line(linePath), Key: path, Msg: fmt.Sprintf(format, args...)})
}

// unknown reports a key the table at parent does not accept.
func (d *decoder) unknown(parent, key string, known []string) {
	path := keyPath(parent, key)
	msg := fmt.Sprintf("unknown key %q", path)
	if s := suggest(key, known); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", keyPath(parent, s))
	} else if t := otherTable(key, parent); t != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", t)
	} else {
		msg += fmt.Sprintf("; known keys here: %s", strings.Join(known, ", "))
	}
	d.problems = append(d.problems, Problem{File: d.file, Line: d.line(path), Msg: msg})
}

// otherTable returns the full path of key in another table that accepts
// it, for a key written in the wrong place.
func otherTable(key, parent string) string {
	base := parent
	if i := strings.IndexAny(base, ".["); i >= 0 {
		base = base[:i]
	}
	names := make([]string, 0, len(tableKeys))
	for t := range tableKeys {
		names = append(names, t)
	}
	sort.Strings(names)
	for _, t := range names {
		if t == base || t == "" || t == "guard" || !slices.Contains(tableKeys[t], key) {
			continue
		}
		return t + "." + key
	}
	return ""
}

func (d *decoder) err() error {
	if len(d.problems) == 0 {
		return nil
	}
	sort.SliceStable(d.problems, func(i, j int) bool {
		li, lj := d.problems[i].Line, d.problems[j].Line
		if li == 0 || lj == 0 {
			return li != 0 && lj == 0
		}
		return li < lj
	})
	return &Error{Problems: d.problems}
}

// decode parses the TOML and fills a Config on top of the defaults. It
// returns false when the text is not TOML at all.
func (d *decoder) decode() (*Config, bool) {
	var root map[string]any
	if _, err := toml.Decode(string(d.data), &root); err != nil {
		p := Problem{File: d.file, Msg: err.Error()}
		var pe toml.ParseError
		if errors.As(err, &pe) {
			p.Msg = "invalid TOML: " + pe.Message
			// The byte offset is more exact than the reported line, which
			// is already the next one when the problem is a newline.
			if pe.Position.Line > 0 {
				p.Line, p.Column = fsutil.LineCol(d.data, pe.Position.Start)
			}
		}
		d.problems = append(d.problems, p)
		return nil, false
	}
	cfg := Default()
	for _, k := range sortedKeys(root) {
		v := root[k]
		path := keyPath("", k)
		switch k {
		case "executor":
			if t, ok := d.table(path, v); ok {
				d.executor(path, t, &cfg.Executor)
			}
		case "guard":
			cfg.Guards = d.guards(path, v)
		case "prompt":
			if t, ok := d.table(path, v); ok {
				d.prompt(path, t, &cfg.Prompt)
			}
		case "loop":
			if t, ok := d.table(path, v); ok {
				d.loop(path, t, &cfg.Loop)
			}
		case "scrub":
			if t, ok := d.table(path, v); ok {
				d.scrub(path, t, &cfg.Scrub)
			}
		default:
			d.unknown("", k, rootKeys)
		}
	}
	if !d.set["executor.args"] {
		cfg.Executor.Args = DefaultArgs(cfg.Executor.Preset)
	}
	return cfg, true
}

func (d *decoder) executor(path string, t map[string]any, e *Executor) {
	for _, k := range sortedKeys(t) {
		v, p := t[k], keyPath(path, k)
		d.set[p] = true
		switch k {
		case "preset":
			d.str(p, v, &e.Preset)
		case "bin":
			d.str(p, v, &e.Bin)
		case "args":
			d.strList(p, v, &e.Args)
		case "command":
			d.strList(p, v, &e.Command)
		case "timeout":
			d.duration(p, v, &e.Timeout)
		case "idle_timeout":
			d.duration(p, v, &e.IdleTimeout)
		case "kill_grace":
			d.duration(p, v, &e.KillGrace)
		case "output_limit":
			d.size(p, v, &e.OutputLimit)
		case "env":
			d.strMap(p, v, &e.Env)
		case "env_drop":
			d.strList(p, v, &e.EnvDrop)
		case "rate_limit_patterns":
			d.strList(p, v, &e.RateLimitPatterns)
		case "prices":
			if t, ok := d.table(p, v); ok {
				d.prices(p, t, &e.Prices)
			}
		default:
			delete(d.set, p)
			d.unknown(path, k, executorKeys)
		}
	}
}

func (d *decoder) prices(path string, t map[string]any, pr *Prices) {
	cachedSet := false
	for _, k := range sortedKeys(t) {
		v, p := t[k], keyPath(path, k)
		switch k {
		case "input":
			d.number(p, v, &pr.Input)
		case "cached_input":
			cachedSet = d.number(p, v, &pr.CachedInput)
		case "output":
			d.number(p, v, &pr.Output)
		default:
			d.unknown(path, k, pricesKeys)
		}
	}
	if !cachedSet {
		pr.CachedInput = pr.Input
	}
}

func (d *decoder) guards(path string, v any) []Guard {
	elems, ok := d.tables(path, v, `[[guard]]`)
	if !ok {
		return nil
	}
	guards := make([]Guard, 0, len(elems))
	for i, t := range elems {
		gp := indexPath(path, i)
		g := Guard{Timeout: Duration{DefaultGuardTimeout}, OutputLimit: DefaultGuardOutputLimit}
		for _, k := range sortedKeys(t) {
			v, p := t[k], keyPath(gp, k)
			switch k {
			case "name":
				d.str(p, v, &g.Name)
			case "run":
				d.str(p, v, &g.Run)
			case "timeout":
				d.duration(p, v, &g.Timeout)
			case "output_limit":
				d.size(p, v, &g.OutputLimit)
			default:
				d.unknown(gp, k, guardKeys)
			}
		}
		guards = append(guards, g)
	}
	return guards
}

func (d *decoder) prompt(path string, t map[string]any, pr *Prompt) {
	for _, k := range sortedKeys(t) {
		v, p := t[k], keyPath(path, k)
		switch k {
		case "budget":
			d.size(p, v, &pr.Budget)
		default:
			d.unknown(path, k, promptKeys)
		}
	}
}

func (d *decoder) loop(path string, t map[string]any, l *Loop) {
	for _, k := range sortedKeys(t) {
		v, p := t[k], keyPath(path, k)
		switch k {
		case "max_iterations":
			d.integer(p, v, &l.MaxIterations)
		case "max_attempts":
			d.integer(p, v, &l.MaxAttempts)
		case "on_blocked":
			d.str(p, v, &l.OnBlocked)
		case "max_wait":
			d.duration(p, v, &l.MaxWait)
		case "max_cost_usd":
			d.number(p, v, &l.MaxCostUSD)
		case "max_tokens":
			var n int
			if d.integer(p, v, &n) {
				l.MaxTokens = int64(n)
			}
		case "max_consecutive_errors":
			d.integer(p, v, &l.MaxConsecutiveErrors)
		case "rate_limit_backoff":
			d.duration(p, v, &l.RateLimitBackoff)
		case "rate_limit_backoff_max":
			d.duration(p, v, &l.RateLimitBackoffMax)
		case "keep_runs":
			d.integer(p, v, &l.KeepRuns)
		default:
			d.unknown(path, k, loopKeys)
		}
	}
}

func (d *decoder) scrub(path string, t map[string]any, s *Scrub) {
	for _, k := range sortedKeys(t) {
		v, p := t[k], keyPath(path, k)
		switch k {
		case "enabled":
			d.boolean(p, v, &s.Enabled)
		case "allow":
			d.strList(p, v, &s.Allow)
		case "rules":
			elems, ok := d.tables(p, v, `[[scrub.rules]]`)
			if !ok {
				continue
			}
			for i, rt := range elems {
				rp := indexPath(p, i)
				var r ScrubRule
				for _, rk := range sortedKeys(rt) {
					switch kp := keyPath(rp, rk); rk {
					case "name":
						d.str(kp, rt[rk], &r.Name)
					case "regex":
						d.str(kp, rt[rk], &r.Regex)
					default:
						d.unknown(rp, rk, scrubRuleKey)
					}
				}
				s.Rules = append(s.Rules, r)
			}
		default:
			d.unknown(path, k, scrubKeys)
		}
	}
}

// Typed readers. Each reports a wrong type and leaves *dst unchanged.

func (d *decoder) table(path string, v any) (map[string]any, bool) {
	t, ok := v.(map[string]any)
	if !ok {
		d.addf(path, "want a table ([%s]), got %s", path, describe(v))
	}
	return t, ok
}

// tables accepts an array of tables, written as [[name]] sections or as an
// array of inline tables.
func (d *decoder) tables(path string, v any, header string) ([]map[string]any, bool) {
	switch a := v.(type) {
	case []map[string]any:
		return a, true
	case []any:
		out := make([]map[string]any, 0, len(a))
		for i, e := range a {
			t, ok := e.(map[string]any)
			if !ok {
				d.addf(indexPath(path, i), "want a table, got %s", describe(e))
				return nil, false
			}
			out = append(out, t)
		}
		return out, true
	}
	d.addf(path, "want %s sections, got %s", header, describe(v))
	return nil, false
}

func (d *decoder) str(path string, v any, dst *string) bool {
	s, ok := v.(string)
	if !ok {
		d.addf(path, "want a string, got %s", describe(v))
		return false
	}
	*dst = s
	return true
}

func (d *decoder) strList(path string, v any, dst *[]string) bool {
	a, ok := v.([]any)
	if !ok {
		d.addf(path, `want an array of strings such as ["a", "b"], got %s`, describe(v))
		return false
	}
	out := make([]string, 0, len(a))
	for i, e := range a {
		s, ok := e.(string)
		if !ok {
			d.addf(indexPath(path, i), "want a string, got %s", describe(e))
			return false
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		out = nil
	}
	*dst = out
	return true
}

func (d *decoder) strMap(path string, v any, dst *map[string]string) bool {
	t, ok := v.(map[string]any)
	if !ok {
		d.addf(path, `want a table of strings such as { NAME = "value" }, got %s`, describe(v))
		return false
	}
	out := make(map[string]string, len(t))
	good := true
	for _, k := range sortedKeys(t) {
		s, ok := t[k].(string)
		if !ok {
			d.addf(keyPath(path, k), "want a string, got %s", describe(t[k]))
			good = false
			continue
		}
		out[k] = s
	}
	if len(out) == 0 {
		out = nil
	}
	*dst = out
	return good
}

func (d *decoder) integer(path string, v any, dst *int) bool {
	n, ok := v.(int64)
	if !ok {
		d.addf(path, "want an integer, got %s", describe(v))
		return false
	}
	if int64(int(n)) != n {
		d.addf(path, "%d is out of range", n)
		return false
	}
	*dst = int(n)
	return true
}

func (d *decoder) number(path string, v any, dst *float64) bool {
	switch n := v.(type) {
	case float64:
		*dst = n
	case int64:
		*dst = float64(n)
	default:
		d.addf(path, "want a number such as 25 or 12.5, got %s", describe(v))
		return false
	}
	return true
}

func (d *decoder) boolean(path string, v any, dst *bool) bool {
	b, ok := v.(bool)
	if !ok {
		d.addf(path, "want true or false, got %s", describe(v))
		return false
	}
	*dst = b
	return true
}

func (d *decoder) duration(path string, v any, dst *Duration) bool {
	s, ok := v.(string)
	if !ok {
		d.addf(path, `want a duration string in Go syntax such as "90s", "30m" or "1h30m", got %s`, describe(v))
		return false
	}
	var dur Duration
	if err := dur.UnmarshalText([]byte(s)); err != nil {
		d.addf(path, "%v", err)
		return false
	}
	*dst = dur
	return true
}

func (d *decoder) size(path string, v any, dst *Size) bool {
	var (
		sz  Size
		err error
	)
	switch x := v.(type) {
	case int64:
		if x < 0 {
			err = fmt.Errorf("invalid size %d: must not be negative", x)
		}
		sz = Size(x)
	case string:
		sz, err = ParseSize(x)
	default:
		err = fmt.Errorf(`want a size such as "40KiB", "8MiB", "100B" or a number of bytes, got %s`, describe(v))
	}
	if err != nil {
		d.addf(path, "%v", err)
		return false
	}
	*dst = sz
	return true
}

// describe names a TOML value's type (and the value, when short) for
// error messages.
func describe(v any) string {
	switch x := v.(type) {
	case string:
		if len(x) > 40 {
			return "a string"
		}
		return fmt.Sprintf("the string %q", x)
	case int64:
		return fmt.Sprintf("the integer %d", x)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Sprintf("the float %v", x)
		}
		return fmt.Sprintf("the float %g", x)
	case bool:
		return fmt.Sprintf("the boolean %t", x)
	case time.Time:
		return "a date-time"
	case map[string]any:
		return "a table"
	case []map[string]any:
		return "an array of tables"
	case []any:
		return "an array"
	case nil:
		return "nothing"
	}
	return fmt.Sprintf("a value of type %T", v)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
