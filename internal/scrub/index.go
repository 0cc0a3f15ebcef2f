package scrub

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// needleIndex finds, in one pass over a text, every occurrence of the
// rules' keywords and anchors, compared ASCII-case-insensitively. Needles
// are at least two bytes long. Those of three bytes or more are looked up
// by a hash of their folded first three bytes (a bitset in front of the
// table, so that the common miss touches only 8 KiB), two-byte needles by a
// bitset of byte pairs.
type needleIndex struct {
	bits2   [1 << 10]uint64 // bit p set: pair p is a two-byte needle
	uses2   map[uint16][]use
	bits3   [1 << 10]uint64 // bit h set: slot3[h] is not empty
	slot3   []uint16        // 1<<16 entries: 1 + index into groups3 of the needles whose trigram hashes there
	groups3 [][]needle
	nrules  int
	always  []int // rules without keywords: they run on every text
	anchors []int // per rule: number of anchor strings (0: none)
}

func hash3(t uint32) uint32 { return (t * 0x9E3779B1) >> 16 }

type needle struct {
	text string // lower case
	uses []use
}

// use says what an occurrence of a needle means for a rule: a keyword lets
// the rule run, an anchor marks where its matches can start, and a
// required literal (shape.req) where they can reach.
type use struct {
	rule int
	kind int // useKeyword, useAnchor, or useReq + the index in shape.req
}

const (
	useKeyword = iota
	useAnchor
	useReq
)

var lowerASCII = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
		if 'A' <= i && i <= 'Z' {
			t[i] = byte(i + 'a' - 'A')
		}
	}
	return t
}()

func buildIndex(rules []*rule) *needleIndex {
	x := &needleIndex{uses2: map[uint16][]use{}, slot3: make([]uint16, 1<<16), nrules: len(rules), anchors: make([]int, len(rules))}
	var needles []needle
	add := func(text string, u use) {
		text = strings.ToLower(text)
		if len(text) < 2 {
			panic(fmt.Sprintf("scrub: rule %q: needle %q is shorter than two bytes", rules[u.rule].name, text))
		}
		at := slices.IndexFunc(needles, func(n needle) bool { return n.text == text })
		if at < 0 {
			needles = append(needles, needle{text: text})
			at = len(needles) - 1
		}
		if !slices.Contains(needles[at].uses, u) {
			needles[at].uses = append(needles[at].uses, u)
		}
	}
	for i, r := range rules {
		if len(r.keywords) == 0 {
			x.always = append(x.always, i)
		}
		for _, k := range r.keywords {
			add(k, use{rule: i, kind: useKeyword})
		}
		for _, a := range r.shape().anchors {
			add(a, use{rule: i, kind: useAnchor})
		}
		for k, q := range r.shape().req {
			for _, l := range q.set {
				add(l, use{rule: i, kind: useReq + k})
			}
		}
		x.anchors[i] = len(r.shape().anchors)
	}
	for _, n := range needles {
		if len(n.text) == 2 {
			p := uint16(n.text[0])<<8 | uint16(n.text[1])
			x.bits2[p>>6] |= 1 << (p & 63)
			x.uses2[p] = append(x.uses2[p], n.uses...)
			continue
		}
		h := hash3(uint32(n.text[0])<<16 | uint32(n.text[1])<<8 | uint32(n.text[2]))
		if x.slot3[h] == 0 {
			x.groups3 = append(x.groups3, nil)
			x.slot3[h] = uint16(len(x.groups3))
			x.bits3[h>>6] |= 1 << (h & 63)
		}
		g := x.slot3[h] - 1
		x.groups3[g] = append(x.groups3[g], n)
	}
	return x
}

// hits is the result of a scan: which rules may run, and where the
// anchors and required literals of each rule occur.
type hits struct {
	keyword []bool    // per rule: one of its keywords occurs
	anchors [][]int   // per rule: start offsets of its anchors' occurrences, in increasing order
	req     [][][]int // per rule and required literal set: start offsets, in increasing order
}

var hitsPool sync.Pool

// scan returns the hits of text, leaving out the markers (sorted spans of
// text): a rule's name in a marker is no keyword. The caller hands the
// hits back with release when it is done with them.
func (x *needleIndex) scan(text string, markers []span) *hits {
	h, _ := hitsPool.Get().(*hits)
	if h == nil || len(h.keyword) != x.nrules {
		h = &hits{keyword: make([]bool, x.nrules), anchors: make([][]int, x.nrules), req: make([][][]int, x.nrules)}
	}
	limit, m := len(text), 0
	if len(markers) > 0 {
		limit = markers[0].start
	}
	for i := 0; i+1 < len(text); i++ {
		if i >= limit {
			i = markers[m].end - 1
			m++
			limit = len(text)
			if m < len(markers) {
				limit = markers[m].start
			}
			continue
		}
		a, b := lowerASCII[text[i]], lowerASCII[text[i+1]]
		if p := uint16(a)<<8 | uint16(b); x.bits2[p>>6]&(1<<(p&63)) != 0 && i+1 < limit {
			h.add(x.uses2[p], i)
		}
		if i+2 >= limit {
			continue
		}
		hh := hash3(uint32(a)<<16 | uint32(b)<<8 | uint32(lowerASCII[text[i+2]]))
		if x.bits3[hh>>6]&(1<<(hh&63)) == 0 {
			continue
		}
		for _, n := range x.groups3[x.slot3[hh]-1] {
			if hasPrefixFold(text[i:limit], n.text) {
				h.add(n.uses, i)
			}
		}
	}
	for _, r := range x.always {
		h.keyword[r] = true
	}
	return h
}

// release empties h and keeps it for the next scan.
func (h *hits) release() {
	clear(h.keyword)
	for i := range h.anchors {
		h.anchors[i] = h.anchors[i][:0]
	}
	for i := range h.req {
		for k := range h.req[i] {
			h.req[i][k] = h.req[i][k][:0]
		}
	}
	hitsPool.Put(h)
}

// add records an occurrence at i of a needle with uses.
func (h *hits) add(uses []use, i int) {
	for _, u := range uses {
		switch {
		case u.kind == useKeyword:
			h.keyword[u.rule] = true
		case u.kind == useAnchor:
			if a := h.anchors[u.rule]; len(a) == 0 || a[len(a)-1] != i {
				h.anchors[u.rule] = append(a, i)
			}
		default:
			k := u.kind - useReq
			for len(h.req[u.rule]) <= k {
				h.req[u.rule] = append(h.req[u.rule], nil)
			}
			if a := h.req[u.rule][k]; len(a) == 0 || a[len(a)-1] != i {
				h.req[u.rule][k] = append(a, i)
			}
		}
	}
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
