package scrub

import (
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// shape is what the matcher needs to know about a pattern to run it only
// where it can match, instead of over the whole text.
//
// A pattern may begin with an extender: lazy repetitions of character
// classes such as gitleaks' [\w.-]{0,50}?, which only widen a match to the
// left over the identifier in front of a key name. Dropping it changes
// where matches start but not where they end nor what their groups hold:
// the leftmost match of the pattern ends where the leftmost match of the
// rest does, and its start is found again by walking back over the classes
// (see extendBack).
//
// The rest of the pattern, body, is described by an anchor: a set of
// literal strings (lower case, compared case-insensitively) of which every
// match of body holds one, starting between minOff and maxOff bytes after
// the start of the match. A match can then only start at an anchor's
// occurrence minus an offset in that range.
type shape struct {
	whole *syntax.Regexp // the pattern
	body  *syntax.Regexp // the pattern without its extender

	ext []extPart // the extender, in order; none if empty

	anchors        []string // empty: no usable anchor
	minOff, maxOff int

	maxLen int // the longest match of body in bytes, -1 if unbounded
	maxNL  int // the most line breaks a match of body holds, -1 if unbounded

	// pre is a leading part of body with a short longest match (preLen),
	// when body is longer: a cheap test that rules out most starts.
	pre    *syntax.Regexp
	preLen int

	// req are literals further on in body that a match must hold: a start
	// with none of them where they can be is ruled out too.
	req []reqLit

	// broad is set when body repeats a broad class (any character, or a
	// negated class) many times: a failing try at one start may then read
	// far, and many starts in one stretch cost quadratic time.
	broad bool
}

// reqLit is a set of literals (lower case) one of which every match of
// body holds, starting between minOff and maxOff bytes (-1: no bound) and
// after at most maxNL line breaks (-1: no bound) from the match's start.
type reqLit struct {
	set            []string
	minOff, maxOff int
	maxNL          int
}

const maxReqs = 2

const (
	maxAnchors      = 64 // more literal alternatives than this are not worth indexing
	maxAnchorLen    = 16
	maxAnchorSpread = 64 // candidate starts per anchor occurrence
	maxPreLen       = sieveWidth - 1
)

func analyze(re *syntax.Regexp) shape {
	sh := shape{whole: re}
	sh.body, sh.ext = stripExtender(re)
	sh.maxLen = maxWidth(sh.body)
	sh.maxNL = maxNewlines(sh.body)
	sh.broad = hasBroadRepeat(sh.body)
	sh.anchors, sh.minOff, sh.maxOff = findAnchor(sh.body)
	if len(sh.anchors) > 0 && (sh.maxLen < 0 || sh.maxLen > maxPreLen) {
		// The longest leading part of the sequence with a short longest
		// match, if it holds more than the anchor.
		seq := sequence(sh.body)
		n, total, least := 0, 0, 0
		for n < len(seq) {
			lo, hi := widths(seq[n])
			if hi < 0 || total+hi > maxPreLen {
				break
			}
			total += hi
			least += lo
			n++
		}
		shortest := len(sh.anchors[0])
		for _, a := range sh.anchors {
			shortest = min(shortest, len(a))
		}
		if n < len(seq) && least > sh.minOff+shortest {
			sh.pre = &syntax.Regexp{Op: syntax.OpConcat, Sub: seq[:n]}
			sh.preLen = total
		}
		sh.req = findReqs(seq, n)
	}
	return sh
}

// findReqs returns up to maxReqs literal sets among the elements of seq
// from the first-th on (those before are the sieve's), preferring long
// literals.
func findReqs(seq []*syntax.Regexp, first int) []reqLit {
	var all []reqLit
	minOff, maxOff, nl := 0, 0, 0
	sets := elementPrefixes(seq)
	for i := range seq {
		if i >= first {
			if set, ok := sets.from(i); ok && usable(set) {
				all = append(all, reqLit{set: minimalSet(set), minOff: minOff, maxOff: maxOff, maxNL: nl})
			}
		}
		minOff, maxOff = advance(minOff, maxOff, seq[i])
		if n := maxNewlines(seq[i]); nl >= 0 {
			if n < 0 {
				nl = -1
			} else {
				nl += n
			}
		}
	}
	shortest := func(r reqLit) int {
		n := len(r.set[0])
		for _, s := range r.set {
			n = min(n, len(s))
		}
		return n
	}
	slices.SortStableFunc(all, func(a, b reqLit) int { return shortest(b) - shortest(a) })
	return all[:min(len(all), maxReqs)]
}

// extPart is one lazy repetition of an extender: up to max runes of class.
type extPart struct {
	class []rune
	max   int
}

// stripExtender removes the leading lazy repetitions of character classes
// (with a minimum of zero and a maximum) from re, and returns the rest and
// what it removed.
func stripExtender(re *syntax.Regexp) (*syntax.Regexp, []extPart) {
	if re.Op != syntax.OpConcat {
		return re, nil
	}
	subs := flatten(re)
	var ext []extPart
	for len(ext) < len(subs)-1 {
		s := subs[len(ext)]
		if s.Op != syntax.OpRepeat || s.Min != 0 || s.Max < 0 || s.Flags&syntax.NonGreedy == 0 || s.Sub[0].Op != syntax.OpCharClass {
			break
		}
		ext = append(ext, extPart{class: s.Sub[0].Rune, max: s.Max})
	}
	if len(ext) == 0 {
		return re, nil
	}
	rest := subs[len(ext):]
	if len(rest) == 1 {
		return rest[0], ext
	}
	return &syntax.Regexp{Op: syntax.OpConcat, Flags: re.Flags, Sub: rest}, ext
}

func hasCapture(re *syntax.Regexp) bool {
	if re.Op == syntax.OpCapture {
		return true
	}
	return slices.ContainsFunc(re.Sub, hasCapture)
}

// flatten returns the sequence of a concatenation, with nested
// concatenations spliced in. Captures are kept: they carry group numbers.
func flatten(re *syntax.Regexp) []*syntax.Regexp {
	if re.Op != syntax.OpConcat {
		return []*syntax.Regexp{re}
	}
	var out []*syntax.Regexp
	for _, s := range re.Sub {
		out = append(out, flatten(s)...)
	}
	return out
}

// sequence is flatten that also opens captures: for offsets, a group is
// just its contents.
func sequence(re *syntax.Regexp) []*syntax.Regexp {
	switch re.Op {
	case syntax.OpCapture:
		return sequence(re.Sub[0])
	case syntax.OpConcat:
		var out []*syntax.Regexp
		for _, s := range re.Sub {
			out = append(out, sequence(s)...)
		}
		return out
	}
	return []*syntax.Regexp{re}
}

// findAnchor picks, among the positions of body's top-level sequence, the
// literal set that makes the fewest candidate starts: long strings at a
// narrow range of offsets.
func findAnchor(body *syntax.Regexp) ([]string, int, int) {
	seq := sequence(body)
	sets := elementPrefixes(seq)
	var best []string
	bestMin, bestMax, bestScore := 0, 0, -1
	minOff, maxOff := 0, 0
	for i := range seq {
		if maxOff >= 0 && maxOff-minOff <= maxAnchorSpread {
			if set, ok := sets.from(i); ok && usable(set) {
				set = minimalSet(set)
				shortest := len(set[0])
				for _, s := range set {
					shortest = min(shortest, len(s))
				}
				// Longer literals and fewer starts per occurrence win.
				score := min(shortest, 8)*100 - (maxOff - minOff) - len(set)/8
				if score > bestScore {
					best, bestMin, bestMax, bestScore = set, minOff, maxOff, score
				}
			}
		}
		minOff, maxOff = advance(minOff, maxOff, seq[i])
	}
	return best, bestMin, bestMax
}

// seqPrefixes holds the prefixes of each element of a sequence, so that
// the prefixes of every tail of the sequence come without parsing the
// elements again.
type seqPrefixes []struct {
	set      []string
	complete bool
	ok       bool
}

func elementPrefixes(seq []*syntax.Regexp) seqPrefixes {
	out := make(seqPrefixes, len(seq))
	for i, e := range seq {
		out[i].set, out[i].complete, out[i].ok = prefixes(e)
	}
	return out
}

// from returns the prefixes of the tail of the sequence from element i on,
// as prefixes would for their concatenation.
func (p seqPrefixes) from(i int) ([]string, bool) {
	set := []string{""}
	for _, e := range p[i:] {
		if !e.ok {
			return set, true
		}
		next := make([]string, 0, len(set)*len(e.set))
		for _, a := range set {
			for _, b := range e.set {
				next = append(next, a+b)
			}
		}
		slices.Sort(next)
		next = slices.Compact(next)
		if len(next) > maxAnchors {
			return set, true
		}
		set = next
		if !e.complete || slices.ContainsFunc(set, func(s string) bool { return len(s) >= maxAnchorLen }) {
			return set, true
		}
	}
	return set, true
}

// usable reports whether set can drive the index: every string is at
// least two bytes of ASCII.
func usable(set []string) bool {
	if len(set) == 0 || len(set) > maxAnchors {
		return false
	}
	for _, s := range set {
		if len(s) < 2 {
			return false
		}
		for i := 0; i < len(s); i++ {
			if s[i] >= utf8.RuneSelf {
				return false
			}
		}
	}
	return true
}

// minimalSet sorts and dedupes set and drops the strings that another
// string of the set is a prefix of: their occurrences are found anyway.
func minimalSet(set []string) []string {
	set = slices.Clone(set)
	slices.Sort(set)
	set = slices.Compact(set)
	out := set[:0]
	for _, s := range set {
		if len(out) > 0 && strings.HasPrefix(s, out[len(out)-1]) {
			continue
		}
		out = append(out, s)
	}
	return out
}

// prefixes returns lower-case strings one of which every match of re starts
// with (compared case-insensitively), and whether they are the whole match
// (complete), so that a concatenation may extend them. ok is false when no
// such set of reasonable size exists.
func prefixes(re *syntax.Regexp) (set []string, complete, ok bool) {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return []string{""}, true, true
	case syntax.OpLiteral:
		return []string{strings.ToLower(string(re.Rune))}, true, true
	case syntax.OpCharClass:
		var out []string
		for i := 0; i+1 < len(re.Rune); i += 2 {
			if re.Rune[i+1]-re.Rune[i] > 26 {
				return nil, false, false
			}
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				out = append(out, string(unicode.ToLower(r)))
			}
		}
		slices.Sort(out)
		out = slices.Compact(out)
		if len(out) > 10 {
			return nil, false, false
		}
		return out, true, true
	case syntax.OpCapture:
		return prefixes(re.Sub[0])
	case syntax.OpConcat:
		set, complete = []string{""}, true
		for _, sub := range re.Sub {
			s, c, ok := prefixes(sub)
			if !ok {
				return set, false, true
			}
			next := make([]string, 0, len(set)*len(s))
			for _, a := range set {
				for _, b := range s {
					next = append(next, a+b)
				}
			}
			slices.Sort(next)
			next = slices.Compact(next)
			if len(next) > maxAnchors {
				return set, false, true
			}
			set, complete = next, c
			if !complete || slices.ContainsFunc(set, func(s string) bool { return len(s) >= maxAnchorLen }) {
				return set, false, true
			}
		}
		return set, true, true
	case syntax.OpAlternate:
		complete = true
		for _, sub := range re.Sub {
			s, c, ok := prefixes(sub)
			if !ok {
				return nil, false, false
			}
			set = append(set, s...)
			complete = complete && c
		}
		slices.Sort(set)
		set = slices.Compact(set)
		if len(set) > maxAnchors {
			return nil, false, false
		}
		return set, complete, true
	case syntax.OpQuest:
		s, c, ok := prefixes(re.Sub[0])
		if !ok {
			return nil, false, false
		}
		return append(s, ""), c, true
	case syntax.OpPlus:
		s, _, ok := prefixes(re.Sub[0])
		return s, false, ok
	case syntax.OpRepeat:
		if re.Min == 0 {
			if re.Max != 1 {
				return nil, false, false
			}
			s, c, ok := prefixes(re.Sub[0])
			return append(s, ""), c, ok
		}
		s, c, ok := prefixes(re.Sub[0])
		return s, c && re.Min == 1 && re.Max == 1, ok
	}
	return nil, false, false
}

// widths returns the shortest and longest match of re in bytes (-1 for
// unbounded).
func widths(re *syntax.Regexp) (int, int) {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return 0, 0
	case syntax.OpLiteral:
		lo, hi := 0, 0
		for _, r := range re.Rune {
			a, b := runeWidths(r, re.Flags&syntax.FoldCase != 0)
			lo += a
			hi += b
		}
		return lo, hi
	case syntax.OpCharClass:
		if len(re.Rune) == 0 {
			return 0, 0
		}
		return utf8.RuneLen(re.Rune[0]), utf8.RuneLen(re.Rune[len(re.Rune)-1])
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return 1, utf8.UTFMax
	case syntax.OpCapture:
		return widths(re.Sub[0])
	case syntax.OpStar:
		return 0, -1
	case syntax.OpPlus:
		lo, _ := widths(re.Sub[0])
		return lo, -1
	case syntax.OpQuest:
		_, hi := widths(re.Sub[0])
		return 0, hi
	case syntax.OpRepeat:
		lo, hi := widths(re.Sub[0])
		if re.Max < 0 || hi < 0 {
			return lo * re.Min, -1
		}
		return lo * re.Min, hi * re.Max
	case syntax.OpConcat:
		lo, hi := 0, 0
		for _, s := range re.Sub {
			a, b := widths(s)
			lo += a
			if hi >= 0 {
				if b < 0 {
					hi = -1
				} else {
					hi += b
				}
			}
		}
		return lo, hi
	case syntax.OpAlternate:
		lo, hi := -1, 0
		for _, s := range re.Sub {
			a, b := widths(s)
			if lo < 0 || a < lo {
				lo = a
			}
			if hi >= 0 && (b < 0 || b > hi) {
				hi = b
			}
		}
		return max(lo, 0), hi
	}
	return 0, -1
}

// runeWidths returns the UTF-8 lengths of r, or of the runes it matches
// when the case is folded (the Kelvin sign matches k).
func runeWidths(r rune, fold bool) (int, int) {
	lo, hi := utf8.RuneLen(r), utf8.RuneLen(r)
	if fold {
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			lo = min(lo, utf8.RuneLen(f))
			hi = max(hi, utf8.RuneLen(f))
		}
	}
	return lo, hi
}

func maxWidth(re *syntax.Regexp) int {
	_, hi := widths(re)
	return hi
}

// hasBroadRepeat reports whether re repeats, more than 32 times or without
// bound, something that matches any character or most of them.
func hasBroadRepeat(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpStar, syntax.OpPlus, syntax.OpRepeat:
		if re.Op != syntax.OpRepeat || re.Max < 0 || re.Max > 32 {
			sub := re.Sub[0]
			switch {
			case sub.Op == syntax.OpAnyChar || sub.Op == syntax.OpAnyCharNotNL:
				return true
			case sub.Op == syntax.OpCharClass && classSize(sub.Rune) > 1000:
				return true
			}
		}
	}
	return slices.ContainsFunc(re.Sub, hasBroadRepeat)
}

func classSize(class []rune) int {
	n := 0
	for i := 0; i+1 < len(class); i += 2 {
		n += int(class[i+1]-class[i]) + 1
	}
	return n
}

// maxNewlines returns the most line breaks a match of re can hold, -1 if
// there is no bound.
func maxNewlines(re *syntax.Regexp) int {
	switch re.Op {
	case syntax.OpLiteral:
		n := 0
		for _, r := range re.Rune {
			if r == '\n' {
				n++
			}
		}
		return n
	case syntax.OpCharClass:
		if inClass('\n', re.Rune) {
			return 1
		}
		return 0
	case syntax.OpAnyChar:
		return 1
	case syntax.OpCapture, syntax.OpQuest:
		return maxNewlines(re.Sub[0])
	case syntax.OpStar, syntax.OpPlus:
		if maxNewlines(re.Sub[0]) != 0 {
			return -1
		}
		return 0
	case syntax.OpRepeat:
		n := maxNewlines(re.Sub[0])
		if n == 0 {
			return 0
		}
		if n < 0 || re.Max < 0 {
			return -1
		}
		return n * re.Max
	case syntax.OpConcat, syntax.OpAlternate:
		total := 0
		for _, s := range re.Sub {
			n := maxNewlines(s)
			if n < 0 {
				return -1
			}
			if re.Op == syntax.OpConcat {
				total += n
			} else {
				total = max(total, n)
			}
		}
		return total
	}
	return 0
}

// pattern prints re in RE2 syntax for regexp.Compile. It spells out what
// (*syntax.Regexp).String infers (flags are written where they apply), so
// it is fast, and it writes a case-folded literal as classes of the runes
// it matches: Go's matcher compares a folded literal by walking the rune's
// fold orbit at every step, a class by a lookup. The language is the same.
func pattern(re *syntax.Regexp) string {
	var b strings.Builder
	writePattern(&b, re)
	return b.String()
}

func writePattern(b *strings.Builder, re *syntax.Regexp) {
	switch re.Op {
	case syntax.OpNoMatch:
		b.WriteString(`[^\x00-\x{10FFFF}]`)
	case syntax.OpEmptyMatch:
		b.WriteString(`(?:)`)
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			if re.Flags&syntax.FoldCase != 0 {
				orbit := []rune{r}
				for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
					orbit = append(orbit, f)
				}
				if len(orbit) > 1 {
					slices.Sort(orbit)
					b.WriteByte('[')
					for _, o := range orbit {
						writeRune(b, o)
					}
					b.WriteByte(']')
					continue
				}
			}
			writeRune(b, r)
		}
	case syntax.OpCharClass:
		b.WriteByte('[')
		if len(re.Rune) == 0 {
			b.WriteString(`^\x00-\x{10FFFF}`)
		}
		for i := 0; i+1 < len(re.Rune); i += 2 {
			writeRune(b, re.Rune[i])
			if re.Rune[i+1] != re.Rune[i] {
				b.WriteByte('-')
				writeRune(b, re.Rune[i+1])
			}
		}
		b.WriteByte(']')
	case syntax.OpAnyCharNotNL:
		b.WriteString(`(?-s:.)`)
	case syntax.OpAnyChar:
		b.WriteString(`(?s:.)`)
	case syntax.OpBeginLine:
		b.WriteString(`(?m:^)`)
	case syntax.OpEndLine:
		b.WriteString(`(?m:$)`)
	case syntax.OpBeginText:
		b.WriteString(`\A`)
	case syntax.OpEndText:
		if re.Flags&syntax.WasDollar != 0 {
			b.WriteString(`(?-m:$)`)
		} else {
			b.WriteString(`\z`)
		}
	case syntax.OpWordBoundary:
		b.WriteString(`\b`)
	case syntax.OpNoWordBoundary:
		b.WriteString(`\B`)
	case syntax.OpCapture:
		if re.Name != "" {
			b.WriteString(`(?P<` + re.Name + `>`)
		} else {
			b.WriteByte('(')
		}
		writePattern(b, re.Sub[0])
		b.WriteByte(')')
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		b.WriteString(`(?:`)
		writePattern(b, re.Sub[0])
		b.WriteByte(')')
		switch re.Op {
		case syntax.OpStar:
			b.WriteByte('*')
		case syntax.OpPlus:
			b.WriteByte('+')
		case syntax.OpQuest:
			b.WriteByte('?')
		default:
			b.WriteString(`{` + strconv.Itoa(re.Min))
			if re.Max != re.Min {
				b.WriteByte(',')
				if re.Max >= 0 {
					b.WriteString(strconv.Itoa(re.Max))
				}
			}
			b.WriteByte('}')
		}
		if re.Flags&syntax.NonGreedy != 0 {
			b.WriteByte('?')
		}
	case syntax.OpConcat:
		b.WriteString(`(?:`)
		for _, s := range re.Sub {
			writePattern(b, s)
		}
		b.WriteByte(')')
	case syntax.OpAlternate:
		b.WriteString(`(?:`)
		for i, s := range re.Sub {
			if i > 0 {
				b.WriteByte('|')
			}
			writePattern(b, s)
		}
		b.WriteByte(')')
	default:
		panic("scrub: unknown regexp op " + re.Op.String())
	}
}

// writeRune writes r for use in or out of a class: letters and digits as
// they are, anything else as \x{...}.
func writeRune(b *strings.Builder, r rune) {
	if r < utf8.RuneSelf && ('0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z') {
		b.WriteRune(r)
		return
	}
	b.WriteString(`\x{` + strconv.FormatInt(int64(r), 16) + `}`)
}

// advance adds the width of element re to the span [minOff, maxOff] of
// offsets where the next element can start (maxOff -1: unbounded).
func advance(minOff, maxOff int, re *syntax.Regexp) (int, int) {
	lo, hi := widths(re)
	minOff += lo
	switch {
	case maxOff < 0:
	case hi < 0:
		maxOff = -1
	default:
		maxOff += hi
	}
	return minOff, maxOff
}
