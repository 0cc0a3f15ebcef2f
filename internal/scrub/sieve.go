package scrub

import (
	"math/bits"
	"regexp/syntax"
)

// A sieve is a quick test that rules out most of the starts a rule's anchor
// proposes, before the regular expression is tried: it walks a leading part
// of the pattern (shape.pre) over the text, keeping the set of offsets from
// the start that a match of the part could reach. When the set runs empty,
// the pattern cannot match there. The test is conservative: it skips
// zero-width assertions, and it says "maybe" when it meets a byte that is
// not ASCII.
type sieve struct {
	node  *syntax.Regexp
	class map[*syntax.Regexp]*[256]bool
}

// sieveWidth bounds the offsets a sieve tracks.
const sieveWidth = 128

type offsets [sieveWidth / 64]uint64

func (o *offsets) set(i int)           { o[i>>6] |= 1 << (i & 63) }
func (o offsets) has(i int) bool       { return o[i>>6]&(1<<(i&63)) != 0 }
func (o offsets) empty() bool          { return o == offsets{} }
func (o offsets) or(p offsets) offsets { return offsets{o[0] | p[0], o[1] | p[1]} }

// first returns the smallest offset in o, or sieveWidth.
func (o offsets) first() int {
	for w, m := range o {
		if m != 0 {
			return w*64 + bits.TrailingZeros64(m)
		}
	}
	return sieveWidth
}

// each calls f for every offset in o below limit, in order.
func (o offsets) each(limit int, f func(i int)) {
	for w, m := range o {
		for ; m != 0; m &= m - 1 {
			i := w*64 + bits.TrailingZeros64(m)
			if i >= limit {
				return
			}
			f(i)
		}
	}
}

func newSieve(pre *syntax.Regexp) *sieve {
	s := &sieve{node: pre, class: map[*syntax.Regexp]*[256]bool{}}
	var walk func(re *syntax.Regexp)
	walk = func(re *syntax.Regexp) {
		if re.Op == syntax.OpCharClass {
			var t [256]bool
			for i := 0; i+1 < len(re.Rune); i += 2 {
				for r := re.Rune[i]; r <= re.Rune[i+1] && r < 128; r++ {
					t[r] = true
				}
			}
			s.class[re] = &t
		}
		for _, sub := range re.Sub {
			walk(sub)
		}
	}
	walk(pre)
	return s
}

// may reports whether a match can start at text[c:].
func (s *sieve) may(text string, c int) bool {
	var start offsets
	start.set(0)
	unsure := false
	return !s.walk(s.node, text[c:min(len(text), c+sieveWidth-1)], start, &unsure).empty() || unsure
}

// walk returns the offsets a match of re can end at when it starts at one
// of the offsets in from. It sets unsure when it meets a byte that is not
// ASCII, where it cannot tell.
func (s *sieve) walk(re *syntax.Regexp, t string, from offsets, unsure *bool) offsets {
	if from.empty() {
		return from
	}
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return from
	case syntax.OpLiteral:
		var out offsets
		fold := re.Flags&syntax.FoldCase != 0
		n := len(re.Rune)
		limit := min(len(t), sieveWidth-1) - n + 1
		for w, m := range from {
			for ; m != 0; m &= m - 1 {
				i := w*64 + bits.TrailingZeros64(m)
				if i >= limit {
					break
				}
				ok := true
				for j, r := range re.Rune {
					b := t[i+j]
					switch {
					case b >= 0x80:
						*unsure, ok = true, false
					case r >= 0x80:
						ok = false // the text here is ASCII
					case fold:
						ok = lowerASCII[b] == lowerASCII[r]
					default:
						ok = rune(b) == r
					}
					if !ok {
						break
					}
				}
				if ok {
					out.set(i + n)
				}
			}
		}
		return out
	case syntax.OpCharClass:
		class := s.class[re]
		var out offsets
		limit := min(len(t), sieveWidth-1)
		for w, m := range from {
			for ; m != 0; m &= m - 1 {
				i := w*64 + bits.TrailingZeros64(m)
				if i >= limit {
					break
				}
				if b := t[i]; class[b] {
					out.set(i + 1)
				} else if b >= 0x80 {
					*unsure = true
				}
			}
		}
		return out
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		var out offsets
		from.each(min(len(t), sieveWidth-1), func(i int) {
			switch {
			case t[i] >= 0x80:
				*unsure = true
			case re.Op == syntax.OpAnyChar || t[i] != '\n':
				out.set(i + 1)
			}
		})
		return out
	case syntax.OpCapture:
		return s.walk(re.Sub[0], t, from, unsure)
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			from = s.walk(sub, t, from, unsure)
		}
		return from
	case syntax.OpAlternate:
		var out offsets
		for _, sub := range re.Sub {
			out = out.or(s.walk(sub, t, from, unsure))
		}
		return out
	case syntax.OpQuest:
		return from.or(s.walk(re.Sub[0], t, from, unsure))
	case syntax.OpStar, syntax.OpPlus, syntax.OpRepeat:
		lo, hi := 0, -1
		switch re.Op {
		case syntax.OpPlus:
			lo = 1
		case syntax.OpRepeat:
			lo, hi = re.Min, re.Max
		}
		if class := s.class[re.Sub[0]]; class != nil {
			// A run of one class: walk it once from each offset.
			var out offsets
			limit := min(len(t), sieveWidth-1)
			for w, m := range from {
				for ; m != 0; m &= m - 1 {
					i := w*64 + bits.TrailingZeros64(m)
					if i > limit {
						break
					}
					if lo == 0 {
						out.set(i)
					}
					for n := 1; i < limit && (hi < 0 || n <= hi); n++ {
						if b := t[i]; !class[b] {
							if b >= 0x80 {
								*unsure = true
							}
							break
						}
						i++
						if n >= lo {
							out.set(i)
						}
					}
				}
			}
			return out
		}
		var out offsets
		if lo == 0 {
			out = from
		}
		cur := from
		for k := 1; hi < 0 || k <= hi; k++ {
			next := s.walk(re.Sub[0], t, cur, unsure)
			if k >= lo {
				if next.or(out) == out && k > lo {
					break // nothing new can be reached
				}
				out = out.or(next)
			}
			if next.empty() {
				break
			}
			cur = next
		}
		return out
	}
	// Anything else: every offset from here on is possible.
	var all offsets
	for j := from.first(); j <= len(t) && j < sieveWidth; j++ {
		all.set(j)
	}
	return all
}
