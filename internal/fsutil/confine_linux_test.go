package fsutil

import "testing"

// TestConfinedWithoutOpenat2 runs the confinement tests again with the
// walk a kernel without openat2 gets: one O_NOFOLLOW open per component.
func TestConfinedWithoutOpenat2(t *testing.T) {
	was := noOpenat2.Load()
	noOpenat2.Store(true)
	defer noOpenat2.Store(was)
	t.Run("writes", TestConfinedWritesDoNotFollowLinks)
	t.Run("reads", TestReadsRefuseLinksWhenConfined)
	t.Run("RemoveAll", TestRemoveAllStaysInside)
	t.Run("hard links", TestHardLinkedFilesAreCopied)
}
