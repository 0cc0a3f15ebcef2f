package executor

import (
	"strconv"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/lazyregexp"
)

// Reset times the agents print with their usage limits:
//
//	Codex:  "... or try again at 7:33 AM."  "try again at Nov 23rd, 2025 7:33 AM"
//	Claude: "You've hit your usage limit · resets 3pm (Europe/Berlin)"
//	        "... · resets Jan 5, 3:30pm"
//	others: "try again in 2 hours 5 minutes", "retry after 30 seconds",
//	        "Retry-After: 30", "usage limit reached|1767225600" (Unix seconds)
var (
	reTryAgainAt = lazyregexp.New(`(?i)\btry again at\s+(?:([a-z]{3})[a-z]*\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(?:(\d{4}),?\s+)?)?(\d{1,2}):(\d{2})\s*([ap])\.?m\.?`)
	reResets     = lazyregexp.New(`(?i)\bresets?\s+(?:at\s+)?(?:([a-z]{3})[a-z]*\.?\s+(\d{1,2}),?\s+(?:(\d{4}),?\s+)?(?:at\s+)?)?(\d{1,2})(?::(\d{2}))?\s*([ap])\.?m\.?(?:\s*\(([^)\s]+)\))?`)
	reIn         = lazyregexp.New(`(?i)(?:try again|retry|resets?|available)\s+in\s+((?:\d+\s*(?:days?|d|hours?|hrs?|h|minutes?|mins?|m|seconds?|secs?|s)\b[\s,]*(?:and\s+)?)+)`)
	reInPart     = lazyregexp.New(`(?i)(\d+)\s*(days?|d|hours?|hrs?|h|minutes?|mins?|m|seconds?|secs?|s)\b`)
	reAfter      = lazyregexp.New(`(?i)retry[- ]after:?\s*(\d+)\s*(?:s|sec|secs|seconds)?\b`)
	reEpoch      = lazyregexp.New(`(?i)limit[^|\n]{0,40}\|(\d{10})\b`)
)

// clockSlack is how far in the past a time of day may lie and still mean
// "now": the agents print minutes, so a reset at 7:33:40 shows as 7:33.
const clockSlack = 5 * time.Minute

// ParseResetTime finds the time a usage limit resets in text, as the
// agents print it (see the formats above), relative to now. A time of day
// without a date is the next such time in now's location (or the one named
// in parentheses); one within a few minutes before now means now.
func ParseResetTime(text string, now time.Time) (time.Time, bool) {
	if m := reEpoch.FindStringSubmatch(text); m != nil {
		sec, _ := strconv.ParseInt(m[1], 10, 64)
		return time.Unix(sec, 0).In(now.Location()), true
	}
	if m := reTryAgainAt.FindStringSubmatch(text); m != nil {
		return clockTime(now, now.Location(), m[1], m[2], m[3], m[4], m[5], m[6])
	}
	if m := reResets.FindStringSubmatch(text); m != nil {
		loc := now.Location()
		if m[7] != "" {
			if l, err := time.LoadLocation(m[7]); err == nil {
				loc = l
			}
		}
		return clockTime(now, loc, m[1], m[2], m[3], m[4], m[5], m[6])
	}
	if m := reIn.FindStringSubmatch(text); m != nil {
		var d time.Duration
		for _, p := range reInPart.FindAllStringSubmatch(m[1], -1) {
			n, _ := strconv.Atoi(p[1])
			d += time.Duration(n) * unit(p[2])
		}
		return now.Add(d), true
	}
	if m := reAfter.FindStringSubmatch(text); m != nil {
		n, _ := strconv.Atoi(m[1])
		return now.Add(time.Duration(n) * time.Second), true
	}
	return time.Time{}, false
}

func unit(s string) time.Duration {
	switch s = strings.ToLower(s); {
	case strings.HasPrefix(s, "d"):
		return 24 * time.Hour
	case strings.HasPrefix(s, "h"):
		return time.Hour
	case strings.HasPrefix(s, "m"):
		return time.Minute
	}
	return time.Second
}

// clockTime builds the reset time from its parts: an optional month, day
// and year, then hour, minute ("" = 0) and "a" or "p".
func clockTime(now time.Time, loc *time.Location, mon, day, year, hour, minute, ampm string) (time.Time, bool) {
	h, _ := strconv.Atoi(hour)
	mi := 0
	if minute != "" {
		mi, _ = strconv.Atoi(minute)
	}
	if h < 1 || h > 12 || mi > 59 {
		return time.Time{}, false
	}
	h %= 12
	if strings.EqualFold(ampm, "p") {
		h += 12
	}
	ref := now.In(loc)
	if mon == "" {
		t := time.Date(ref.Year(), ref.Month(), ref.Day(), h, mi, 0, 0, loc)
		if t.Before(ref.Add(-clockSlack)) {
			t = t.AddDate(0, 0, 1)
		} else if t.Before(ref) {
			t = ref
		}
		return t.In(now.Location()), true
	}
	m, err := time.Parse("Jan", strings.ToUpper(mon[:1])+strings.ToLower(mon[1:3]))
	if err != nil {
		return time.Time{}, false
	}
	d, _ := strconv.Atoi(day)
	if d < 1 || d > 31 {
		return time.Time{}, false
	}
	y := ref.Year()
	if year != "" {
		y, _ = strconv.Atoi(year)
	}
	t := time.Date(y, m.Month(), d, h, mi, 0, 0, loc)
	if year == "" && t.Before(ref.Add(-clockSlack)) {
		t = t.AddDate(1, 0, 0)
	}
	if t.Before(ref) {
		t = ref
	}
	return t.In(now.Location()), true
}
