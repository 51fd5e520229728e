package sqlstore

import "net/url"

// redact names a PostgreSQL URL without its password.
func redact(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" && u.Path == "" {
		return "the --database URL"
	}
	u.User = nil
	u.RawQuery = ""
	return u.Host + u.Path
}
