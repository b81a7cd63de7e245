package advisor

import "net/url"

// Redact removes the credentials from a connection string, for reports.
func Redact(uri string) string {
	u, err := url.Parse(uri)
	if err != nil {
		return "(unparsable URI)"
	}
	if u.User != nil {
		u.User = url.User("…")
	}
	return u.String()
}
