package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/runner-cli/runner/internal/status"
	"github.com/runner-cli/runner/internal/watch"
)

// Server-sent events: one goroutine watches the files the status is built
// from (status.Inputs, and the notes), through the same watch.Until that
// `runner status --follow` uses; when what they say differs from the last
// time it sends every connected page a "status" event whose data is the
// status, as /api/status has it. A page that gets one reloads what else it
// shows.

const (
	maxStreams = 32               // pages connected at once
	heartbeat  = 20 * time.Second // a comment line keeps idle connections open
)

// hub fans the state's changes out to the connected streams.
type hub struct {
	mu      sync.Mutex
	last    []byte // the last event sent, whole ("event: ...\n\n")
	streams map[chan []byte]bool
}

func newHub() *hub { return &hub{streams: map[chan []byte]bool{}} }

// stamp identifies the state a page sees: the status, and the size and
// time of the files whose changes the status does not show (an iteration
// passing from one phase to the next, a question appended). The payload is
// the status event to send.
func (s *Server) stamp() (key, payload []byte) {
	var data []byte
	rep, err := status.Load(s.p)
	if err != nil {
		data, _ = json.Marshal(map[string]string{"error": err.Error()})
	} else {
		data, _ = json.Marshal(rep)
	}
	var b bytes.Buffer
	b.Write(data)
	for _, f := range s.watched() {
		if st, err := os.Stat(f); err == nil {
			fmt.Fprintf(&b, "\n%s %d %d", f, st.Size(), st.ModTime().UnixNano())
		}
	}
	return b.Bytes(), fmt.Appendf(nil, "event: status\ndata: %s\n\n", data)
}

// watched are the files whose changes are sent.
func (s *Server) watched() []string {
	return append(status.Inputs(s.p), s.p.Questions(), s.p.Assumptions(), s.p.StopRequest())
}

// watch sends an event each time the state changes, until ctx ends.
func (s *Server) watch(ctx context.Context) {
	var lastKey []byte
	watch.Until(ctx, s.watched(), watch.Wait{
		Recheck: s.recheck,
		Poll:    s.recheck,
		Options: watch.Options{OnError: func(err error) { s.log.Warn("watching .runner for changes", "err", err) }},
		Unwatched: func(err error) {
			s.log.Warn("cannot watch .runner for changes; looking every few seconds instead", "err", err)
		},
	}, func() bool {
		key, payload := s.stamp()
		if !bytes.Equal(key, lastKey) {
			lastKey = key
			s.hub.publish(payload)
		}
		return false
	})
}

// publish sends an event to every stream, replacing one the stream has
// not written yet: a slow page gets the newest state, not a backlog.
func (h *hub) publish(ev []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.last = ev
	for ch := range h.streams {
		select {
		case <-ch:
		default:
		}
		ch <- ev
	}
}

// subscribe adds a stream, primed with the last event; ok is false when
// too many are open.
func (h *hub) subscribe() (ch chan []byte, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.streams) >= maxStreams {
		return nil, false
	}
	ch = make(chan []byte, 1)
	if h.last != nil {
		ch <- h.last
	}
	h.streams[ch] = true
	return ch, true
}

func (h *hub) unsubscribe(ch chan []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.streams, ch)
}

// handleEvents is GET /events: a text/event-stream of status events,
// the first at once, until the page goes away or the server stops.
func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) {
	ch, ok := s.hub.subscribe()
	if !ok {
		http.Error(w, "too many pages are following this dashboard", http.StatusServiceUnavailable)
		return
	}
	defer s.hub.unsubscribe(ch)
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	// A page that loses the stream tries again after two seconds.
	fmt.Fprint(w, "retry: 2000\n\n")
	if rc.Flush() != nil {
		return
	}
	beat := time.NewTicker(heartbeat)
	defer beat.Stop()
	for {
		var err error
		select {
		case <-r.Context().Done():
			return
		case <-s.done:
			return
		case ev := <-ch:
			_, err = w.Write(ev)
		case <-beat.C:
			_, err = fmt.Fprint(w, ": still here\n\n")
		}
		if err != nil || rc.Flush() != nil {
			return
		}
	}
}
