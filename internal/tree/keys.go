package tree

import (
	"fmt"
	"strings"

	"github.com/runner-cli/runner/internal/suggest"
)

var topKeys = []string{"version", "root"}

// Aliases are keys people plausibly write for a field, keyed by their
// normalized form (see normKey).
var (
	topAliases  = map[string]string{"tree": "root", "node": "root", "task": "root", "ver": "version"}
	nodeAliases = map[string]string{
		"deps": "depends_on", "dependencies": "depends_on", "depends": "depends_on", "dependson": "depends_on",
		"after": "depends_on", "needs": "depends_on", "requires": "depends_on", "dependon": "depends_on",
		"name": "title", "description": "goal", "desc": "goal", "details": "goal",
		"tests": "checks", "check": "checks", "verify": "checks", "guards": "checks",
		"remove": "removes", "removed": "removes", "removestests": "removes", "removedtests": "removes", "deletes": "removes",
		"acceptancecriteria": "acceptance", "criteria": "acceptance", "accept": "acceptance",
		"tasks": "children", "subtasks": "children", "nodes": "children", "items": "children", "child": "children",
		"retries": "max_attempts", "maxretries": "max_attempts", "maxtries": "max_attempts", "attemptlimit": "max_attempts",
		"state": "status", "reason": "blocked_reason", "tries": "attempts",
		"maxcost": "max_cost_usd", "costcap": "max_cost_usd", "budget": "max_cost_usd", "maxcostusd": "max_cost_usd", "maxusd": "max_cost_usd",
		"tokencap": "max_tokens", "tokens": "max_tokens", "maxtoken": "max_tokens",
		"executor": "executors", "escalate": "executors", "ladder": "executors", "agents": "executors",
	}
)

// lookupKeyBytes finds key among the node keys without allocating.
func lookupKeyBytes(key []byte) (fieldSet, bool) {
	switch string(key) {
	case "id":
		return fID, true
	case "title":
		return fTitle, true
	case "goal":
		return fGoal, true
	case "acceptance":
		return fAcceptance, true
	case "checks":
		return fChecks, true
	case "removes":
		return fRemoves, true
	case "depends_on":
		return fDependsOn, true
	case "max_attempts":
		return fMaxAttempts, true
	case "max_cost_usd":
		return fMaxCostUSD, true
	case "max_tokens":
		return fMaxTokens, true
	case "executors":
		return fExecutors, true
	case "status":
		return fStatus, true
	case "attempts":
		return fAttempts, true
	case "blocked_reason":
		return fBlockedReason, true
	case "children":
		return fChildren, true
	}
	return 0, false
}

// lookupKey finds key among keys, returning its fieldSet bit.
func lookupKey(key string, keys []string) (fieldSet, bool) {
	for i, k := range keys {
		if k == key {
			return 1 << i, true
		}
	}
	return 0, false
}

// unknownField words the error for an unknown key, with a suggestion when
// the key looks like a known one written differently or misspelled.
func unknownField(key string, keys []string, aliases map[string]string) string {
	msg := "unknown field " + quote(key)
	if s := closestField(key, keys, aliases); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	return msg
}

// closestField returns the field an unknown key was probably meant to be:
// the same key written another way (case, dashes), a known alias, or a
// field within two edits (one for short names).
func closestField(key string, keys []string, aliases map[string]string) string {
	if len(key) > 64 {
		return ""
	}
	nk := normKey(key)
	for _, k := range keys {
		if normKey(k) == nk {
			return k
		}
	}
	if a, ok := aliases[nk]; ok {
		return a
	}
	return suggest.Closest(key, keys, func(k string) int {
		if len(k) <= 4 {
			return 1
		}
		return 2
	})
}

// normKey lowercases key and drops '_', '-' and spaces, so that
// dependsOn, depends-on and DEPENDS_ON all read as "dependson".
func normKey(key string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(key) {
		if r != '_' && r != '-' && r != ' ' {
			b.WriteRune(r)
		}
	}
	return b.String()
}
