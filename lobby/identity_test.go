package lobby_test

import (
	"strings"
	"testing"
	"time"

	"sirtommy/lobby"
	"sirtommy/race"
)

func TestTokensRoundTripForgedAndExpired(t *testing.T) {
	clock := newClock()
	tokens, err := lobby.NewTokens([]byte(strings.Repeat("k", 32)), clock, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	tok, who := tokens.Issue("p1", "ann")
	got, err := tokens.Verify(tok)
	if err != nil || got != who || got.ID != "p1" || got.Name != "ann" {
		t.Fatalf("verify: %+v, %v", got, err)
	}
	other, _ := lobby.NewTokens([]byte(strings.Repeat("x", 32)), clock, time.Hour)
	otherTok, _ := other.Issue("p1", "ann")
	dot := strings.LastIndexByte(tok, '.')
	for name, bad := range map[string]string{
		"empty":          "",
		"garbage":        "hello",
		"other secret":   otherTok,
		"payload edited": strings.Replace(tok, tok[3:8], "AAAAA", 1),
		"mac edited":     tok[:dot+1] + "AAAA" + tok[dot+5:],
		"no mac":         tok[:dot],
	} {
		if _, err := tokens.Verify(bad); race.ErrorCode(err) != lobby.CodeInvalidToken {
			t.Errorf("%s: %v, want %s", name, err, lobby.CodeInvalidToken)
		}
	}
	clock.Advance(time.Hour)
	if _, err := tokens.Verify(tok); race.ErrorCode(err) != lobby.CodeExpiredToken {
		t.Errorf("expired: %v, want %s", err, lobby.CodeExpiredToken)
	}
	if _, err := lobby.NewTokens([]byte("short"), clock, 0); err == nil {
		t.Error("a short secret was accepted")
	}
}

func TestCheckName(t *testing.T) {
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{"ann", "ann", true},
		{"  Zoë B  ", "Zoë B", true},
		{"", "", false},
		{"   ", "", false},
		{strings.Repeat("a", lobby.MaxNameRunes), strings.Repeat("a", lobby.MaxNameRunes), true},
		{strings.Repeat("a", lobby.MaxNameRunes+1), "", false},
		{"a\x00b", "", false},
		{"a\nb", "", false},
		{"a\tb", "", false},
		{"a\u202eb", "", false}, // right-to-left override
		{"<b>ann</b>", "", false},
		{"ann & bob", "", false},
		{"\xff", "", false},
	} {
		got, err := lobby.CheckName(c.in)
		if c.ok != (err == nil) || got != c.want {
			t.Errorf("CheckName(%q) = %q, %v", c.in, got, err)
		}
		if err != nil && race.ErrorCode(err) != lobby.CodeBadName {
			t.Errorf("CheckName(%q): code %s", c.in, race.ErrorCode(err))
		}
	}
}
