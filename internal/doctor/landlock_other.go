//go:build !linux

package doctor

func landlockABI() (abi, errata int, err error) { return 0, 0, errNotLinux }

func activeLSMs() string { return "" }
