package notify

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/runner-cli/runner/internal/lazyregexp"
	"github.com/runner-cli/runner/internal/suggest"
)

// Event is what a notification is about.
type Event string

// The events a run notifies, as `[[notify]] events` names them.
const (
	Blocked  Event = "blocked"  // a task is blocked on a question for a person
	Stuck    Event = "stuck"    // nothing is selectable: the run stops (exit 3)
	Complete Event = "complete" // every task is done
	Limit    Event = "limit"    // a usage or rate limit wait begins; an iteration, cost or token limit ended the run, or a rate limit outlasted loop.max_wait
	Error    Event = "error"    // the run stopped on an error
	Tamper   Event = "tamper"   // an agent changed a file it may not change
)

// Events lists every event, in the order the README gives them.
var Events = []Event{Blocked, Stuck, Complete, Limit, Error, Tamper}

// Body formats (Target.Format).
const (
	FormatJSON    = "json"    // {"text", "title", "message", "event", "time"}: Slack-style webhooks and scripts
	FormatSlack   = "slack"   // {"text"}, with Slack's control characters escaped
	FormatDiscord = "discord" // {"content", "allowed_mentions"}: nobody is pinged
	FormatNtfy    = "ntfy"    // ntfy's JSON publishing: {"topic", "title", "message", "tags", "priority"} to the server root
)

var formats = []string{FormatJSON, FormatSlack, FormatDiscord, FormatNtfy}

// Target is one `[[notify]]` section of config.toml.
type Target struct {
	// URL receives a POST per notification.
	URL string `toml:"url" json:"url"`
	// Events are the events sent to URL; none means every event.
	Events []string `toml:"events" json:"events,omitempty"`
	// Format is the body's shape; "" means the one the URL's host calls
	// for (see Format).
	Format string `toml:"format" json:"format,omitempty"`
}

// ntfyTopic is what ntfy accepts as a topic name.
var ntfyTopic = lazyregexp.New(`^[-_A-Za-z0-9]{1,64}$`)

// Problem is one thing wrong with a Target: the key it is about ("url",
// "events[1]", "format") and what is wrong. No message quotes the URL.
type Problem struct {
	Key string
	Msg string
}

// Problems lists what is wrong with t, key by key, for config.toml's
// errors. A message never quotes the URL: a webhook URL is a secret,
// whoever has it can post.
func (t Target) Problems() []Problem {
	var out []Problem
	u, err := url.Parse(t.URL)
	switch {
	case strings.TrimSpace(t.URL) == "":
		out = append(out, Problem{"url", `every [[notify]] needs a url, such as "https://ntfy.sh/my-topic"`})
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		out = append(out, Problem{"url", "want an http:// or https:// URL"})
	}
	for i, e := range t.Events {
		if !slices.Contains(Events, Event(e)) {
			msg := fmt.Sprintf("unknown event %q; the events are %s", e, eventList())
			if s := suggest.Closest(e, eventNames(), func(string) int { return 2 }); s != "" {
				msg = fmt.Sprintf("unknown event %q (did you mean %q?); the events are %s", e, s, eventList())
			}
			out = append(out, Problem{fmt.Sprintf("events[%d]", i), msg})
		}
	}
	if t.Format != "" && !slices.Contains(formats, t.Format) {
		out = append(out, Problem{"format", fmt.Sprintf("unknown format %q; want %s (or none, to go by the URL)", t.Format, strings.Join(formats, ", "))})
	}
	if len(out) == 0 && t.format() == FormatNtfy {
		if _, topic := ntfyRoot(u); !ntfyTopic.MatchString(topic) {
			out = append(out, Problem{"url", fmt.Sprintf("an ntfy URL ends with its topic (https://ntfy.sh/my-topic); %q is not one", topic)})
		}
	}
	return out
}

// Validate says what is wrong with t (the first of its Problems), naming
// the URL without its path and query.
func (t Target) Validate() error {
	ps := t.Problems()
	if len(ps) == 0 {
		return nil
	}
	if ps[0].Key == "url" {
		return fmt.Errorf("notify url %q: %s", Redact(t.URL), ps[0].Msg)
	}
	return fmt.Errorf("notify url %s: %s", Redact(t.URL), ps[0].Msg)
}

// Wants reports whether t takes notifications of e.
func (t Target) Wants(e Event) bool {
	return len(t.Events) == 0 || slices.Contains(t.Events, string(e))
}

// Format is the body format t is sent: its own, or the one its URL's
// host calls for: Slack's incoming webhooks (hooks.slack.com), Discord's
// webhooks (discord.com/api/webhooks/...), ntfy.sh; FormatJSON otherwise.
func (t Target) format() string {
	if t.Format != "" {
		return t.Format
	}
	u, err := url.Parse(t.URL)
	if err != nil {
		return FormatJSON
	}
	host := strings.ToLower(u.Hostname())
	switch {
	case host == "hooks.slack.com":
		return FormatSlack
	case (host == "discord.com" || host == "discordapp.com" || strings.HasSuffix(host, ".discord.com")) &&
		strings.HasPrefix(u.Path, "/api/webhooks/"):
		return FormatDiscord
	case host == "ntfy.sh":
		return FormatNtfy
	}
	return FormatJSON
}

// ntfyRoot splits an ntfy topic URL into the server's root, where JSON
// is published, and the topic: https://ntfy.example.com/sub/alerts?auth=x
// is https://ntfy.example.com/sub/?auth=x and alerts.
func ntfyRoot(u *url.URL) (root *url.URL, topic string) {
	r := *u
	path := strings.TrimSuffix(u.Path, "/")
	i := strings.LastIndexByte(path, '/')
	r.Path, topic = path[:i+1], path[i+1:]
	r.RawPath = ""
	if r.Path == "" {
		r.Path = "/"
	}
	return &r, topic
}

// Redact is a URL as logs and errors show it: its scheme and host, the
// rest elided, since webhook URLs carry their secret in the path or query.
func Redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "(a URL that does not parse)"
	}
	if u.Path == "" && u.RawQuery == "" {
		return u.Scheme + "://" + u.Host
	}
	return u.Scheme + "://" + u.Host + "/…"
}

func eventList() string { return strings.Join(eventNames(), ", ") }

func eventNames() []string {
	names := make([]string, len(Events))
	for i, e := range Events {
		names[i] = string(e)
	}
	return names
}
