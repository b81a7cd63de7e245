package expr

import (
	"fmt"
	"strings"
	"time"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// parsedDate collects the fields a date string sets; -1 marks a field the
// string did not set.
type parsedDate struct {
	y, m, d, h, i, s, ms int
	isoY, isoW, isoD     int
	week, wday           int    // %U (weeks from the first Sunday) and %w (1 = Sunday)
	zoned                bool   // the string carried a zone (Z, an offset, an abbreviation)
	abbr                 string // the zone's abbreviation (UTC, EST …), "" for an offset
	offset               int    // seconds east of UTC when zoned
	unix                 bool   // "@<seconds>": the instant is y…s in UTC
}

// newParsedDate returns a parsedDate with every field unset.
func newParsedDate() parsedDate {
	return parsedDate{-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, false, "", 0, false}
}

// dateParseError is the ConversionFailure $dateFromString reports.
func dateParseError(s, why string) error {
	return mongoerr.Newf(codeConversionFailure, "Error parsing date string '%s'; %s", s, why)
}

// resolve turns the parsed fields into an instant in zone z, with
// mongod's checks: a missing time is midnight, a missing date fails, and
// a zone in the string conflicts with a timezone argument other than UTC.
func (p *parsedDate) resolve(src string, z *tzone) (int64, error) {
	if p.h < 0 && p.i < 0 && p.s < 0 {
		p.h, p.i, p.s = 0, 0, 0
		if p.ms < 0 {
			p.ms = 0
		}
	}
	if p.h >= 0 || p.i >= 0 || p.s >= 0 {
		p.h, p.i, p.s, p.ms = max(p.h, 0), max(p.i, 0), max(p.s, 0), max(p.ms, 0)
	}
	if p.isoY >= 0 && p.y < 0 {
		w, d := max(p.isoW, 1), max(p.isoD, 1)
		jan4 := time.Date(p.isoY, time.January, 4, 0, 0, 0, 0, time.UTC)
		t := jan4.AddDate(0, 0, -(isoDayOfWeek(jan4)-1)+(w-1)*7+(d-1))
		p.y, p.m, p.d = t.Year(), int(t.Month()), t.Day()
	}
	if p.y >= 0 && p.m < 0 && p.d < 0 && (p.week >= 0 || p.wday >= 0) {
		jan1 := time.Date(p.y, time.January, 1, 0, 0, 0, 0, time.UTC)
		firstSunday := (7 - int(jan1.Weekday())) % 7
		t := jan1.AddDate(0, 0, firstSunday+(max(p.week, 0)-1)*7+max(p.wday, 1)-1)
		p.y, p.m, p.d = t.Year(), int(t.Month()), t.Day()
	}
	if p.y < 0 || p.m < 0 || p.d < 0 {
		return 0, mongoerr.Newf(codeConversionFailure, "an incomplete date/time string has been found, with elements missing: \"%s\"", src)
	}
	if p.m < 1 || p.m > 12 || p.d < 1 || p.d > daysIn(p.y, p.m) {
		return 0, dateParseError(src, "0: The parsed date was invalid ''")
	}
	if p.h > 23 || p.i > 59 || p.s > 59 {
		return 0, dateParseError(src, "0: The parsed time was invalid ''")
	}
	if p.zoned && !z.isUTC() {
		if p.abbr != "" {
			return 0, mongoerr.Newf(codeConversionFailure, "you cannot pass in a date/time string with time zone information ('%s') together with a timezone argument", p.abbr)
		}
		return 0, mongoerr.New(codeConversionFailure, "you cannot pass in a date/time string with GMT offset together with a timezone argument")
	}
	wall := time.Date(p.y, time.Month(p.m), p.d, p.h, p.i, p.s, 0, time.UTC)
	if p.zoned {
		return (wall.Unix()-int64(p.offset))*1000 + int64(p.ms), nil
	}
	return z.wallToInstant(wall)*1000 + int64(p.ms), nil
}

// daysIn is the number of days of month m of year y.
func daysIn(y, m int) int {
	return time.Date(y, time.Month(m)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// scanner reads a date string.
type scanner struct {
	s   string
	pos int
}

// eof reports whether the whole string has been read.
func (sc *scanner) eof() bool { return sc.pos >= len(sc.s) }

// peek returns the next byte, or 0 at the end.
func (sc *scanner) peek() byte {
	if sc.eof() {
		return 0
	}
	return sc.s[sc.pos]
}

// digits reads from 1 to max digits; n is the number read.
func (sc *scanner) digits(max int) (v, n int) {
	for n < max && !sc.eof() && sc.peek() >= '0' && sc.peek() <= '9' {
		v = v*10 + int(sc.peek()-'0')
		sc.pos++
		n++
	}
	return v, n
}

// number skips non-digits (as timelib's number reader does) and reads up
// to max digits; ok is false at the end of the string.
func (sc *scanner) number(max int) (int, int, bool) {
	for !sc.eof() && (sc.peek() < '0' || sc.peek() > '9') {
		sc.pos++
	}
	v, n := sc.digits(max)
	return v, n, n > 0
}

// zoneAbbrevs are the zone abbreviations a date string may end with, and
// their offsets in seconds.
var zoneAbbrevs = map[string]int{
	"UTC": 0, "GMT": 0, "UT": 0, "Z": 0,
	"EST": -5 * 3600, "EDT": -4 * 3600, "CST": -6 * 3600, "CDT": -5 * 3600,
	"MST": -7 * 3600, "MDT": -6 * 3600, "PST": -8 * 3600, "PDT": -7 * 3600,
	"BST": 3600, "CET": 3600, "CEST": 2 * 3600, "EET": 2 * 3600, "EEST": 3 * 3600,
	"JST": 9 * 3600,
}

// zone reads a zone abbreviation (Z, UTC, EST …), an offset ±HH[[:]MM],
// or GMT/UTC followed by an offset.
func (sc *scanner) zone(p *parsedDate) bool {
	start := sc.pos
	for !sc.eof() && isLetter(sc.peek()) {
		sc.pos++
	}
	if word := strings.ToUpper(sc.s[start:sc.pos]); word != "" {
		off, ok := zoneAbbrevs[word]
		if !ok {
			sc.pos = start
			return false
		}
		p.zoned, p.abbr, p.offset = true, word, off
		if (word != "GMT" && word != "UTC") || (sc.peek() != '+' && sc.peek() != '-') {
			return true
		}
	}
	c := sc.peek()
	if c != '+' && c != '-' {
		return false
	}
	sc.pos++
	h, n := sc.digits(2)
	if n == 0 {
		return false
	}
	m := 0
	if sc.peek() == ':' {
		sc.pos++
	}
	if mm, n := sc.digits(2); n > 0 {
		m = mm
	}
	off := h*3600 + m*60
	if c == '-' {
		off = -off
	}
	p.zoned, p.abbr, p.offset = true, "", off
	return true
}

// monthNames are the three-letter English month prefixes, January first.
var monthNames = []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}

// monthName reads an English month name or its three-letter abbreviation.
func (sc *scanner) monthName() int {
	rest := strings.ToLower(sc.s[sc.pos:])
	for i, m := range monthNames {
		if strings.HasPrefix(rest, m) {
			n := 3
			full := strings.ToLower(time.Month(i + 1).String())
			if strings.HasPrefix(rest, full) {
				n = len(full)
			}
			sc.pos += n
			return i + 1
		}
	}
	return 0
}

// parseDateFree parses a date string without a format, accepting the
// forms timelib's free-form parser is most often given: ISO 8601 dates and
// times (2017-02-08T12:10:40.787Z, 2017-02-08 12:10:40+02:00), ISO week
// dates (2017-W05-3), slashed dates (2017/02/08, 02/08/2017), English
// month and day names (Tuesday, Feb 8th, 2017; 8 February 2017), 12-hour
// times (11:59 PM), zone abbreviations (UTC, GMT+02:00, EST) and
// "@<seconds>".
//
// Divergence: timelib accepts still more free-form inputs (relative
// phrases such as "tomorrow" or "+1 week", compact 20170208); those fail
// here with ConversionFailure.
func parseDateFree(src string, z *tzone) (int64, error) {
	p := newParsedDate()
	sc := &scanner{s: strings.TrimSpace(src)}
	bad := func() (int64, error) {
		return 0, dateParseError(src, fmt.Sprintf("%d: Unexpected data found. '%c'", sc.pos, sc.peek()))
	}
	if sc.peek() == '@' {
		// "@<seconds>": seconds since the epoch, in UTC.
		sc.pos++
		neg := sc.peek() == '-'
		if neg {
			sc.pos++
		}
		v, n := sc.digits(18)
		if n == 0 || !sc.eof() {
			return bad()
		}
		if neg {
			v = -v
		}
		if !z.isUTC() {
			return 0, mongoerr.New(codeConversionFailure, "you cannot pass in a date/time string with GMT offset together with a timezone argument")
		}
		return int64(v) * 1000, nil
	}
	sc.weekday()
	if err := sc.datePart(&p); err != nil {
		return bad()
	}
	if sc.peek() == 'T' || sc.peek() == 't' || sc.peek() == ' ' {
		save := sc.pos
		sc.pos++
		for sc.peek() == ' ' {
			sc.pos++
		}
		if !sc.timePart(&p) {
			sc.pos = save
		}
	}
	for sc.peek() == ' ' {
		sc.pos++
	}
	if !sc.eof() {
		if !sc.zone(&p) {
			if isLetter(sc.peek()) {
				return 0, dateParseError(src, fmt.Sprintf("%d: passing a time zone identifier as part of the string is not allowed '%c'", sc.pos, sc.peek()))
			}
			return bad()
		}
	}
	if !sc.eof() {
		return bad()
	}
	return p.resolve(src, z)
}

// isLetter reports whether c is an ASCII letter.
func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// weekdayNames are the English day names, Sunday first.
var weekdayNames = []string{"sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"}

// weekday skips a leading day name ("Tue", "Tuesday,"), which timelib
// accepts and ignores when a full date follows.
func (sc *scanner) weekday() {
	rest := strings.ToLower(sc.s[sc.pos:])
	for _, d := range weekdayNames {
		n := 0
		switch {
		case strings.HasPrefix(rest, d):
			n = len(d)
		case strings.HasPrefix(rest, d[:3]):
			n = 3
		default:
			continue
		}
		if n < len(rest) && isLetter(rest[n]) {
			return
		}
		sc.pos += n
		for sc.peek() == ',' || sc.peek() == ' ' || sc.peek() == '.' {
			sc.pos++
		}
		return
	}
}

// ordinal skips an English ordinal suffix after a day number.
func (sc *scanner) ordinal() {
	rest := strings.ToLower(sc.s[sc.pos:])
	for _, suf := range []string{"st", "nd", "rd", "th"} {
		if strings.HasPrefix(rest, suf) {
			sc.pos += 2
			return
		}
	}
}

// datePart reads the date of a free-form string.
func (sc *scanner) datePart(p *parsedDate) error {
	errBad := fmt.Errorf("bad date")
	if m := sc.monthName(); m > 0 {
		// "Feb 8, 2017" / "February 8 2017"
		for sc.peek() == ' ' || sc.peek() == '.' {
			sc.pos++
		}
		d, n := sc.digits(2)
		if n == 0 {
			return errBad
		}
		sc.ordinal()
		for sc.peek() == ',' || sc.peek() == ' ' {
			sc.pos++
		}
		y, n := sc.digits(4)
		if n != 4 {
			return errBad
		}
		p.y, p.m, p.d = y, m, d
		return nil
	}
	a, na := sc.digits(4)
	if na == 0 {
		return errBad
	}
	sep := sc.peek()
	if na <= 2 && (sep == ' ' || isLetter(sep)) {
		// "8 Feb 2017", "8th February 2017"
		sc.ordinal()
		for sc.peek() == ' ' {
			sc.pos++
		}
		m := sc.monthName()
		if m == 0 {
			return errBad
		}
		for sc.peek() == ' ' || sc.peek() == ',' {
			sc.pos++
		}
		y, n := sc.digits(4)
		if n != 4 {
			return errBad
		}
		p.y, p.m, p.d = y, m, a
		return nil
	}
	if na == 4 && (sep == 'W' || sep == '-' && sc.pos+1 < len(sc.s) && sc.s[sc.pos+1] == 'W') {
		// ISO week date: 2017-W05-3, 2017W053, 2017-W05 (Monday).
		if sep == '-' {
			sc.pos++
		}
		sc.pos++
		w, nw := sc.digits(2)
		if nw != 2 {
			return errBad
		}
		d := 1
		if sc.peek() == '-' {
			sc.pos++
		}
		if dd, nd := sc.digits(1); nd == 1 {
			d = dd
		}
		p.isoY, p.isoW, p.isoD = a, w, d
		return nil
	}
	if sep != '-' && sep != '/' {
		return errBad
	}
	sc.pos++
	b, nb := sc.digits(2)
	if nb == 0 || sc.peek() != sep {
		return errBad
	}
	sc.pos++
	c, nc := sc.digits(4)
	switch {
	case na == 4 && nc >= 1 && nc <= 2:
		p.y, p.m, p.d = a, b, c
	case sep == '/' && na <= 2 && nc == 4:
		p.y, p.m, p.d = c, a, b
	default:
		return errBad
	}
	return nil
}

// timePart reads HH:MM[:SS[.fraction]].
func (sc *scanner) timePart(p *parsedDate) bool {
	h, n := sc.digits(2)
	if n == 0 || sc.peek() != ':' {
		return false
	}
	sc.pos++
	i, n := sc.digits(2)
	if n != 2 {
		return false
	}
	p.h, p.i, p.s, p.ms = h, i, 0, 0
	if sc.peek() == ':' {
		sc.pos++
		s, n := sc.digits(2)
		if n != 2 {
			return false
		}
		p.s = s
		if sc.peek() == '.' || sc.peek() == ',' {
			sc.pos++
			start := sc.pos
			frac, n := sc.digits(9)
			if n == 0 {
				return false
			}
			for k := sc.pos - start; k < 3; k++ {
				frac *= 10
			}
			for k := sc.pos - start; k > 3; k-- {
				frac /= 10
			}
			p.ms = frac
		}
	}
	sc.meridian(p)
	return true
}

// meridian applies a trailing "AM" or "PM" (with or without a space and
// dots) to a 12-hour clock time.
func (sc *scanner) meridian(p *parsedDate) {
	save := sc.pos
	for sc.peek() == ' ' {
		sc.pos++
	}
	rest := strings.ToLower(sc.s[sc.pos:])
	for _, m := range []string{"a.m.", "p.m.", "am", "pm"} {
		if !strings.HasPrefix(rest, m) || len(rest) > len(m) && isLetter(rest[len(m)]) || p.h < 1 || p.h > 12 {
			continue
		}
		sc.pos += len(m)
		if p.h == 12 {
			p.h = 0
		}
		if m[0] == 'p' {
			p.h += 12
		}
		return
	}
	sc.pos = save
}

// parseDateWithFormat parses src as format says, with the specifiers of
// fromStringSpecifiers; literal characters must match exactly.
func parseDateWithFormat(src, format string, z *tzone) (int64, error) {
	p := newParsedDate()
	sc := &scanner{s: src}
	fail := func(why string) (int64, error) {
		return 0, dateParseError(src, fmt.Sprintf("%d: %s", sc.pos, why))
	}
	for i := 0; i < len(format); i++ {
		fc := format[i]
		if fc != '%' {
			if sc.eof() {
				return fail("Data missing")
			}
			if sc.peek() != fc {
				return fail("The format separator does not match")
			}
			sc.pos++
			continue
		}
		i++
		spec := format[i]
		if spec == '%' {
			if sc.peek() != '%' {
				return fail("The escaped character could not be found")
			}
			sc.pos++
			continue
		}
		if sc.eof() {
			return fail("Data missing")
		}
		var v, n int
		var ok bool
		switch spec {
		case 'Y', 'G':
			v, n, ok = sc.number(4)
			if !ok || n != 4 {
				return fail("A four digit year could not be found")
			}
			if spec == 'Y' {
				p.y = v
			} else {
				p.isoY = v
			}
		case 'm', 'd', 'H', 'M', 'S', 'V':
			if v, _, ok = sc.number(2); !ok {
				return fail("A two digit value could not be found")
			}
			switch spec {
			case 'm':
				p.m = v
			case 'd':
				p.d = v
			case 'H':
				p.h = v
			case 'M':
				p.i = v
			case 'S':
				p.s = v
			case 'V':
				p.isoW = v
			}
		case 'u', 'w':
			if v, _, ok = sc.number(1); !ok {
				return fail("A single digit day of week could not be found")
			}
			if spec == 'u' {
				p.isoD = v
			} else {
				p.wday = v
			}
		case 'U':
			if v, _, ok = sc.number(2); !ok {
				return fail("A two digit week could not be found")
			}
			p.week = v
		case 'b', 'B':
			m := sc.monthName()
			if m == 0 {
				return fail("A textual month could not be found")
			}
			p.m = m
		case 'L':
			if v, n, ok = sc.number(3); !ok {
				return fail("A three digit millisecond could not be found")
			}
			for ; n < 3; n++ {
				v *= 10
			}
			p.ms = v
		case 'z':
			if !sc.zone(&p) {
				return fail("The timezone could not be found in the database")
			}
		case 'Z':
			c := sc.peek()
			if c == '+' || c == '-' {
				sc.pos++
			}
			if v, _, ok = sc.number(4); !ok {
				return fail("A timezone offset in minutes could not be found")
			}
			if c == '-' {
				v = -v
			}
			p.zoned, p.offset = true, v*60
		}
	}
	if !sc.eof() {
		return fail("Trailing data")
	}
	return p.resolve(src, z)
}
