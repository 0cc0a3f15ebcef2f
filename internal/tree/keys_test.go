package tree

import "testing"

func TestLookupKeyBytesMatchesNodeKeys(t *testing.T) {
	for i, k := range nodeKeys {
		if f, ok := lookupKeyBytes([]byte(k)); !ok || f != 1<<i {
			t.Errorf("lookupKeyBytes(%q) = %v, %v; want bit %d", k, f, ok, i)
		}
	}
	if _, ok := lookupKeyBytes([]byte("ID")); ok {
		t.Errorf("lookupKeyBytes matched a key in another case")
	}
}
