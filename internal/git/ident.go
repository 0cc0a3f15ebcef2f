package git

import (
	"context"
	"strings"
)

// The identity commits are made with when the repository has none (a
// fresh container): git would otherwise refuse to commit, or make up an
// address from the user and host names. It is given to git through the
// GIT_AUTHOR_* and GIT_COMMITTER_* variables of the call; nothing is
// written to any git configuration.
const (
	FallbackName  = "runner"
	FallbackEmail = "runner@localhost"
)

// Identity is who the runner's commits are by.
type Identity struct {
	Name, Email string
	// Fallback: the name or the address (or both) was configured nowhere
	// and FallbackName / FallbackEmail is used in its place.
	Fallback bool
}

// Identity returns the identity the runner's commits are made with: the
// one git would use for a commit of the person's (the GIT_AUTHOR_* and
// GIT_COMMITTER_* variables, then author.*, committer.* and user.* in the
// repository's configuration, which includes the global one), each name
// or address found nowhere replaced by the fallback. It is read once per
// Repo.
func (r *Repo) Identity(ctx context.Context) (Identity, error) {
	_, id, err := r.identity(ctx)
	return id, err
}

// identity returns the environment to add to commit-tree, and the
// committer's identity.
func (r *Repo) identity(ctx context.Context) ([]string, Identity, error) {
	r.identMu.Lock()
	defer r.identMu.Unlock()
	if r.ident != nil {
		return r.identEnv, *r.ident, nil
	}
	res, err := r.git(ctx, call{ok: []int{1}}, "config", "-z", "--get-regexp", `^(user|author|committer)\.(name|email)$`)
	if err != nil {
		return nil, Identity{}, err
	}
	cfg := map[string]string{}
	for _, rec := range strings.Split(string(res.out), "\x00") {
		if k, v, ok := strings.Cut(rec, "\n"); ok {
			cfg[strings.ToLower(k)] = v // the last one wins, as in git
		}
	}
	envVal := map[string]string{}
	for _, kv := range r.x.env {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "GIT_") {
			envVal[k] = v
		}
	}
	var env []string
	var committer Identity
	for _, role := range []string{"author", "committer"} {
		id := Identity{}
		for _, f := range []struct {
			field, fallback string
			dst             *string
		}{{"name", FallbackName, &id.Name}, {"email", FallbackEmail, &id.Email}} {
			v := envVal["GIT_"+strings.ToUpper(role)+"_"+strings.ToUpper(f.field)]
			if v == "" {
				v = cfg[role+"."+f.field]
			}
			if v == "" {
				v = cfg["user."+f.field]
			}
			if strings.TrimSpace(v) == "" {
				v = f.fallback
				id.Fallback = true
				env = append(env, "GIT_"+strings.ToUpper(role)+"_"+strings.ToUpper(f.field)+"="+v)
			}
			*f.dst = v
		}
		committer = id
	}
	r.identEnv, r.ident = env, &committer
	return env, committer, nil
}
