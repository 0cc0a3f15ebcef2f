package loop

import "testing"

func TestCompareURL(t *testing.T) {
	for _, c := range []struct{ where, base, want string }{
		{"git@github.com:me/app.git", "main", "https://github.com/me/app/compare/main...runner/app?expand=1"},
		{"https://github.com/me/app", "main", "https://github.com/me/app/compare/main...runner/app?expand=1"},
		{"https://github.com/me/app.git", "", "https://github.com/me/app/pull/new/runner/app"},
		{"https://gitlab.com/me/app.git", "main", ""},
		{"/srv/git/app.git", "main", ""},
		{"https://github.com/me", "main", ""},
	} {
		if got := compareURL(c.where, c.base, "runner/app"); got != c.want {
			t.Errorf("compareURL(%q, %q) = %q, want %q", c.where, c.base, got, c.want)
		}
	}
}
