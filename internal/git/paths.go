package git

import "context"

// ChangedPaths lists the paths where a and b (trees or commits) differ,
// recursively, sorted as git sorts them; renames are not looked for, so a
// moved file is its old and its new path.
func (r *Repo) ChangedPaths(ctx context.Context, a, b string) ([]string, error) {
	ds, err := r.diffRaw(ctx, a, b)
	if err != nil {
		return nil, err
	}
	paths := make([]string, len(ds))
	for i, d := range ds {
		paths[i] = d.path
	}
	return paths, nil
}
