package account

import (
	"strings"

	"sirtommy/engine"
	"sirtommy/race"
)

// Username bounds.
const (
	MinUsername = 3
	MaxUsername = 20
)

// reserved are usernames nobody may take (compared in lower case): words
// that would pass for the site or its staff, the computer and the bots'
// levels, and what a guest's generated name begins with.
var reserved = map[string]bool{
	"admin": true, "administrator": true, "root": true, "system": true, "staff": true,
	"moderator": true, "mod": true, "support": true, "help": true, "sirtommy": true,
	"computer": true, "bot": true, "ghost": true, "nobody": true, "anonymous": true,
	"guest": true, "api": true, "server": true, "owner": true, "me": true,
}

func init() {
	for l := engine.Easy; l <= engine.Expert; l++ {
		reserved[l.String()] = true
	}
}

// Key is a username's key: its lower case, unique among accounts.
func Key(username string) string { return strings.ToLower(username) }

// CheckUsername validates a username: 3 to 20 ASCII letters, digits, '-'
// and '_', not a reserved word and not beginning with "guest" (guests'
// generated names do). It refuses with CodeBadUsername or
// CodeReservedUsername and a sentence; it does not look at other accounts.
func CheckUsername(name string) error {
	if n := len(name); n < MinUsername || n > MaxUsername {
		return race.Errorf(CodeBadUsername, "a username has %d to %d characters; %q has %d", MinUsername, MaxUsername, clip(name), len([]rune(name)))
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return race.Errorf(CodeBadUsername, "a username has only letters a to z, digits, - and _; %q has %q", clip(name), r)
		}
	}
	k := Key(name)
	if reserved[k] || strings.HasPrefix(k, "guest") {
		return race.Errorf(CodeReservedUsername, "the username %q is reserved; choose another", name)
	}
	return nil
}

// clip shortens a refused name for a message.
func clip(s string) string {
	if r := []rune(s); len(r) > 2*MaxUsername {
		return string(r[:2*MaxUsername]) + "…"
	}
	return s
}

// Reserved reports whether name is a reserved word in any case: guests
// may not take one as display name either.
func Reserved(name string) bool { return reserved[Key(name)] }
