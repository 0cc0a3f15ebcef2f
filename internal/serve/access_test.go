package serve

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

func body(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestToken(t *testing.T) {
	p := repo(t)
	_, ts := server(t, p, "s3cret", 0)
	for _, tt := range []struct {
		name   string
		path   string
		header []string
		want   int
	}{
		{"no token", "/api/status", nil, http.StatusUnauthorized},
		{"no token for the page", "/", nil, http.StatusUnauthorized},
		{"no token for the events", "/events", nil, http.StatusUnauthorized},
		{"a wrong token", "/api/status", []string{"Authorization", "Bearer nope"}, http.StatusUnauthorized},
		{"another scheme", "/api/status", []string{"Authorization", "Basic s3cret"}, http.StatusUnauthorized},
		{"the token", "/api/status", []string{"Authorization", "Bearer s3cret"}, http.StatusOK},
		{"the token, for the page", "/", []string{"Authorization", "Bearer s3cret"}, http.StatusOK},
		{"the token in the query of an API call", "/api/status?token=s3cret", nil, http.StatusUnauthorized},
		{"a wrong token in the page's URL", "/?token=nope", nil, http.StatusUnauthorized},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp := get(t, http.MethodGet, ts.URL+tt.path, tt.header...)
			b := body(t, resp)
			if resp.StatusCode != tt.want {
				t.Fatalf("GET %s: %d %s; want %d", tt.path, resp.StatusCode, b, tt.want)
			}
			if tt.want == http.StatusUnauthorized && resp.Header.Get("WWW-Authenticate") == "" {
				t.Error("a 401 without WWW-Authenticate")
			}
			if strings.Contains(b, "s3cret") {
				t.Errorf("the response shows the token: %s", b)
			}
		})
	}

	t.Run("the page takes the token once from its URL", func(t *testing.T) {
		resp := get(t, http.MethodGet, ts.URL+"/?token=s3cret")
		body(t, resp)
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" {
			t.Fatalf("GET /?token=: %d to %q; want 303 to / (the token out of the address)", resp.StatusCode, resp.Header.Get("Location"))
		}
		var cookie *http.Cookie
		for _, c := range resp.Cookies() {
			if c.Name == sessionCookie {
				cookie = c
			}
		}
		if cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode || strings.Contains(cookie.Value, "s3cret") {
			t.Fatalf("session cookie %+v; want HttpOnly, SameSite=Strict, not the token itself", cookie)
		}
		for _, path := range []string{"/", "/api/status", "/api/iterations", "/assets/app.js"} {
			resp := get(t, http.MethodGet, ts.URL+path, "Cookie", cookie.Name+"="+cookie.Value)
			body(t, resp)
			if resp.StatusCode != http.StatusOK {
				t.Errorf("GET %s with the session cookie: %d", path, resp.StatusCode)
			}
		}
		resp = get(t, http.MethodGet, ts.URL+"/api/status", "Cookie", cookie.Name+"="+sessionValue("other"))
		if body(t, resp); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("the cookie of another token: %d; want 401", resp.StatusCode)
		}
	})
}

func TestLoopbackOnlyWithoutToken(t *testing.T) {
	for _, tt := range []struct {
		addr, token string
		ok          bool
	}{
		{"127.0.0.1:7777", "", true},
		{"127.0.0.2:0", "", true},
		{"localhost:7777", "", true},
		{"[::1]:7777", "", true},
		{"0.0.0.0:7777", "", false},
		{":7777", "", false},
		{"[::]:7777", "", false},
		{"192.168.1.20:7777", "", false},
		{"myhost.example:7777", "", false},
		{"0.0.0.0:7777", "t", true},
	} {
		err := CheckAddr(tt.addr, tt.token)
		if (err == nil) != tt.ok {
			t.Errorf("CheckAddr(%q, token %q) = %v; want ok %v", tt.addr, tt.token, err, tt.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "give a --token") {
			t.Errorf("CheckAddr(%q): %v; want it to say why and that a --token allows it", tt.addr, err)
		}
	}
	if err := CheckAddr("7777", "t"); err == nil || !strings.Contains(err.Error(), "HOST:PORT") {
		t.Errorf("CheckAddr(7777) = %v; want a HOST:PORT error", err)
	}

	// Without a token, a page of another site whose name was made to
	// point at 127.0.0.1 (DNS rebinding) is refused: it names another host.
	_, ts := server(t, repo(t), "", 0)
	for host, want := range map[string]int{"evil.example:7777": http.StatusForbidden, "localhost:7777": http.StatusOK, "127.0.0.1": http.StatusOK, "[::1]:7777": http.StatusOK} {
		req, _ := http.NewRequest(http.MethodGet, ts.URL+"/api/status", nil)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if body(t, resp); resp.StatusCode != want {
			t.Errorf("Host %s: %d; want %d", host, resp.StatusCode, want)
		}
	}
}

func TestReadOnly(t *testing.T) {
	_, ts := server(t, repo(t), "", 0)
	for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch, http.MethodOptions} {
		for _, path := range []string{"/", "/api/status", "/api/iterations/2", "/events"} {
			resp := get(t, method, ts.URL+path)
			body(t, resp)
			if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET, HEAD" {
				t.Errorf("%s %s: %d, Allow %q; want 405, Allow GET, HEAD", method, path, resp.StatusCode, resp.Header.Get("Allow"))
			}
		}
	}
}

// TestHead: HEAD is answered as GET is, without a body (curl -I); the
// event stream gives its headers and ends.
func TestHead(t *testing.T) {
	_, ts := server(t, repo(t), "", 0)
	for path, ctype := range map[string]string{"/": "text/html", "/api/status": "application/json", "/events": "text/event-stream", "/assets/app.js": "javascript"} {
		resp := get(t, http.MethodHead, ts.URL+path)
		if b := body(t, resp); resp.StatusCode != http.StatusOK || b != "" || !strings.Contains(resp.Header.Get("Content-Type"), ctype) ||
			resp.Header.Get("Content-Security-Policy") == "" {
			t.Errorf("HEAD %s: %d, %q, Content-Type %q", path, resp.StatusCode, b, resp.Header.Get("Content-Type"))
		}
	}
	if resp := get(t, http.MethodHead, ts.URL+"/api/iterations/999"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("HEAD of a missing iteration: %d", resp.StatusCode)
	}
}

func TestSecurityHeaders(t *testing.T) {
	_, ts := server(t, repo(t), "tok", 0)
	for _, tt := range []struct{ path, auth string }{
		{"/", "Bearer tok"}, {"/assets/app.js", "Bearer tok"}, {"/api/status", "Bearer tok"},
		{"/api/iterations/99", "Bearer tok"}, {"/nope", "Bearer tok"}, {"/api/status", ""},
	} {
		resp := get(t, http.MethodGet, ts.URL+tt.path, "Authorization", tt.auth)
		body(t, resp)
		csp := resp.Header.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("GET %s: Content-Security-Policy %q lacks %q", tt.path, csp, want)
			}
		}
		if strings.Contains(csp, "unsafe") {
			t.Errorf("GET %s: Content-Security-Policy %q allows unsafe script or style", tt.path, csp)
		}
		if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: no X-Content-Type-Options: nosniff", tt.path)
		}
	}
	// The page itself has no inline script or style for the policy to refuse.
	resp := get(t, http.MethodGet, ts.URL+"/", "Authorization", "Bearer tok")
	page := body(t, resp)
	if strings.Contains(page, "<script>") || strings.Contains(page, "style=") || strings.Contains(page, "<style") {
		t.Errorf("the page has inline script or style:\n%s", page)
	}
}
