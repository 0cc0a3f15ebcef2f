package tree

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/runner-cli/runner/internal/strictjson"
)

// A node's spend fields (SPEC §24): its own caps, max_cost_usd and
// max_tokens, and its own ladder of executors, executors. A group's hold
// for every task below it that gives none of its own.

// Spend is what a task may spend and the ladder its attempts climb, as
// its node or its nearest ancestor that says gives them: nil (or empty)
// where none does, and the config's defaults apply.
type Spend struct {
	MaxCostUSD *float64
	MaxTokens  *int64
	Executors  []string
	// CostFrom, TokensFrom and ExecutorsFrom are the ids of the nodes
	// that gave them.
	CostFrom, TokensFrom, ExecutorsFrom string
}

// SpendOf returns the spend fields task id works under; the zero Spend
// for an unknown id.
func SpendOf(ix *Index, id string) Spend {
	var s Spend
	for n := ix.Node(id); n != nil; n = ix.Parent(n.ID) {
		if s.MaxCostUSD == nil && n.MaxCostUSD != nil {
			s.MaxCostUSD, s.CostFrom = n.MaxCostUSD, n.ID
		}
		if s.MaxTokens == nil && n.MaxTokens != nil {
			s.MaxTokens, s.TokensFrom = n.MaxTokens, n.ID
		}
		if s.Executors == nil && len(n.Executors) > 0 {
			s.Executors, s.ExecutorsFrom = n.Executors, n.ID
		}
	}
	return s
}

// checkSpendFields applies the rules of the spend fields of a node.
func checkSpendFields(n *Node, bad fieldSet, emit func(f fieldSet, msg string)) {
	if bad&fMaxCostUSD == 0 && n.MaxCostUSD != nil {
		if v := *n.MaxCostUSD; math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			emit(fMaxCostUSD, fmt.Sprintf(`field "max_cost_usd" must be US dollars, 0 or more (0 lifts the cap for this task), found %v`, v))
		}
	}
	if bad&fMaxTokens == 0 && n.MaxTokens != nil && *n.MaxTokens < 0 {
		emit(fMaxTokens, fmt.Sprintf(`field "max_tokens" must be 0 or more (0 lifts the cap for this task), found %d`, *n.MaxTokens))
	}
	if bad&fExecutors != 0 {
		return
	}
	for k, name := range n.Executors {
		if !ValidID(name) {
			emit(fExecutors, fmt.Sprintf(`field "executors" item %d: %s is not an executor name (the name of the config's [executor] or a [[fallback]]: %s)`,
				k+1, quote(name), strings.Replace(idRule, "an id", "a name", 1)))
			return
		}
	}
}

// spendCap reads max_cost_usd or max_tokens (f) into n.
func (p *treeParser) spendCap(n *Node, i int32, f fieldSet, bad *fieldSet, valOff *[numNodeKeys]int32) error {
	if f == fMaxTokens {
		num, msg, voff, err := p.int()
		if err != nil {
			return err
		}
		valOff[f.bit()] = int32(voff)
		if msg != "" {
			*bad |= f
			p.c.addf(i, voff, "field %q %s", f.key(), msg)
			return nil
		}
		v := int64(num)
		n.MaxTokens = &v
		return nil
	}
	kind, err := p.peek()
	if err != nil {
		return err
	}
	if kind != '0' {
		*bad |= f
		voff, err := p.skip()
		valOff[f.bit()] = int32(voff)
		p.c.addf(i, voff, "field %q must be a number of US dollars, found %s", f.key(), strictjson.KindName(kind))
		return err
	}
	raw, voff, err := p.scalar()
	if err != nil {
		return err
	}
	valOff[f.bit()] = int32(voff)
	v, perr := strconv.ParseFloat(string(raw), 64)
	if perr != nil {
		*bad |= f
		p.c.addf(i, voff, "field %q is out of range: %s", f.key(), quote(string(raw)))
		return nil
	}
	n.MaxCostUSD = &v
	return nil
}

// cloneSpendCaps gives a cloned node caps of its own.
func cloneSpendCaps(c *Node) {
	if c.MaxCostUSD != nil {
		v := *c.MaxCostUSD
		c.MaxCostUSD = &v
	}
	if c.MaxTokens != nil {
		v := *c.MaxTokens
		c.MaxTokens = &v
	}
}

// appendSpendFields writes a node's spend fields in their canonical place.
func appendSpendFields(b []byte, in int, n *Node) []byte {
	if n.MaxCostUSD != nil {
		b = appendKey(b, in, "max_cost_usd", true)
		b = strconv.AppendFloat(b, *n.MaxCostUSD, 'g', -1, 64)
	}
	if n.MaxTokens != nil {
		b = appendKey(b, in, "max_tokens", true)
		b = strconv.AppendInt(b, *n.MaxTokens, 10)
	}
	if len(n.Executors) > 0 {
		b = appendKey(b, in, "executors", true)
		b = appendStrings(b, in, n.Executors)
	}
	return b
}
