package ledger

// SetJournalRotation sets the sizes the journal is rotated at (journal.go)
// for a test, and returns what puts them back.
func SetJournalRotation(perRun, min int64) (restore func()) {
	b, m := journalBytesPerRun, minJournalRotate
	journalBytesPerRun, minJournalRotate = perRun, min
	return func() { journalBytesPerRun, minJournalRotate = b, m }
}
