// Package scrub redacts secrets from text before it is written to a prompt
// file or sent to an agent.
//
// A Scrubber finds secrets with the built-in rules (DefaultRules: tokens of
// GitHub, GitLab, AWS, OpenAI, Anthropic, Slack, Google, Stripe, npm and
// others, whole PEM private-key blocks, JWTs, passwords inside URLs and
// secret-looking assignments), with the user's extra rules, and by the exact
// values of secret-looking environment variables. Each match is replaced by
// the marker [REDACTED:<rule>]; matches that overlap are merged into one marker
// named after the highest-priority rule among them.
//
// Redaction is idempotent: redacting the output again changes nothing and
// counts nothing. Existing markers are left alone, so text that was redacted
// earlier (a history file, say) passes through unchanged.
//
// Git commit hashes, sha256 digests, go.sum hashes and UUIDs are not secrets
// and are never redacted by the built-in rules: no rule matches bare
// hexadecimal or base64 of any length.
//
// The built-in rules are curated from gitleaks (MIT License, Copyright (c)
// 2019 Zachary Rice); rules.go carries the notice and lists the differences.
package scrub

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
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

// MinEnvValueLen is the shortest environment value Redact looks for; shorter
// values are too likely to occur by chance.
const MinEnvValueLen = 8

// maxPasses bounds the redaction passes of one Redact call. A pass is repeated
// only when the previous one changed the text, and every changing pass removes
// unredacted bytes or markers, so the bound is never reached in practice.
const maxPasses = 64

const markerPrefix = "[REDACTED:"

// markerRE recognises a redaction marker at the start of a string. Rule and
// environment names are restricted so that every marker this package writes
// matches it.
var markerRE = regexp.MustCompile(`^\[REDACTED:[A-Za-z0-9_.:-]{1,200}\]`)

var (
	userRuleNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)
	envNameRE      = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)
)

// Scrubber redacts secrets. It is safe for concurrent use.
type Scrubber struct {
	enabled bool
	rules   []Rule   // built-in rules, then extra rules
	labels  []string // one per rule, then one per env secret
	env     []string // secret environment values, longest first
	allow   []string
	index   *keywordIndex
}

type span struct {
	start, end int
	rule       int // index into labels; lower wins when spans merge
}

// New compiles the extra rules and collects the secret environment values.
// An error names the offending rule and says what is wrong with it.
func New(o Options) (*Scrubber, error) {
	s := &Scrubber{
		enabled: o.Enabled,
		rules:   slices.Clone(defaultRules),
		index:   defaultIndex(),
	}
	used := make(map[string]bool)
	for _, r := range defaultRules {
		used[r.Name] = true
	}
	for i, u := range o.Extra {
		r, err := compileUserRule(i, u)
		if err != nil {
			return nil, err
		}
		if used[r.Name] {
			return nil, fmt.Errorf("scrub rule %q: the name is already used by another rule", u.Name)
		}
		used[r.Name] = true
		s.rules = append(s.rules, r)
	}
	for _, r := range s.rules {
		s.labels = append(s.labels, r.Name)
	}
	for _, e := range envSecrets(o.Environ) {
		s.env = append(s.env, e.value)
		s.labels = append(s.labels, "env:"+e.name)
	}
	for _, a := range o.Allow {
		if a != "" && !slices.Contains(s.allow, a) {
			s.allow = append(s.allow, a)
		}
	}
	return s, nil
}

func compileUserRule(i int, u UserRule) (Rule, error) {
	if u.Name == "" {
		return Rule{}, fmt.Errorf("scrub rule #%d: the name is empty", i+1)
	}
	if !userRuleNameRE.MatchString(u.Name) {
		return Rule{}, fmt.Errorf("scrub rule %q: the name must be 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit", u.Name)
	}
	if u.Regex == "" {
		return Rule{}, fmt.Errorf("scrub rule %q: the regex is empty", u.Name)
	}
	re, err := regexp.Compile(u.Regex)
	if err != nil {
		return Rule{}, fmt.Errorf("scrub rule %q: compile regex: %w", u.Name, err)
	}
	if re.MatchString("") {
		return Rule{}, fmt.Errorf("scrub rule %q: regex %q matches the empty string", u.Name, u.Regex)
	}
	r := Rule{Name: u.Name, Pattern: re}
	if g := re.SubexpIndex("secret"); g > 0 {
		r.Group = g
	}
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
	var created []span
	for range maxPasses {
		out, now, changed := s.redactOnce(text, counts, created)
		if !changed {
			break
		}
		text, created = out, now
	}
	return text, counts
}

// redactOnce replaces the matches in text by markers and adds them to
// counts. created lists the markers earlier passes of the same Redact call
// wrote into text; a marker that this pass absorbs into a larger redaction is
// taken out of counts again, so that counts match the markers in the result.
// It returns the new text, the markers created so far in its coordinates, and
// whether anything changed.
func (s *Scrubber) redactOnce(text string, counts map[string]int, created []span) (string, []span, bool) {
	spans := s.find(text)
	if len(spans) == 0 {
		return text, created, false
	}
	spans = s.filter(text, spans)
	if len(spans) == 0 {
		return text, created, false
	}
	spans = merge(spans)
	var b strings.Builder
	b.Grow(len(text))
	var now []span
	last, c := 0, 0
	for _, sp := range spans {
		for ; c < len(created) && created[c].start < sp.start; c++ {
			shift := b.Len() + created[c].start - last
			now = append(now, span{shift, shift + created[c].end - created[c].start, created[c].rule})
		}
		for ; c < len(created) && created[c].end <= sp.end; c++ {
			label := s.labels[created[c].rule]
			if counts[label]--; counts[label] == 0 {
				delete(counts, label)
			}
		}
		label := s.labels[sp.rule]
		b.WriteString(text[last:sp.start])
		now = append(now, span{b.Len(), b.Len() + len(markerPrefix) + len(label) + 1, sp.rule})
		b.WriteString(markerPrefix)
		b.WriteString(label)
		b.WriteByte(']')
		counts[label]++
		last = sp.end
	}
	for ; c < len(created); c++ {
		shift := b.Len() + created[c].start - last
		now = append(now, span{shift, shift + created[c].end - created[c].start, created[c].rule})
	}
	b.WriteString(text[last:])
	return b.String(), now, true
}

// find collects the matches of every rule and environment value.
func (s *Scrubber) find(text string) []span {
	var spans []span
	hits := s.index.scan(text)
	for i := range s.rules {
		r := &s.rules[i]
		switch {
		case len(r.Keywords) == 0:
			spans = s.run(spans, i, text, 0)
		case i >= len(hits) || len(hits[i]) == 0:
			// No keyword, so no match.
		case r.multiline:
			spans = s.run(spans, i, text, hits[i][0])
		case r.perLine:
			for _, from := range hits[i] {
				spans = s.runRange(spans, i, text, from, lineEnd(text, from))
			}
		default:
			// Run the rule over each run of consecutive lines that contain
			// one of its keywords. Default single-line rules cannot match
			// elsewhere, and a line is matched exactly as it would be in
			// the whole text: ^, $ (multi-line) and \b see the same
			// neighbours at a line's edges.
			lines := hits[i]
			for j := 0; j < len(lines); {
				from := lines[j]
				to := lineEnd(text, from)
				for j++; j < len(lines) && lines[j] == to+1; j++ {
					to = lineEnd(text, lines[j])
				}
				spans = s.runRange(spans, i, text, from, to)
			}
		}
	}
	for k, v := range s.env {
		rule := len(s.rules) + k
		for i := 0; ; {
			j := strings.Index(text[i:], v)
			if j < 0 {
				break
			}
			i += j
			spans = append(spans, span{i, i + len(v), rule})
			i += len(v)
		}
	}
	return spans
}

func lineEnd(text string, from int) int {
	if i := strings.IndexByte(text[from:], '\n'); i >= 0 {
		return from + i
	}
	return len(text)
}

func (s *Scrubber) run(spans []span, ri int, text string, from int) []span {
	return s.runRange(spans, ri, text, from, len(text))
}

// runRange appends the matches of rule ri in text[from:to].
func (s *Scrubber) runRange(spans []span, ri int, text string, from, to int) []span {
	r := &s.rules[ri]
	if r.find != nil {
		for _, loc := range r.find(text[:to], from) {
			spans = r.add(spans, ri, text, loc[0], loc[1])
		}
		return spans
	}
	chunk := text[from:to]
	if r.Group == 0 {
		for _, loc := range r.Pattern.FindAllStringIndex(chunk, -1) {
			spans = r.add(spans, ri, text, from+loc[0], from+loc[1])
		}
		return spans
	}
	g := 2 * r.Group
	for _, loc := range r.Pattern.FindAllStringSubmatchIndex(chunk, -1) {
		if g+1 < len(loc) && loc[g] >= 0 {
			spans = r.add(spans, ri, text, from+loc[g], from+loc[g+1])
		}
	}
	return spans
}

func (r *Rule) add(spans []span, ri int, text string, start, end int) []span {
	if r.check != nil {
		var ok bool
		if start, end, ok = r.check(text, start, end); !ok {
			return spans
		}
	}
	if start >= end {
		return spans
	}
	return append(spans, span{start, end, ri})
}

// filter drops the matches that lie inside an allow-listed string or inside
// an existing marker, and widens a match that cuts into a marker so that the
// marker is replaced whole.
func (s *Scrubber) filter(text string, spans []span) []span {
	markers := findMarkers(text)
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
			out = append(out, span{i, i + m[1], 0})
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
			out.spans = append(out.spans, span{i, i + len(a), 0})
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
// lowest rule index among its parts.
func merge(spans []span) []span {
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
			cur.rule = min(cur.rule, sp.rule)
			continue
		}
		out = append(out, sp)
	}
	return out
}

// keywordIndex finds, in one pass over a text, the lines that contain each
// rule's keywords. Keywords are at least two bytes long; the index maps the
// ASCII-folded first two bytes of a keyword to the keywords that start with
// them, with a bitset in front of the table so that the common miss touches
// only 8 KiB.
type keywordIndex struct {
	bits   [1 << 10]uint64 // bit p set: pair p starts some keyword
	pair   []uint16        // 1<<16 entries: 1 + index into groups
	groups [][]keyword
	nrules int
}

type keyword struct {
	text  string // lower case, or as written when exact
	exact bool   // compare case-sensitively
	rules []int
}

var lowerASCII = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
		if 'A' <= i && i <= 'Z' {
			t[i] = byte(i + 'a' - 'A')
		}
	}
	return t
}()

// defaultIndex indexes the built-in rules' keywords. Extra rules have no
// keywords and come after the built-in rules, so every Scrubber shares it.
var defaultIndex = sync.OnceValue(func() *keywordIndex { return buildIndex(defaultRules) })

func buildIndex(rules []Rule) *keywordIndex {
	x := &keywordIndex{pair: make([]uint16, 1<<16), nrules: len(rules)}
	var kws []keyword
	for i, r := range rules {
		for _, k := range r.Keywords {
			if !r.exactKeywords {
				k = strings.ToLower(k)
			}
			if len(k) < 2 {
				panic(fmt.Sprintf("scrub: rule %q: keyword %q is shorter than two bytes", r.Name, k))
			}
			at := slices.IndexFunc(kws, func(w keyword) bool { return w.text == k && w.exact == r.exactKeywords })
			if at < 0 {
				kws = append(kws, keyword{text: k, exact: r.exactKeywords})
				at = len(kws) - 1
			}
			if !slices.Contains(kws[at].rules, i) {
				kws[at].rules = append(kws[at].rules, i)
			}
		}
	}
	for _, k := range kws {
		p := uint16(lowerASCII[k.text[0]])<<8 | uint16(lowerASCII[k.text[1]])
		if x.pair[p] == 0 {
			x.groups = append(x.groups, nil)
			x.pair[p] = uint16(len(x.groups))
			x.bits[p>>6] |= 1 << (p & 63)
		}
		g := x.pair[p] - 1
		x.groups[g] = append(x.groups[g], k)
	}
	return x
}

// scan returns, for each rule with keywords, the start offsets of the lines
// of text that contain at least one of its keywords, in increasing order.
func (x *keywordIndex) scan(text string) [][]int {
	var hits [][]int
	lineStart := 0
	for i := 0; i+1 < len(text); i++ {
		c := text[i]
		if c == '\n' {
			lineStart = i + 1
			continue
		}
		p := uint16(lowerASCII[c])<<8 | uint16(lowerASCII[text[i+1]])
		if x.bits[p>>6]&(1<<(p&63)) == 0 {
			continue
		}
		for _, k := range x.groups[x.pair[p]-1] {
			if k.exact && !strings.HasPrefix(text[i:], k.text) || !k.exact && !hasPrefixFold(text[i:], k.text) {
				continue
			}
			if hits == nil {
				hits = make([][]int, x.nrules)
			}
			for _, r := range k.rules {
				if h := hits[r]; len(h) == 0 || h[len(h)-1] != lineStart {
					hits[r] = append(h, lineStart)
				}
			}
		}
	}
	return hits
}

// hasPrefixFold reports whether s starts with the lower-case ASCII string
// prefix, ignoring ASCII case in s.
func hasPrefixFold(s, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		if lowerASCII[s[i]] != prefix[i] {
			return false
		}
	}
	return true
}
