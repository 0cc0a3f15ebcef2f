package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Byte multiples accepted in sizes.
const (
	KB  Size = 1000
	MB  Size = 1000 * KB
	GB  Size = 1000 * MB
	KiB Size = 1024
	MiB Size = 1024 * KiB
	GiB Size = 1024 * MiB
)

// Duration is a time.Duration written in TOML as a Go duration string
// ("90s", "30m", "1h30m").
type Duration struct{ time.Duration }

// UnmarshalText parses a Go duration string.
func (d *Duration) UnmarshalText(text []byte) error {
	v, err := time.ParseDuration(strings.TrimSpace(string(text)))
	if err != nil {
		return fmt.Errorf("invalid duration %q: use Go syntax such as \"90s\", \"30m\" or \"1h30m\"", text)
	}
	d.Duration = v
	return nil
}

// UnmarshalTOML reads a duration string, and names what the file wrote
// instead when the value is not a string.
func (d *Duration) UnmarshalTOML(v any) error {
	s, ok := v.(string)
	if !ok {
		return fmt.Errorf(`want a duration string in Go syntax such as "90s", "30m" or "1h30m", got %s`, describe(v))
	}
	return d.UnmarshalText([]byte(s))
}

// MarshalText writes the duration in Go syntax.
func (d Duration) MarshalText() ([]byte, error) {
	return []byte(d.Duration.String()), nil
}

// Size is a number of bytes. In TOML it is a string with a unit ("40KiB",
// "8MiB", "100B", "1KB" = 1000 bytes, "1MB") or a bare integer of bytes.
type Size int64

// ParseSize parses a size: a non-negative integer followed by an optional
// unit B, KB, MB, GB (powers of 1000) or KiB, MiB, GiB (powers of 1024).
// Units are case-insensitive and may be separated from the number by spaces.
// A number without a unit is a count of bytes.
func ParseSize(s string) (Size, error) {
	bad := func() (Size, error) {
		return 0, fmt.Errorf("invalid size %q: use an integer with a unit such as \"100B\", \"40KiB\", \"8MiB\" or \"1MB\"", s)
	}
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == 0 {
		return bad()
	}
	n, err := strconv.ParseInt(t[:i], 10, 64)
	if err != nil {
		return bad()
	}
	unit := strings.ToLower(strings.TrimSpace(t[i:]))
	var mul Size
	switch unit {
	case "", "b":
		mul = 1
	case "kb":
		mul = KB
	case "mb":
		mul = MB
	case "gb":
		mul = GB
	case "kib":
		mul = KiB
	case "mib":
		mul = MiB
	case "gib":
		mul = GiB
	default:
		return bad()
	}
	if n > math.MaxInt64/int64(mul) {
		return 0, fmt.Errorf("invalid size %q: too large", s)
	}
	return Size(n) * mul, nil
}

// UnmarshalText parses a size as ParseSize does.
func (s *Size) UnmarshalText(text []byte) error {
	v, err := ParseSize(string(text))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// UnmarshalTOML reads a size string as ParseSize does, or an integer
// count of bytes.
func (s *Size) UnmarshalTOML(v any) error {
	switch x := v.(type) {
	case int64:
		if x < 0 {
			return fmt.Errorf("invalid size %d: must not be negative", x)
		}
		*s = Size(x)
		return nil
	case string:
		return s.UnmarshalText([]byte(x))
	}
	return fmt.Errorf(`want a size such as "40KiB", "8MiB", "100B" or a number of bytes, got %s`, describe(v))
}

// MarshalText writes the size as String does, so it reads back unchanged.
func (s Size) MarshalText() ([]byte, error) {
	return []byte(s.String()), nil
}

// String writes the size with the largest binary unit that divides it
// exactly ("40KiB", "8MiB"), or in bytes ("100B").
func (s Size) String() string {
	switch {
	case s != 0 && s%GiB == 0:
		return strconv.FormatInt(int64(s/GiB), 10) + "GiB"
	case s != 0 && s%MiB == 0:
		return strconv.FormatInt(int64(s/MiB), 10) + "MiB"
	case s != 0 && s%KiB == 0:
		return strconv.FormatInt(int64(s/KiB), 10) + "KiB"
	}
	return strconv.FormatInt(int64(s), 10) + "B"
}
