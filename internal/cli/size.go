package cli

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// byteSize is a flag value holding a size in bytes. It accepts a plain
// number of bytes or a number with a unit: KB, MB, GB, TB (powers of 1000)
// or KiB, MiB, GiB, TiB and the shorthands K, M, G, T (powers of 1024),
// case-insensitive, with an optional space before the unit.
type byteSize int64

// sizeUnits maps the suffixes byteSize accepts to their multipliers.
var sizeUnits = map[string]float64{
	"": 1, "b": 1,
	"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
	"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40,
	"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
}

// String returns the size in bytes, or "default" for zero.
func (s *byteSize) String() string {
	if *s == 0 {
		return "default"
	}
	return strconv.FormatInt(int64(*s), 10)
}

// Set parses v. It rejects negative, fractional-byte and overflowing
// sizes and unknown units.
func (s *byteSize) Set(v string) error {
	t := strings.TrimSpace(v)
	i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	num, unit := t, ""
	if i >= 0 {
		num, unit = t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	}
	mult, ok := sizeUnits[unit]
	if !ok {
		return fmt.Errorf("unknown unit %q (use bytes, KB, MB, GB, KiB, MiB, GiB)", unit)
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || num == "" {
		return fmt.Errorf("%q is not a size", v)
	}
	b := f * mult
	if b >= math.MaxInt64 {
		return fmt.Errorf("%q is too large", v)
	}
	*s = byteSize(b)
	return nil
}

// Type names the value in --help.
func (s *byteSize) Type() string { return "size" }
