// Package serve is `runner serve`: a local, read-only web dashboard of a
// repository's run, for the person who slept while it worked. It shows
// the tree with statuses and the questions of blocked tasks, the
// iteration in flight, the history, and each iteration's prompt, logs,
// guard results and commit; the page follows the run live through
// server-sent events.
//
// It only reads: it never takes the runner's lock and never writes under
// .runner/; every file is read bounded, through internal/fsutil (no link
// followed under .runner/, no blocking on a named pipe). The page, its
// script and its style are embedded in the binary; it builds its DOM
// with textContent only, under a Content-Security-Policy that allows no
// inline script. Without a token it answers only on and to loopback; with
// one every request carries it (see guard).
package serve

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/state"
)

// DefaultAddr is where `runner serve` listens unless told otherwise.
const DefaultAddr = "127.0.0.1:7777"

// Logger receives the server's warnings; *log.Logger of charmbracelet/log
// is one.
type Logger interface {
	Warn(msg any, keyvals ...any)
}

type nopLogger struct{}

func (nopLogger) Warn(any, ...any) {}

// Options configure a Server.
type Options struct {
	Paths state.Paths
	// Token, when set, is required of every request (see guard).
	Token string
	// Recheck is how often the state is looked at without a change
	// notification: a runner that exits frees its lock silently. 0 means
	// two seconds.
	Recheck time.Duration
	Logger  Logger
}

// Server is the dashboard of one repository.
type Server struct {
	p       state.Paths
	token   string
	session string
	recheck time.Duration
	log     Logger
	hub     *hub

	ctx       context.Context // ends with Close
	cancel    context.CancelFunc
	done      <-chan struct{}
	watchOnce sync.Once
	closeOnce sync.Once
}

// New makes the dashboard of the repository at o.Paths. Its .runner/ is
// confined (fsutil.Confine) until Close.
func New(o Options) (*Server, error) {
	if err := fsutil.Confine(o.Paths.Dir); err != nil {
		return nil, err
	}
	s := &Server{p: o.Paths, token: o.Token, recheck: o.Recheck, log: o.Logger, hub: newHub()}
	if s.recheck <= 0 {
		s.recheck = 2 * time.Second
	}
	if s.log == nil {
		s.log = nopLogger{}
	}
	if s.token != "" {
		s.session = sessionValue(s.token)
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.done = s.ctx.Done()
	return s, nil
}

// Close ends the event streams and the watch, and releases .runner/.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		s.cancel()
		fsutil.Release(s.p.Dir)
	})
}

// Handler is the dashboard: its page, its API and its event stream,
// behind guard. The state is watched from the first event stream on.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.handleAsset)
	mux.HandleFunc("GET /assets/{name}", s.handleAsset)
	mux.HandleFunc("GET /api/status", s.handleStatus)
	mux.HandleFunc("GET /api/iterations", s.handleHistory)
	mux.HandleFunc("GET /api/iterations/{n}", s.handleIteration)
	mux.HandleFunc("GET /api/notes", s.handleNotes)
	mux.HandleFunc("GET /events", func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead {
			// The stream's headers, without a stream that never ends.
			w.Header().Set("Content-Type", "text/event-stream")
			w.Header().Set("Cache-Control", "no-store")
			return
		}
		s.watchOnce.Do(func() { go s.watch(s.ctx) })
		s.handleEvents(w, r)
	})
	return s.guard(mux)
}

// Serve answers on ln until ctx ends, then closes the streams and shuts
// the server down, waiting a few seconds for requests under way.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		// No WriteTimeout: an event stream stays open as long as its page.
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		s.Close()
		return err
	case <-ctx.Done():
	}
	s.Close()
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := srv.Shutdown(shut)
	if e := <-errc; !errors.Is(e, http.ErrServerClosed) && err == nil {
		err = e
	}
	return err
}
