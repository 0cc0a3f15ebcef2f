package scrub

import (
	"fmt"
	"math"
	"regexp"
	"regexp/syntax"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// A rule is one secret format: gitleaks' (see gitleaks.go), this package's
// own (rules.go) or the user's.
//
// A built-in rule runs only on texts that hold one of its keywords
// (compared case-insensitively), as in gitleaks, and its pattern is tried
// only where a match can start: at the occurrences of its anchor (see
// shape). The result is the same as running the pattern over the whole
// text, which is what happens for rules without an anchor and for the
// user's rules.
type rule struct {
	name    string
	pattern string // RE2 syntax
	// keywords, in lower case; none: the rule runs on every text.
	keywords []string
	// group is the submatch that holds the secret: groupAuto picks as
	// gitleaks does (the first non-empty group, else the whole match), 0
	// takes the whole match, n group n.
	group int
	// entropy, when not zero, is the Shannon entropy a secret must exceed.
	entropy float64
	// allow are gitleaks allowlists of this rule; gitleaks marks the rules
	// that gitleaks' global allowlists also apply to.
	allow    []glAllowlist
	gitleaks bool
	// find, when set, replaces pattern: it returns the matches in text.
	find func(text string) [][2]int
	// check, when set, vets a secret: it may narrow the span, and reports
	// false when the match is not a secret.
	check func(h hit) (int, int, bool)
	// user marks a rule of [[scrub.rules]]: what it matches is redacted
	// as it is, digests included (readable.go).
	user bool

	shapeOnce sync.Once
	sh        shape
	once      sync.Once
	m         *matcher
}

const groupAuto = -1

// matcher is a rule's compiled form, built on first use.
type matcher struct {
	re     *regexp.Regexp        // the whole pattern, for rules without an anchor
	whole  func() *regexp.Regexp // the whole pattern, compiled when needed
	at     *regexp.Regexp        // `\A(?s:.)(?:body)`: body after one byte of context
	at0    func() *regexp.Regexp
	sieve  *sieve // a quick test before at
	allow  []allowlist
	global []allowlist
}

// shape parses and analyzes the rule's pattern. Built-in patterns are
// tested to compile (TestBuiltinRulesCompile); user rules are compiled by
// compileUserRule before they get here.
func (r *rule) shape() *shape {
	r.shapeOnce.Do(func() {
		if r.find != nil {
			return
		}
		parsed, err := syntax.Parse(r.pattern, syntax.Perl)
		if err != nil {
			panic(fmt.Sprintf("scrub: rule %s: %v", r.name, err))
		}
		r.sh = analyze(parsed)
	})
	return &r.sh
}

// matcher compiles the rule.
func (r *rule) matcher() *matcher {
	r.once.Do(func() {
		m, err := compileRule(r, r.shape())
		if err != nil {
			panic(fmt.Sprintf("scrub: rule %s: %v", r.name, err))
		}
		r.m = m
	})
	return r.m
}

func compileRule(r *rule, sh *shape) (*matcher, error) {
	m := &matcher{}
	if r.find != nil {
		return m, nil
	}
	var err error
	if len(sh.anchors) == 0 {
		if m.re, err = regexp.Compile(pattern(sh.whole)); err != nil {
			return nil, err
		}
	} else {
		m.whole = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(pattern(sh.whole)) })
		body := pattern(sh.body)
		if m.at, err = regexp.Compile(`\A(?s:.)` + body); err != nil {
			return nil, err
		}
		if m.at.NumSubexp() != sh.whole.MaxCap() {
			return nil, fmt.Errorf("the anchored pattern has %d groups, the pattern %d", m.at.NumSubexp(), sh.whole.MaxCap())
		}
		m.at0 = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\A` + body) })
		if sh.pre != nil {
			m.sieve = newSieve(sh.pre)
		}
	}
	for _, a := range r.allow {
		al, err := a.compile()
		if err != nil {
			return nil, err
		}
		m.allow = append(m.allow, al)
	}
	if r.gitleaks {
		for _, a := range globalAllowlists() {
			if len(a.targetRules) == 0 || slices.Contains(a.targetRules, r.name) {
				m.global = append(m.global, a)
			}
		}
	}
	return m, nil
}

// hit is a match for a rule's check: the secret is text[start:end], the
// match starts at from (before any line break gitleaks trims) and loc holds
// the offsets of its groups, as FindStringSubmatchIndex gives them.
type hit struct {
	text       string
	from       int
	loc        []int
	start, end int
}

// group returns the text of group g, or "" when it did not take part.
func (h hit) group(g int) string {
	if 2*g+1 >= len(h.loc) || h.loc[2*g] < 0 {
		return ""
	}
	return h.text[h.loc[2*g]:h.loc[2*g+1]]
}

// found is a secret a rule found: text[start:end], in the match
// text[mStart:mEnd].
type found struct {
	start, end   int
	mStart, mEnd int
}

// matches returns the secrets rule r finds in text; anchors are the
// occurrences of its anchor strings, reqs those of its required literals.
// When within is not nil, only matches starting in one of its spans are
// looked for.
func (r *rule) matches(text string, anchors []int, reqs [][]int, within []span, out []found) []found {
	m := r.matcher()
	sh := r.shape()
	if r.find != nil {
		for _, loc := range r.find(text) {
			out = r.accept(text, []int{loc[0], loc[1]}, loc[0], out)
		}
		return out
	}
	if m.at == nil {
		return r.matchWhole(m.re, text, out)
	}
	// The leftmost-first matches of the pattern over the whole text, found
	// by trying body at each start an anchor allows, in order, and going
	// on after the end of each match.
	starts := make([]int, 0, len(anchors)*(sh.maxOff-sh.minOff+1))
	for _, p := range anchors {
		for off := sh.maxOff; off >= sh.minOff; off-- {
			if c := p - off; c >= 0 {
				starts = append(starts, c)
			}
		}
	}
	if sh.maxOff > sh.minOff {
		slices.Sort(starts)
		starts = slices.Compact(starts)
	}
	pos, w := 0, 0
	first, began := len(out), time.Now()
	for k, c := range starts {
		if sh.broad && k%16 == 15 && time.Since(began) > anchoredBudget {
			// Each start costs a regexp run to the end of what the
			// pattern can reach; with many starts in one long stretch
			// that is quadratic, where one run over the whole text is
			// linear. Both find the same matches.
			return r.matchWhole(m.whole(), text, out[:first])
		}
		if c < pos || midRune(text, c) {
			continue
		}
		if within != nil {
			for w < len(within) && within[w].end <= c {
				w++
			}
			if w == len(within) {
				break
			}
			if c < within[w].start {
				continue
			}
		}
		if !hasReqs(text, c, sh, reqs) {
			continue
		}
		loc := m.matchAt(text, c, sh)
		if loc == nil {
			continue
		}
		from := c
		if sh.ext != nil {
			from = extendBack(text, c, pos, sh.ext)
		}
		out = r.accept(text, loc, from, out)
		pos = max(loc[1], c+1)
	}
	return out
}

// anchoredBudget is how long a rule with a broad repeat (shape.broad) tries
// its starts one by one in a text before it runs its pattern over the whole
// text instead.
const anchoredBudget = 2 * time.Millisecond

// matchWhole returns the secrets re, the rule's whole pattern, finds in a
// run over the whole text.
func (r *rule) matchWhole(re *regexp.Regexp, text string, out []found) []found {
	for _, loc := range re.FindAllStringSubmatchIndex(text, -1) {
		out = r.accept(text, loc, loc[0], out)
	}
	return out
}

// hasReqs reports whether the required literals of a match starting at c
// occur where they can.
func hasReqs(text string, c int, sh *shape, reqs [][]int) bool {
	for k, q := range sh.req {
		var occ []int
		if k < len(reqs) {
			occ = reqs[k]
		}
		lo := c + q.minOff
		hi := len(text)
		if q.maxOff >= 0 {
			hi = min(hi, c+q.maxOff)
		}
		if q.maxNL >= 0 {
			hi = min(hi, afterLines(text, c, hi, q.maxNL))
		}
		j := sort.SearchInts(occ, lo)
		if j == len(occ) || occ[j] > hi {
			return false
		}
	}
	return true
}

// matchAt returns the submatch offsets of body matched at text[c:], in
// text's coordinates, or nil.
func (m *matcher) matchAt(text string, c int, sh *shape) []int {
	// A match cannot reach beyond maxLen bytes nor beyond maxNL line
	// breaks; one byte more keeps $ and \b honest, and a short input lets Go
	// use its backtracker.
	if m.sieve != nil && !m.sieve.may(text, c) {
		return nil
	}
	end := len(text)
	if sh.maxLen >= 0 && c+sh.maxLen+1 < end {
		end = c + sh.maxLen + 1
	}
	if sh.maxNL >= 0 {
		end = afterLines(text, c, end, sh.maxNL)
	}
	if c == 0 {
		return m.at0().FindStringSubmatchIndex(text[:end])
	}
	loc := m.at.FindStringSubmatchIndex(text[c-1 : end])
	if loc == nil {
		return nil
	}
	for i, v := range loc {
		if v >= 0 {
			loc[i] = v + c - 1
		}
	}
	loc[0] = c
	return loc
}

// midRune reports whether offset c falls inside a valid multi-byte UTF-8
// sequence, where no match of a search over the whole text starts.
func midRune(text string, c int) bool {
	if c >= len(text) || utf8.RuneStart(text[c]) {
		return false
	}
	for i := c - 1; i >= 0 && i >= c-3; i-- {
		if utf8.RuneStart(text[i]) {
			r, n := utf8.DecodeRuneInString(text[i:])
			return r != utf8.RuneError && i+n > c
		}
	}
	return false
}

// extendBack returns where a match of extender+body starts when body's
// match starts at c: as far left as the extender's parts reach, the last
// part first, but not before limit. Taking all the last part can before
// the one ahead of it gives the longest extension.
func extendBack(text string, c, limit int, ext []extPart) int {
	i := c
	for k := len(ext) - 1; k >= 0; k-- {
		for n := ext[k].max; n > 0 && i > limit; n-- {
			r, w := utf8.DecodeLastRuneInString(text[:i])
			if !inClass(r, ext[k].class) || i-w < limit {
				break
			}
			i -= w
		}
	}
	return i
}

func inClass(r rune, class []rune) bool {
	for i := 0; i+1 < len(class); i += 2 {
		if class[i] <= r && r <= class[i+1] {
			return true
		}
	}
	return false
}

// accept turns a match (submatch offsets loc, the match starting at from)
// into a secret, unless gitleaks' checks or the rule's own reject it.
func (r *rule) accept(text string, loc []int, from int, out []found) []found {
	m := r.matcher()
	// gitleaks trims line breaks off a match.
	mStart, mEnd := from, loc[1]
	for mStart < mEnd && text[mStart] == '\n' {
		mStart++
	}
	for mEnd > mStart && text[mEnd-1] == '\n' {
		mEnd--
	}
	start, end := mStart, mEnd
	switch {
	case r.group > 0:
		if 2*r.group+1 >= len(loc) || loc[2*r.group] < 0 {
			return out
		}
		start, end = loc[2*r.group], loc[2*r.group+1]
	case r.group == groupAuto:
		for g := 2; g+1 < len(loc); g += 2 {
			if loc[g] >= 0 && loc[g+1] > loc[g] {
				start, end = loc[g], loc[g+1]
				break
			}
		}
	}
	if start >= end {
		return out
	}
	secret := text[start:end]
	if r.entropy != 0 && shannonEntropy(secret) <= r.entropy {
		return out
	}
	if len(m.global) > 0 || len(m.allow) > 0 {
		t := allowTargets{secret: secret, match: text[mStart:mEnd], text: text, from: mStart, to: mEnd}
		if allowed(m.global, &t) || allowed(m.allow, &t) {
			return out
		}
	}
	if r.check != nil {
		var ok bool
		if start, end, ok = r.check(hit{text, from, loc, start, end}); !ok || start >= end {
			return out
		}
	}
	if !r.user && inDigest(text, start, end) {
		return out // a content digest is no secret (readable.go)
	}
	return append(out, found{start, end, mStart, mEnd})
}

// shannonEntropy is gitleaks' measure of randomness, in bits per byte: it
// counts runes but divides by the length in bytes.
func shannonEntropy(s string) float64 {
	if s == "" {
		return 0
	}
	var counts map[rune]int
	var ascii [128]int
	for _, c := range s {
		if c < 128 {
			ascii[c]++
			continue
		}
		if counts == nil {
			counts = make(map[rune]int)
		}
		counts[c]++
	}
	inv := 1 / float64(len(s))
	e := 0.0
	term := func(n int) {
		if n > 0 {
			f := float64(n) * inv
			e -= f * math.Log2(f)
		}
	}
	for _, n := range ascii {
		term(n)
	}
	for _, n := range counts {
		term(n)
	}
	return e
}

type allowlist struct {
	and         bool
	target      string
	never       bool // an AND condition on commits or paths, which a prompt does not have
	regexes     []allowRegex
	stopWords   *wordSet // nil if none
	targetRules []string
}

// allowRegex is one alternative of an allowlist's regexes, and literals
// (lower case) one of which every match of it holds, if it has such: the
// regexp runs only on a target holding one.
type allowRegex struct {
	re   *regexp.Regexp
	lits []string
}

func (a glAllowlist) compile() (allowlist, error) {
	al := allowlist{and: strings.EqualFold(a.Condition, "AND"), target: a.RegexTarget, targetRules: a.TargetRules}
	al.never = al.and && (len(a.Commits) > 0 || len(a.Paths) > 0)
	for _, s := range a.Regexes {
		re, err := syntax.Parse(s, syntax.Perl)
		if err != nil {
			return al, fmt.Errorf("allowlist regex %q: %w", s, err)
		}
		alts := []*syntax.Regexp{re}
		for len(alts) == 1 && (alts[0].Op == syntax.OpAlternate || alts[0].Op == syntax.OpCapture) {
			alts = alts[0].Sub
		}
		for _, alt := range alts {
			x, err := regexp.Compile(pattern(alt))
			if err != nil {
				return al, fmt.Errorf("allowlist regex %q: %w", s, err)
			}
			lits, _, _ := findAnchor(alt)
			al.regexes = append(al.regexes, allowRegex{re: x, lits: lits})
		}
	}
	if len(a.StopWords) > 0 {
		al.stopWords = newWordSet(a.StopWords)
	}
	return al, nil
}

// wordSet finds whether a text holds one of a set of words, looking the
// words up by a hash of their first three bytes.
type wordSet struct {
	short []string   // words shorter than three bytes
	slot  []uint16   // 1 + index into groups, by hash of a trigram
	group [][]string // words by the hash of their first three bytes
}

func newWordSet(words []string) *wordSet {
	w := &wordSet{slot: make([]uint16, 1<<12)}
	for _, word := range words {
		word = strings.ToLower(word)
		if len(word) < 3 {
			w.short = append(w.short, word)
			continue
		}
		h := hash3(uint32(word[0])<<16|uint32(word[1])<<8|uint32(word[2])) >> 4
		if w.slot[h] == 0 {
			w.group = append(w.group, nil)
			w.slot[h] = uint16(len(w.group))
		}
		w.group[w.slot[h]-1] = append(w.group[w.slot[h]-1], word)
	}
	return w
}

// in reports whether s (in lower case) holds one of the words.
func (w *wordSet) in(s string) bool {
	for _, word := range w.short {
		if strings.Contains(s, word) {
			return true
		}
	}
	for i := 0; i+3 <= len(s); i++ {
		g := w.slot[hash3(uint32(s[i])<<16|uint32(s[i+1])<<8|uint32(s[i+2]))>>4]
		if g == 0 {
			continue
		}
		for _, word := range w.group[g-1] {
			if strings.HasPrefix(s[i:], word) {
				return true
			}
		}
	}
	return false
}

var globalAllowlists = sync.OnceValue(func() []allowlist {
	var out []allowlist
	for _, a := range gitleaksGlobalAllowlists {
		al, err := a.compile()
		if err != nil {
			panic("scrub: gitleaks global allowlist: " + err.Error())
		}
		out = append(out, al)
	}
	return out
})

// allowTargets are what an allowlist may look at; the line is cut out of
// text only when an allowlist asks for it.
type allowTargets struct {
	secret, match string
	text          string
	from, to      int
	line          string
	lower         string
}

func (t *allowTargets) get(target string) string {
	switch target {
	case "match":
		return t.match
	case "line":
		if t.line == "" {
			start := strings.LastIndexByte(t.text[:t.from], '\n') + 1
			end := len(t.text)
			if i := strings.IndexByte(t.text[t.to:], '\n'); i >= 0 {
				end = t.to + i
			}
			t.line = t.text[start:end]
		}
		return t.line
	}
	return t.secret
}

// allowed applies gitleaks' allowlist semantics: with condition OR, a
// finding is allowed when a regex matches its target or its secret holds a
// stop word; with AND, when every criterion the allowlist has is met.
func allowed(lists []allowlist, t *allowTargets) bool {
	for i := range lists {
		a := &lists[i]
		if a.never {
			continue
		}
		stop := false
		if a.stopWords != nil && t.secret != "" {
			if t.lower == "" {
				t.lower = strings.ToLower(t.secret)
			}
			stop = a.stopWords.in(t.lower)
		}
		if !a.and && stop {
			return true
		}
		re := false
		if target := t.get(a.target); target != "" {
			var lower string
			for _, x := range a.regexes {
				if x.lits != nil {
					if lower == "" {
						lower = strings.ToLower(target)
					}
					if !slices.ContainsFunc(x.lits, func(l string) bool { return strings.Contains(lower, l) }) {
						continue
					}
				}
				if x.re.MatchString(target) {
					re = true
					break
				}
			}
		}
		if a.and {
			if (len(a.regexes) == 0 || re) && (a.stopWords == nil || stop) {
				return true
			}
		} else if re {
			return true
		}
	}
	return false
}

// afterLines returns how far in text[:end] a match starting at c can
// reach when it spans at most maxNL line breaks: just past the
// (maxNL+1)-th newline from c, or end.
func afterLines(text string, c, end, maxNL int) int {
	i := c
	for n := 0; n <= maxNL && i < end; n++ {
		j := strings.IndexByte(text[i:end], '\n')
		if j < 0 {
			return end
		}
		i += j + 1
	}
	return i
}
