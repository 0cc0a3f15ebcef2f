package loop

import (
	"sync"

	"github.com/runner-cli/runner/internal/prompt"
	"github.com/runner-cli/runner/internal/state"
)

// prompts keeps the prompt of each iteration under way, so that its run
// folder keeps prompt.md (and context.json) whatever the agent or its
// code removes: an agent's `git clean -fdx` in place erases the run
// folder, and the ledger, finding it gone, has it written again.
type prompts struct {
	p     state.Paths // set once, when the run opens its ledger
	mu    sync.Mutex
	byRun map[int]keptPrompt
}

type keptPrompt struct {
	node string
	pack *prompt.Pack
}

// keep holds iteration n's prompt until forget(n).
func (k *prompts) keep(n int, node string, pack *prompt.Pack) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.byRun == nil {
		k.byRun = map[int]keptPrompt{}
	}
	k.byRun[n] = keptPrompt{node: node, pack: pack}
}

// forget drops iteration n's prompt once it is recorded.
func (k *prompts) forget(n int) {
	k.mu.Lock()
	delete(k.byRun, n)
	k.mu.Unlock()
}

// write writes iteration n's prompt to its run folder again; nothing when
// it is not held.
func (k *prompts) write(n int) error {
	k.mu.Lock()
	kp, ok := k.byRun[n]
	k.mu.Unlock()
	if !ok {
		return nil
	}
	return prompt.WriteRunFolder(k.p.RunDir(n), n, kp.node, kp.pack)
}
