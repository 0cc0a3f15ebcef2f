package serve

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"strings"
)

// securityHeaders go on every response. The policy lets the page run
// only its own script and style, served from here (no inline script, no
// other origin, no eval), and connect only here; nothing may frame it.
var securityHeaders = map[string]string{
	"Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
		"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
	"X-Content-Type-Options":       "nosniff",
	"X-Frame-Options":              "DENY",
	"Referrer-Policy":              "no-referrer",
	"Cross-Origin-Opener-Policy":   "same-origin",
	"Cross-Origin-Resource-Policy": "same-origin",
}

// sessionCookie carries the token's proof for a browser, which cannot
// put an Authorization header on a page it navigates to, nor on an
// EventSource.
const sessionCookie = "runner_session"

// IsLoopback reports whether a listen address binds to this machine only:
// "localhost" or a loopback IP. An empty host (":7777") binds every
// interface.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	return isLoopbackHost(host)
}

func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// CheckAddr refuses to serve beyond this machine without a token.
func CheckAddr(addr, token string) error {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return fmt.Errorf("--addr %q: want HOST:PORT, such as 127.0.0.1:7777", addr)
	}
	if token == "" && !IsLoopback(addr) {
		return fmt.Errorf("--addr %s is not a loopback address, and anyone who can reach it would read the run's prompts, logs "+
			"and questions: give a --token (or RUNNER_SERVE_TOKEN) to serve beyond this machine, or bind 127.0.0.1", addr)
	}
	return nil
}

// sessionValue is what the session cookie holds: derived from the token,
// so that the token itself is not stored in the browser (where another
// program on the same host name could read it: cookies do not keep
// ports apart).
func sessionValue(token string) string {
	sum := sha256.Sum256([]byte("runner serve session\x00" + token))
	return hex.EncodeToString(sum[:])
}

func equal(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// allowed are the methods the dashboard answers: HEAD is GET without
// the body (an event stream's headers only), as curl -I and link
// checkers ask.
const allowed = "GET, HEAD"

// guard wraps the dashboard's handler with what every request goes
// through: the security headers, GET and HEAD only, the Host check that keeps a
// page of another site from reading a token-less dashboard through DNS
// rebinding, and the token.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, v := range securityHeaders {
			w.Header().Set(k, v)
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", allowed)
			http.Error(w, "the dashboard is read-only: only GET (and HEAD) requests", http.StatusMethodNotAllowed)
			return
		}
		if s.token == "" {
			host := r.Host
			if h, _, err := net.SplitHostPort(r.Host); err == nil {
				host = h
			}
			if !isLoopbackHost(host) {
				http.Error(w, "this dashboard answers only to localhost (no --token was given)", http.StatusForbidden)
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		if r.URL.Path == "/" && r.URL.Query().Has("token") {
			s.exchange(w, r)
			return
		}
		if !s.authorized(r) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="runner"`)
			http.Error(w, "this dashboard needs its token: open /?token=TOKEN once in a browser, "+
				"or send Authorization: Bearer TOKEN", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// authorized reports whether r carries the token: in an Authorization
// header, or as the session cookie a browser got from exchange.
func (s *Server) authorized(r *http.Request) bool {
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, value, ok := strings.Cut(h, " ")
		return ok && strings.EqualFold(scheme, "Bearer") && equal(strings.TrimSpace(value), s.token)
	}
	c, err := r.Cookie(sessionCookie)
	return err == nil && equal(c.Value, s.session)
}

// exchange takes the token from the page's URL once: a right one sets
// the session cookie (HttpOnly: the page's script never sees it; SameSite
// Strict: no other site's page sends it) and sends the browser on to the
// page without the token in its address.
func (s *Server) exchange(w http.ResponseWriter, r *http.Request) {
	if !equal(r.URL.Query().Get("token"), s.token) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="runner"`)
		http.Error(w, "wrong token", http.StatusUnauthorized)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: s.session, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, "/", http.StatusSeeOther)
}
