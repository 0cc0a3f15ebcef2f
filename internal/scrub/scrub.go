// Package scrub redacts secrets from text before it is written to a prompt
// file or sent to an agent.
//
// A Scrubber finds secrets with the rules of gitleaks, the reference secret
// scanner (its default rule set, imported at build time: gitleaks.go), with
// this package's own rules for what gitleaks leaves out (whole PEM
// private-key blocks of any shape, the AWS, OpenAI, Anthropic and Slack keys
// of shapes gitleaks does not match, passwords in URLs, secret-looking
// assignments, Authorization headers, Azure connection-string keys, .netrc
// passwords: rules.go), with the user's extra rules, and by the exact
// values of secret-looking environment variables. Base64, hex and
// percent-encoded text is decoded, as gitleaks does, and a secret found in
// the decoded text redacts the encoded text. A secret value found once (of
// MinEnvValueLen bytes or more) is redacted wherever else it appears in the
// text.
//
// Each secret is replaced by the marker [REDACTED:<rule>], where rule is a
// gitleaks rule id or this package's rule name; matches that overlap are
// merged into one marker named after the highest-priority rule among them
// (rules for a format before rules for a context, see builtinRules; the
// user's rules, then environment values, then gitleaks' generic rule).
//
// Redaction is idempotent: redacting the output again changes nothing and
// counts nothing. Existing markers are left alone, so text that was redacted
// earlier (a history file, say) passes through unchanged.
//
// Git commit hashes, sha256 digests, go.sum hashes and UUIDs are not secrets
// and survive, as they do in gitleaks, unless a key name says otherwise
// (api_key: <40 hex digits> is a secret).
package scrub

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/runner-cli/runner/internal/lazyregexp"
)

// Options configures a Scrubber. The zero value disables redaction; the
// configuration layer's default is Enabled = true.
type Options struct {
	// Enabled turns redaction on. When false, Redact returns its input.
	Enabled bool
	// Extra rules run after the built-in ones, over the whole text.
	Extra []UserRule
	// Allow lists literal strings that are never redacted: a match that lies
	// entirely inside an occurrence of an allow-listed string is kept.
	Allow []string
	// Environ is an os.Environ()-style list. The value of every variable whose
	// name looks secret (see SecretEnvName) and is at least MinEnvValueLen
	// bytes long is redacted wherever it appears, under the rule name
	// "env:<NAME>" (for example [REDACTED:env:GITHUB_TOKEN]).
	Environ []string
}

// UserRule is a rule from the configuration. Name must consist of letters,
// digits, '.', '_' and '-' (at most 64, starting with a letter or digit) and
// must not repeat a built-in or another extra rule's name. Regex uses Go's RE2
// syntax; if it has a capture group named "secret", only that group is
// redacted, otherwise the whole match is.
type UserRule struct {
	Name  string
	Regex string
}

// MinEnvValueLen is the shortest environment value Redact looks for, and the
// shortest secret it looks for elsewhere in a text once a rule has found it;
// shorter values are too likely to occur by chance.
const MinEnvValueLen = 8

// maxPasses bounds the redaction passes of one Redact call. A pass is repeated
// only when the previous one changed the text, and every changing pass removes
// unredacted bytes or markers, so the bound is never reached in practice.
const maxPasses = 64

const markerPrefix = "[REDACTED:"

// markerRE recognises a redaction marker at the start of a string. Rule and
// environment names are restricted so that every marker this package writes
// matches it.
var markerRE = lazyregexp.New(`^\[REDACTED:[A-Za-z0-9_.:-]{1,200}\]`)

var (
	userRuleNameRE = lazyregexp.New(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)
	envNameRE      = lazyregexp.New(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)
)

// Scrubber redacts secrets. It is safe for concurrent use.
type Scrubber struct {
	enabled bool
	rules   []*rule  // built-in rules, then extra rules
	labels  []string // one per rule, then one per env secret
	// prio orders the labels for merged redactions: the rules, then the
	// environment values, then gitleaks' generic-api-key, which names what
	// it finds least precisely.
	prio  []int
	env   []string // secret environment values, longest first
	allow []string
	index *needleIndex
}

type span struct {
	start, end int
	rule       int // index into labels; lower wins when spans merge
	// match is where the rule matched, around the span; findDecoded needs
	// it. Zero for the other spans.
	match [2]int
}

// New compiles the extra rules and collects the secret environment values.
// An error names the offending rule and says what is wrong with it.
func New(o Options) (*Scrubber, error) {
	builtin := builtinRules()
	s := &Scrubber{
		enabled: o.Enabled,
		rules:   slices.Clone(builtin),
		index:   builtinIndex(),
	}
	used := make(map[string]bool)
	for _, r := range builtin {
		used[r.name] = true
	}
	for i, u := range o.Extra {
		r, err := compileUserRule(i, u)
		if err != nil {
			return nil, err
		}
		if used[r.name] {
			return nil, fmt.Errorf("scrub rule %q: the name is already used by another rule", u.Name)
		}
		used[r.name] = true
		s.rules = append(s.rules, r)
	}
	for _, r := range s.rules {
		s.labels = append(s.labels, r.name)
	}
	for _, e := range envSecrets(o.Environ) {
		s.env = append(s.env, e.value)
		s.labels = append(s.labels, "env:"+e.name)
	}
	s.prio = make([]int, len(s.labels))
	for i := range s.prio {
		s.prio[i] = i
		if i < len(s.rules) && s.rules[i].name == "generic-api-key" {
			s.prio[i] = len(s.labels) + i
		}
	}
	for _, a := range o.Allow {
		if a != "" && !slices.Contains(s.allow, a) {
			s.allow = append(s.allow, a)
		}
	}
	return s, nil
}

func compileUserRule(i int, u UserRule) (*rule, error) {
	if u.Name == "" {
		return nil, fmt.Errorf("scrub rule #%d: the name is empty", i+1)
	}
	if !userRuleNameRE.MatchString(u.Name) {
		return nil, fmt.Errorf("scrub rule %q: the name must be 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit", u.Name)
	}
	if u.Regex == "" {
		return nil, fmt.Errorf("scrub rule %q: the regex is empty", u.Name)
	}
	re, err := regexp.Compile(u.Regex)
	if err != nil {
		return nil, fmt.Errorf("scrub rule %q: compile regex: %w", u.Name, err)
	}
	if re.MatchString("") {
		return nil, fmt.Errorf("scrub rule %q: regex %q matches the empty string", u.Name, u.Regex)
	}
	r := &rule{name: u.Name, pattern: u.Regex, user: true}
	if g := re.SubexpIndex("secret"); g > 0 {
		r.group = g
	}
	// A user rule runs over the whole text.
	r.shapeOnce.Do(func() {})
	r.once.Do(func() { r.m = &matcher{re: re} })
	return r, nil
}

// SecretEnvName reports whether an environment variable's value is treated as
// a secret: its name ends in _TOKEN, _KEY or _SECRET, or contains PASSWORD or
// PASSWD (case-insensitively), and does not contain PUBLIC or PUBLISHABLE.
func SecretEnvName(name string) bool {
	u := strings.ToUpper(name)
	if strings.Contains(u, "PUBLIC") || strings.Contains(u, "PUBLISHABLE") {
		return false
	}
	return strings.HasSuffix(u, "_TOKEN") || strings.HasSuffix(u, "_KEY") || strings.HasSuffix(u, "_SECRET") ||
		strings.Contains(u, "PASSWORD") || strings.Contains(u, "PASSWD")
}

type envSecret struct{ name, value string }

// envSecrets picks the secret variables out of environ, ordered longest value
// first (then by name); a value shared by several variables is reported under
// the first name in that order.
func envSecrets(environ []string) []envSecret {
	var list []envSecret
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || len(value) < MinEnvValueLen || !envNameRE.MatchString(name) || !SecretEnvName(name) {
			continue
		}
		if plainNumber(value) && !isPasswordName(strings.ToUpper(name)) {
			// MAX_TOKENS=4096000000: a limit, not a secret, and redacting
			// it would redact the number wherever it appears.
			continue
		}
		list = append(list, envSecret{name, value})
	}
	slices.SortFunc(list, func(a, b envSecret) int {
		if c := cmp.Compare(len(b.value), len(a.value)); c != 0 {
			return c
		}
		return cmp.Compare(a.name, b.name)
	})
	return slices.CompactFunc(list, func(a, b envSecret) bool { return a.value == b.value })
}

// Redact returns text with every secret replaced by [REDACTED:<rule>], and
// the number of redactions per rule name. A disabled (or nil) Scrubber
// returns text unchanged and an empty map.
func (s *Scrubber) Redact(text string) (string, map[string]int) {
	counts := make(map[string]int)
	if s == nil || !s.enabled || text == "" {
		return text, counts
	}
	// A replacement can create a new match (a rule anchored at a word
	// boundary now follows the marker's ']'), so repeat until nothing
	// changes; that makes the result idempotent.
	// A later pass looks only near the markers the pass before it wrote:
	// elsewhere the text is what the previous pass saw.
	var created, fresh []span
	for pass := range maxPasses {
		if pass > 0 && len(fresh) == 0 {
			break
		}
		out, now, wrote := s.redactOnce(text, counts, created, fresh, pass == 0)
		text, created, fresh = out, now, wrote
	}
	return text, counts
}

// redactOnce replaces the matches in text by markers and adds them to
// counts. created lists the markers earlier passes of the same Redact call
// wrote into text; a marker that this pass absorbs into a larger redaction is
// taken out of counts again, so that counts match the markers in the result.
// Unless all is set, it looks only near the markers in near (see find). It
// returns the new text, the markers created so far in its coordinates, and
// the markers it wrote.
func (s *Scrubber) redactOnce(text string, counts map[string]int, created, near []span, all bool) (string, []span, []span) {
	markers := findMarkers(text)
	if !all {
		near = nearLines(text, near)
	}
	spans := s.find(text, markers, near, all)
	if len(spans) == 0 {
		return text, created, nil
	}
	spans = s.filter(text, markers, spans)
	if len(spans) == 0 {
		return text, created, nil
	}
	spans = merge(spans, s.prio)
	var b strings.Builder
	b.Grow(len(text))
	var now, wrote []span
	last, c := 0, 0
	for _, sp := range spans {
		for ; c < len(created) && created[c].start < sp.start; c++ {
			shift := b.Len() + created[c].start - last
			now = append(now, span{start: shift, end: shift + created[c].end - created[c].start, rule: created[c].rule})
		}
		for ; c < len(created) && created[c].end <= sp.end; c++ {
			label := s.labels[created[c].rule]
			if counts[label]--; counts[label] == 0 {
				delete(counts, label)
			}
		}
		label := s.labels[sp.rule]
		b.WriteString(text[last:sp.start])
		now = append(now, span{start: b.Len(), end: b.Len() + len(markerPrefix) + len(label) + 1, rule: sp.rule})
		wrote = append(wrote, now[len(now)-1])
		b.WriteString(markerPrefix)
		b.WriteString(label)
		b.WriteByte(']')
		counts[label]++
		last = sp.end
	}
	for ; c < len(created); c++ {
		shift := b.Len() + created[c].start - last
		now = append(now, span{start: shift, end: shift + created[c].end - created[c].start, rule: created[c].rule})
	}
	b.WriteString(text[last:])
	return b.String(), now, wrote
}

// find collects the matches of every rule and environment value in text
// and in its decoded forms (see findDecoded).
func (s *Scrubber) find(text string, markers, near []span, all bool) []span {
	spans := s.findPlain(text, markers, near, all)
	return append(spans, s.findDecoded(text, markers)...)
}

// findPlain collects the matches of every rule and environment value.
// markers are the redaction markers in text: the needle scan skips them.
// Unless all is set, a rule whose matches span a bounded number of lines is
// tried only at starts within that many lines of the lines in near: a later
// pass needs to look only where the previous one changed the text.
func (s *Scrubber) findPlain(text string, markers, near []span, all bool) []span {
	var spans []span
	h := s.index.scan(text, markers)
	defer h.release()
	var secrets []found
	var lines []int
	windows := map[int][]span{}
	values := map[string]int{} // secret value -> rule, for its other occurrences
	for i, r := range s.rules {
		var anchors []int
		var reqs [][]int
		var within []span
		if i < len(h.keyword) {
			if !h.keyword[i] {
				continue
			}
			anchors, reqs = h.anchors[i], h.req[i]
			if len(anchors) == 0 && s.index.anchors[i] > 0 {
				continue
			}
			if k := r.shape().maxNL; !all && len(anchors) > 0 && k >= 0 {
				if lines == nil {
					lines = lineStarts(text)
				}
				if within = windows[k]; within == nil {
					within = widen(text, lines, near, k)
					windows[k] = within
				}
			}
		}
		secrets = r.matches(text, anchors, reqs, within, secrets[:0])
		for _, f := range secrets {
			spans = append(spans, span{f.start, f.end, i, [2]int{f.mStart, f.mEnd}})
			if v := text[f.start:f.end]; len(v) >= MinEnvValueLen {
				if _, ok := values[v]; !ok {
					values[v] = i
				}
			}
		}
	}
	spans = appendAllOccurrences(spans, text, values)
	for k, v := range s.env {
		spans = appendOccurrences(spans, text, v, len(s.rules)+k)
	}
	return spans
}

// lineStarts returns the offset of every line of text.
func lineStarts(text string) []int {
	starts := []int{0}
	for i := 0; ; {
		j := strings.IndexByte(text[i:], '\n')
		if j < 0 {
			return starts
		}
		i += j + 1
		starts = append(starts, i)
	}
}

// nearLines returns the spans of the whole lines that hold the spans in
// near, merged, in order.
func nearLines(text string, near []span) []span {
	var out []span
	for _, sp := range near {
		start := strings.LastIndexByte(text[:sp.start], '\n') + 1
		end := len(text)
		if i := strings.IndexByte(text[sp.end:], '\n'); i >= 0 {
			end = sp.end + i
		}
		if n := len(out); n > 0 && start <= out[n-1].end+1 {
			out[n-1].end = max(out[n-1].end, end)
			continue
		}
		out = append(out, span{start: start, end: end})
	}
	return out
}

// widen extends the line spans in near by k lines on each side; lines are
// the offsets of text's lines.
func widen(text string, lines []int, near []span, k int) []span {
	out := []span{}
	for _, sp := range near {
		first := sort.SearchInts(lines, sp.start+1) - 1 // the line holding sp.start
		last := sort.SearchInts(lines, sp.end+1) - 1
		start := lines[max(first-k, 0)]
		end := len(text)
		if last+k+1 < len(lines) {
			end = lines[last+k+1]
		}
		if n := len(out); n > 0 && start <= out[n-1].end {
			out[n-1].end = max(out[n-1].end, end)
			continue
		}
		out = append(out, span{start: start, end: end})
	}
	return out
}

// appendAllOccurrences adds a span for every occurrence in text of every
// value (of MinEnvValueLen bytes or more) in values, under the value's
// rule. With many values, one pass over text looks them up by their first
// bytes instead of searching for each.
func appendAllOccurrences(spans []span, text string, values map[string]int) []span {
	if len(values) <= 8 {
		for v, rule := range values {
			spans = appendOccurrences(spans, text, v, rule)
		}
		return spans
	}
	var first [1 << 10]uint64 // bit hash3 of a value's first three bytes
	byPrefix := make(map[uint64][]string, len(values))
	for v := range values {
		h := hash3(uint32(v[0])<<16 | uint32(v[1])<<8 | uint32(v[2]))
		first[h>>6] |= 1 << (h & 63)
		p := binary.LittleEndian.Uint64([]byte(v[:8]))
		byPrefix[p] = append(byPrefix[p], v)
	}
	for i := 0; i+MinEnvValueLen <= len(text); i++ {
		h := hash3(uint32(text[i])<<16 | uint32(text[i+1])<<8 | uint32(text[i+2]))
		if first[h>>6]&(1<<(h&63)) == 0 {
			continue
		}
		for _, v := range byPrefix[binary.LittleEndian.Uint64([]byte(text[i:i+8]))] {
			if strings.HasPrefix(text[i:], v) {
				spans = append(spans, span{start: i, end: i + len(v), rule: values[v]})
			}
		}
	}
	return spans
}

// appendOccurrences adds a span for every occurrence of v in text.
func appendOccurrences(spans []span, text, v string, rule int) []span {
	for i := 0; ; {
		j := strings.Index(text[i:], v)
		if j < 0 {
			return spans
		}
		i += j
		spans = append(spans, span{start: i, end: i + len(v), rule: rule})
		i += len(v)
	}
}

// filter drops the matches that lie inside an allow-listed string or inside
// an existing marker, and widens a match that cuts into a marker so that the
// marker is replaced whole.
func (s *Scrubber) filter(text string, markers, spans []span) []span {
	allowed := s.findAllowed(text)
	out := spans[:0]
	for _, sp := range spans {
		if allowed.covers(sp) {
			continue
		}
		k := sort.Search(len(markers), func(k int) bool { return markers[k].end > sp.start })
		if k < len(markers) && markers[k].start <= sp.start && sp.end <= markers[k].end {
			continue
		}
		for ; k < len(markers) && markers[k].start < sp.end; k++ {
			sp.start = min(sp.start, markers[k].start)
			sp.end = max(sp.end, markers[k].end)
		}
		out = append(out, sp)
	}
	return out
}

// findMarkers returns the redaction markers in text, in order.
func findMarkers(text string) []span {
	var out []span
	for i := 0; ; {
		j := strings.Index(text[i:], markerPrefix)
		if j < 0 {
			return out
		}
		i += j
		if m := markerRE.FindStringIndex(text[i:]); m != nil {
			out = append(out, span{start: i, end: i + m[1]})
			i += m[1]
		} else {
			i++
		}
	}
}

// findAllowed returns every occurrence of every allow-listed string,
// overlapping occurrences included.
func (s *Scrubber) findAllowed(text string) intervals {
	var out intervals
	for _, a := range s.allow {
		for i := 0; ; {
			j := strings.Index(text[i:], a)
			if j < 0 {
				break
			}
			i += j
			out.spans = append(out.spans, span{start: i, end: i + len(a)})
			i++
		}
	}
	slices.SortFunc(out.spans, func(a, b span) int { return cmp.Compare(a.start, b.start) })
	out.maxEnd = make([]int, len(out.spans))
	for i, sp := range out.spans {
		out.maxEnd[i] = sp.end
		if i > 0 {
			out.maxEnd[i] = max(sp.end, out.maxEnd[i-1])
		}
	}
	return out
}

// intervals are possibly overlapping spans sorted by start, with the
// running maximum of their ends.
type intervals struct {
	spans  []span
	maxEnd []int
}

// covers reports whether one of the intervals contains sp entirely.
func (iv intervals) covers(sp span) bool {
	// The intervals starting at or before sp.start; one of them reaches
	// sp.end exactly when the furthest end among them does.
	k := sort.Search(len(iv.spans), func(k int) bool { return iv.spans[k].start > sp.start })
	return k > 0 && iv.maxEnd[k-1] >= sp.end
}

// merge sorts spans and joins the overlapping ones; a joined span takes the
// rule of highest priority (lowest prio) among its parts.
func merge(spans []span, prio []int) []span {
	slices.SortFunc(spans, func(a, b span) int {
		if c := cmp.Compare(a.start, b.start); c != 0 {
			return c
		}
		return cmp.Compare(b.end, a.end)
	})
	out := spans[:1]
	for _, sp := range spans[1:] {
		cur := &out[len(out)-1]
		if sp.start < cur.end {
			cur.end = max(cur.end, sp.end)
			if prio[sp.rule] < prio[cur.rule] {
				cur.rule = sp.rule
			}
			continue
		}
		out = append(out, sp)
	}
	return out
}
