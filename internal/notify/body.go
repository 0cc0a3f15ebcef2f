package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"
)

// Limits of what one notification says. Chat services cut or refuse long
// messages: Discord takes 2,000 characters, ntfy turns a message over
// 4,096 bytes into an attachment, Slack advises 4,000 characters.
const (
	maxText        = 3500 // bytes of a text, title included
	maxDiscordText = 1900 // characters of a Discord message
)

// headline is the first line of every notification: what happened.
var headline = map[Event]string{
	Blocked:  "runner: a task is blocked and waits for you",
	Stuck:    "runner: the run is stuck",
	Complete: "runner: every task is done",
	Limit:    "runner: the run reached a limit",
	Error:    "runner: the run stopped on an error",
	Tamper:   "runner: an agent changed a protected file",
}

// ntfyTag and ntfyPriority give each event an emoji tag and a priority
// (3 is ntfy's default, 4 high) on ntfy.
var (
	ntfyTag = map[Event]string{Blocked: "question", Stuck: "warning", Complete: "white_check_mark",
		Limit: "hourglass", Error: "x", Tamper: "rotating_light"}
	ntfyPriority = map[Event]int{Blocked: 4, Stuck: 4, Complete: 3, Limit: 3, Error: 4, Tamper: 4}
)

// message is one notification as queued.
type message struct {
	event Event
	text  string // scrubbed, escaped and bounded
	at    time.Time
}

// title is the message's headline.
func (m message) title() string {
	if h, ok := headline[m.event]; ok {
		return h
	}
	return "runner: " + string(m.event)
}

// request builds the POST that delivers m to a target in the given
// format.
func request(ctx context.Context, format string, target *url.URL, m message) (*http.Request, error) {
	to := target
	var body any
	switch format {
	case FormatSlack:
		body = map[string]string{"text": "*" + m.title() + "*\n" + slackEscape(m.text)}
	case FormatDiscord:
		body = map[string]any{
			"content": cutRunes("**"+m.title()+"**\n"+m.text, maxDiscordText),
			// Text from an agent may say @everyone: nobody is pinged.
			"allowed_mentions": map[string]any{"parse": []string{}},
		}
	case FormatNtfy:
		var topic string
		to, topic = ntfyRoot(target)
		body = map[string]any{"topic": topic, "title": m.title(), "message": m.text,
			"tags": []string{ntfyTag[m.event]}, "priority": ntfyPriority[m.event]}
	default:
		body = map[string]string{"text": m.title() + "\n" + m.text, "title": m.title(), "message": m.text,
			"event": string(m.event), "time": m.at.UTC().Format(time.RFC3339)}
	}
	data, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, to.String(), bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "runner-notify")
	return req, nil
}

// slackEscape escapes the three characters Slack's message formatting
// gives a meaning (a <!channel> mention, a <url|link>).
func slackEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// cut bounds s to n bytes, cut at a character boundary and marked with
// an ellipsis.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n - len("…")
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

// cutRunes bounds s to n characters.
func cutRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, count := 0, 0
	for i < len(s) && count < n-1 {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		count++
	}
	return s[:i] + "…"
}
