package collation

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestEveryLocale builds a collator for every supported locale and checks
// that it orders and equates basic Latin text.
func TestEveryLocale(t *testing.T) {
	for loc := range locales {
		raw, _ := bson.Marshal(bson.D{{Key: "locale", Value: loc}, {Key: "caseFirst", Value: "off"}})
		c, err := Parse(raw)
		if err != nil {
			t.Errorf("%s: %v", loc, err)
			continue
		}
		if c.Compare("abc", "abc") != 0 || c.Compare("", "a") >= 0 {
			t.Errorf("%s: basic comparisons fail", loc)
		}
		if c.Spec().Locale != loc {
			t.Errorf("%s: spec locale %s", loc, c.Spec().Locale)
		}
	}
}

// TestTags checks the x/text tags New builds from ICU locale IDs and
// options.
func TestTags(t *testing.T) {
	for _, tc := range []struct {
		spec bson.D
		want string
	}{
		{bson.D{{Key: "locale", Value: "en_US_POSIX"}}, "en-US-u-ks-level3-va-posix"},
		{bson.D{{Key: "locale", Value: "de@collation=phonebook"}, {Key: "strength", Value: 2}}, "de-u-co-phonebk-ks-level2"},
		{bson.D{{Key: "locale", Value: "fr_CA"}}, "fr-CA-u-kb-true-ks-level3"},
	} {
		raw, _ := bson.Marshal(tc.spec)
		c, err := Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.tag.String(); got != tc.want {
			t.Errorf("%v: tag %s, want %s", tc.spec, got, tc.want)
		}
	}
}
