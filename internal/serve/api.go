package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/status"
)

// Bounds of the notes files the dashboard shows: their ends, where the
// newest questions are.
const notesTail = 32 << 10

// handleStatus is GET /api/status: exactly what `runner status --json`
// prints, or, when the state does not load, a 500 whose JSON body's
// "error" says why.
func (s *Server) handleStatus(w http.ResponseWriter, r *http.Request) {
	rep, err := status.Load(s.p)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	var b bytes.Buffer
	if err := status.WriteJSON(&b, rep); err != nil {
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	writeBody(w, b.Bytes())
}

// running is the iteration in flight, or 0.
func (s *Server) running() int {
	rs, err := state.LoadRunState(s.p.RunState())
	if err != nil {
		return 0
	}
	if in := state.CurrentInFlight(s.p, rs); in != nil {
		return in.Iteration
	}
	return 0
}

// handleHistory is GET /api/iterations[?before=N][&limit=M]: a page of
// the history, newest first (see History).
func (s *Server) handleHistory(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	before, err := intParam(q.Get("before"), 0)
	if err != nil {
		writeError(w, http.StatusBadRequest, fmt.Errorf("before: %w", err))
		return
	}
	limit, err := intParam(q.Get("limit"), defaultHistory)
	if err != nil || limit < 1 {
		writeError(w, http.StatusBadRequest, fmt.Errorf("limit: want a number from 1 to %d", maxHistory))
		return
	}
	writeJSON(w, loadHistory(s.p, before, min(limit, maxHistory), s.running()))
}

// handleIteration is GET /api/iterations/N: one iteration (see Detail).
func (s *Server) handleIteration(w http.ResponseWriter, r *http.Request) {
	n, err := strconv.Atoi(r.PathValue("n"))
	if err != nil || n < 1 {
		writeError(w, http.StatusBadRequest, fmt.Errorf("%q is not an iteration number", r.PathValue("n")))
		return
	}
	d := loadDetail(s.p, n, s.running())
	if d == nil {
		writeError(w, http.StatusNotFound, fmt.Errorf("nothing is known of iteration %d", n))
		return
	}
	writeJSON(w, d)
}

// Notes are the ends of the notes files the agents report into.
type Notes struct {
	Questions   *Excerpt `json:"questions"`
	Assumptions *Excerpt `json:"assumptions"`
}

// handleNotes is GET /api/notes: the ends of state/questions.md and
// state/assumptions.md.
func (s *Server) handleNotes(w http.ResponseWriter, r *http.Request) {
	var n Notes
	var err error
	if n.Questions, err = readExcerpt(s.p.Questions(), 0, notesTail); err != nil {
		n.Questions = &Excerpt{Head: "cannot be shown: " + err.Error()}
	}
	if n.Assumptions, err = readExcerpt(s.p.Assumptions(), 0, notesTail); err != nil {
		n.Assumptions = &Excerpt{Head: "cannot be shown: " + err.Error()}
	}
	writeJSON(w, &n)
}

func intParam(v string, def int) (int, error) {
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is not a number", v)
	}
	return n, nil
}

// writeJSON sends v with every string escaped (inertJSON).
func writeJSON(w http.ResponseWriter, v any) {
	data, err := json.Marshal(v)
	if err == nil {
		data, err = inertJSON(data)
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	writeBody(w, append(data, '\n'))
}

func writeBody(w http.ResponseWriter, data []byte) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(data)
}

func writeError(w http.ResponseWriter, code int, err error) {
	data, _ := json.Marshal(map[string]string{"error": err.Error()})
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	w.Write(append(data, '\n'))
}
