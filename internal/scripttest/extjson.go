package scripttest

import (
	"encoding/json"
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// ParseDoc parses one Extended JSON document (relaxed or canonical). As a
// shorthand for scripts it also accepts JavaScript regex literals outside
// strings, /pattern/flags, which it rewrites to
// {"$regularExpression": {...}}; inside the pattern "\/" stands for "/".
func ParseDoc(s string) (bson.Raw, error) {
	js, err := rewriteRegexLiterals(s)
	if err != nil {
		return nil, err
	}
	var r bson.Raw
	if err := bson.UnmarshalExtJSON([]byte(js), false, &r); err != nil {
		return nil, fmt.Errorf("parse %s: %w", s, err)
	}
	return r, nil
}

func rewriteRegexLiterals(s string) (string, error) {
	if !strings.Contains(s, "/") {
		return s, nil
	}
	var b strings.Builder
	inString := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if inString {
			b.WriteByte(c)
			switch c {
			case '\\':
				if i+1 < len(s) {
					i++
					b.WriteByte(s[i])
				}
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
			b.WriteByte(c)
		case '/':
			var pat strings.Builder
			j := i + 1
			for ; j < len(s) && s[j] != '/'; j++ {
				if s[j] == '\\' && j+1 < len(s) {
					if s[j+1] == '/' {
						pat.WriteByte('/')
						j++
						continue
					}
					pat.WriteByte(s[j])
					j++
				}
				pat.WriteByte(s[j])
			}
			if j >= len(s) {
				return "", fmt.Errorf("unterminated regex literal in %s", s)
			}
			k := j + 1
			for k < len(s) && s[k] >= 'a' && s[k] <= 'z' {
				k++
			}
			p, _ := json.Marshal(pat.String())
			o, _ := json.Marshal(s[j+1 : k])
			fmt.Fprintf(&b, `{"$regularExpression": {"pattern": %s, "options": %s}}`, p, o)
			i = k - 1
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}
