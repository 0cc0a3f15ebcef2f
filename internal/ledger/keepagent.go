package ledger

// KeepBeforeAgent brings the keep in the git directory up to date just
// before an agent starts: the journal and the notes as the judges will
// read them before it runs. An agent that runs `git clean` at once must
// find them there to be put back as they were: AgentStarted updates the
// keep too, but in the background while the agent starts, and on a busy
// machine the agent's clean comes first, so that what the runner put back
// differed from what the judges read, and its own restore counted as the
// agent's tamper. Mirroring appends to the copies and links the rest, with
// no fsync: a small price per agent run.
func (l *Ledger) KeepBeforeAgent() {
	if l.keep == nil {
		return
	}
	l.background.Wait()
	l.syncKeep(l.rs)
}
