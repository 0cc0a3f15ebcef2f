package git

import "strings"

// What every git call of the package runs with, so that it runs nothing
// an agent could have configured (SPEC.md §19). An agent writes its
// working tree, and when it is not confined by the kernel the repository's
// .git folder too: its config, hooks, info/attributes, a worktree's .git
// file. See doc.go for the whole list and why.

// globalArgs come before every call's arguments.
//
//   - core.hooksPath=/dev/null: hooks are the person's, for the person's
//     own commits and checkouts, and never run for the runner's
//     (update-ref would run reference-transaction, checkout and worktree
//     add post-checkout, status post-index-change).
//   - core.fsmonitor=false: a hook path there is a program that git runs
//     whenever it reads the index (add, status, write-tree...); true
//     starts git's own daemon. false turns both off, and wins over any
//     configuration file, as every -c does.
//   - submodule.recurse=false: read-tree -u, checkout and worktree add
//     would otherwise go into submodules, each with its own configuration
//     (inside the working tree, the agent's), which the overrides below do
//     not cover.
//   - protocol.allow=never: no git call of the runner's talks to another
//     repository, and none may; in a partial clone, a missing object
//     would otherwise be fetched from the promisor remote, running its
//     remote.<name>.uploadpack, core.sshCommand or a credential helper.
//     A protocol.<name>.allow of the configuration would win over it: each
//     one found is set to never as well (see drivers.go).
var globalArgs = []string{
	"-c", "core.hooksPath=/dev/null",
	"-c", "core.fsmonitor=false",
	"-c", "submodule.recurse=false",
	"-c", "protocol.allow=never",
}

// hardenEnv is added to every call's environment.
//
//   - GIT_CONFIG_NOSYSTEM=1: the system configuration (/etc/gitconfig, or
//     the file GIT_CONFIG_SYSTEM names) is not read. The global one (the
//     person's ~/.gitconfig, or GIT_CONFIG_GLOBAL) is: it holds their
//     identity, their global ignore file and their line-end settings,
//     which the runner's commits must follow as the person's own do; what
//     in it would run a program is neutralised as the repository's is.
//   - GIT_ATTR_NOSYSTEM=1: likewise for the system gitattributes file.
//   - GIT_NO_LAZY_FETCH=1: no object is fetched on demand (git 2.45, and
//     2.39.4 and later maintenance releases; older ones ignore it and rely
//     on protocol.allow=never).
var hardenEnv = []string{"GIT_CONFIG_NOSYSTEM=1", "GIT_ATTR_NOSYSTEM=1", "GIT_NO_LAZY_FETCH=1"}

// droppedEnv are the variables removed from git's environment: they would
// point it at another repository, index or working tree, change how it
// reads pathspecs or configuration, or run programs of the caller's
// (pager, editor, external diff). Variables of the caller's identity
// (GIT_AUTHOR_NAME...) and its global configuration (GIT_CONFIG_GLOBAL)
// are kept. Configuration given through the environment
// (GIT_CONFIG_PARAMETERS, GIT_CONFIG_COUNT...) is dropped: the runner
// must know every configuration file git reads to neutralise what they
// define (drivers.go), and a runner started from a git alias or hook would
// pass its caller's on.
var droppedEnv = map[string]bool{
	"GIT_DIR": true, "GIT_WORK_TREE": true, "GIT_INDEX_FILE": true, "GIT_COMMON_DIR": true,
	"GIT_OBJECT_DIRECTORY": true, "GIT_ALTERNATE_OBJECT_DIRECTORIES": true, "GIT_NAMESPACE": true,
	"GIT_PREFIX": true, "GIT_INTERNAL_SUPER_PREFIX": true, "GIT_QUARANTINE_PATH": true,
	"GIT_IMPLICIT_WORK_TREE": true, "GIT_SHALLOW_FILE": true, "GIT_GRAFT_FILE": true,
	"GIT_REPLACE_REF_BASE": true, "GIT_NO_REPLACE_OBJECTS": true,
	"GIT_LITERAL_PATHSPECS": true, "GIT_GLOB_PATHSPECS": true, "GIT_NOGLOB_PATHSPECS": true, "GIT_ICASE_PATHSPECS": true,
	"GIT_EXTERNAL_DIFF": true, "GIT_DIFF_OPTS": true, "GIT_PAGER": true, "PAGER": true,
	"GIT_EDITOR": true, "GIT_SEQUENCE_EDITOR": true, "GIT_REFLOG_ACTION": true, "LANGUAGE": true,
	"GIT_CONFIG": true, "GIT_CONFIG_PARAMETERS": true, "GIT_CONFIG_COUNT": true,
	"GIT_CONFIG_NOSYSTEM": true, "GIT_ATTR_NOSYSTEM": true,
	"GIT_ATTR_SOURCE": true, "GIT_NO_LAZY_FETCH": true, "GIT_TEST_FSMONITOR": true,
}

// cleanEnv is env without droppedEnv (and the GIT_CONFIG_KEY_<n> and
// GIT_CONFIG_VALUE_<n> that go with GIT_CONFIG_COUNT), with hardenEnv, a
// locale whose messages and formats are git's own (LC_ALL=C: the package
// reads some of them), and nothing that could wait for a person: no
// pager, editor or prompt.
func cleanEnv(env []string) []string {
	out := make([]string, 0, len(env)+9)
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if droppedEnv[k] || k == "LC_ALL" || strings.HasPrefix(k, "GIT_CONFIG_KEY_") || strings.HasPrefix(k, "GIT_CONFIG_VALUE_") {
			continue
		}
		out = append(out, kv)
	}
	out = append(out, hardenEnv...)
	return append(out, "LC_ALL=C", "GIT_PAGER=cat", "PAGER=cat", "GIT_EDITOR=:", "GIT_TERMINAL_PROMPT=0", "GCM_INTERACTIVE=never")
}

// repoEnv names the repository and the working tree of a call explicitly,
// so that git finds neither by itself: not by looking for a .git above the
// working directory, nor by following a linked worktree's .git file (the
// agent's to rewrite), nor through a core.worktree setting. GIT_COMMON_DIR
// wins over the commondir file of a linked worktree's git dir.
func (r *Repo) repoEnv() []string {
	return []string{"GIT_DIR=" + r.gitDir, "GIT_COMMON_DIR=" + r.commonDir, "GIT_WORK_TREE=" + r.top}
}
