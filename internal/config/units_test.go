package config

import (
	"strings"
	"testing"
	"time"
)

func TestParseSize(t *testing.T) {
	tests := []struct {
		in      string
		want    Size
		wantErr string
	}{
		{"0", 0, ""},
		{"100", 100, ""},
		{"100B", 100, ""},
		{"100b", 100, ""},
		{"1KB", 1000, ""},
		{"1kb", 1000, ""},
		{"1MB", 1000 * 1000, ""},
		{"2GB", 2 * 1000 * 1000 * 1000, ""},
		{"40KiB", 40960, ""},
		{"40 KiB", 40960, ""},
		{" 8MiB ", 8 << 20, ""},
		{"1GiB", 1 << 30, ""},
		{"", 0, "invalid size"},
		{"KiB", 0, "invalid size"},
		{"-1KiB", 0, "invalid size"},
		{"1.5MiB", 0, "invalid size"},
		{"8 parsecs", 0, `such as "100B", "40KiB"`},
		{"10TB", 0, "invalid size"},
		{"99999999999999999999", 0, "invalid size"},
		{"9000000000GiB", 0, "too large"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseSize(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParseSize(%q) = %d, %v; want error containing %q", tc.in, got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ParseSize(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestSizeStringRoundTrip(t *testing.T) {
	tests := []struct {
		in   Size
		want string
	}{
		{0, "0B"},
		{100, "100B"},
		{1000, "1000B"},
		{40960, "40KiB"},
		{8 << 20, "8MiB"},
		{1536, "1536B"}, // 1.5KiB: not a whole number of KiB
		{3 << 30, "3GiB"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			if got := tc.in.String(); got != tc.want {
				t.Fatalf("Size(%d).String() = %q, want %q", int64(tc.in), got, tc.want)
			}
			var back Size
			text, _ := tc.in.MarshalText()
			if err := back.UnmarshalText(text); err != nil || back != tc.in {
				t.Fatalf("round trip of %d via %q = %d, %v", int64(tc.in), text, int64(back), err)
			}
		})
	}
}

func TestDurationText(t *testing.T) {
	tests := []struct {
		in      string
		want    time.Duration
		wantErr bool
	}{
		{"90s", 90 * time.Second, false},
		{"30m", 30 * time.Minute, false},
		{"1h30m", 90 * time.Minute, false},
		{"0s", 0, false},
		{"-5s", -5 * time.Second, false},
		{"250ms", 250 * time.Millisecond, false},
		{"30", 0, true},
		{"30 minutes", 0, true},
		{"", 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			var d Duration
			err := d.UnmarshalText([]byte(tc.in))
			if tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), `"30m"`) {
					t.Fatalf("UnmarshalText(%q) = %v, %v; want an error with an example", tc.in, d.Duration, err)
				}
				return
			}
			if err != nil || d.Duration != tc.want {
				t.Fatalf("UnmarshalText(%q) = %v, %v; want %v", tc.in, d.Duration, err, tc.want)
			}
			text, _ := d.MarshalText()
			var back Duration
			if err := back.UnmarshalText(text); err != nil || back != d {
				t.Fatalf("round trip via %q = %v, %v", text, back.Duration, err)
			}
		})
	}
}
