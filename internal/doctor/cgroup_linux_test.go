//go:build linux

package doctor

import (
	"testing"
)

// TestCgroupProbe: the real probe answers either way, and says why not.
func TestCgroupProbe(t *testing.T) {
	c := probeCgroup()
	if !c.OK && c.Note == "" || c.OK && c.Dir == "" {
		t.Errorf("probe: %+v", c)
	}
	t.Logf("%+v", c)
}

// TestLandlockProbe: the real probe gives an ABI or an errno.
func TestLandlockProbe(t *testing.T) {
	abi, errata, err := landlockABI()
	if abi < 0 || abi == 0 && err == nil || errata != 0 && abi < ScopeLandlockABI {
		t.Errorf("landlockABI: %d, %d, %v", abi, errata, err)
	}
	t.Logf("%+v", landlockFrom(abi, errata, err))
}
