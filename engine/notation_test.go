package engine

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

func TestMoveRoundTrip(t *testing.T) {
	moves := []Move{RedealMove, TurnMove}
	for _, c := range allCards() {
		for i := range 4 {
			moves = append(moves, PlaceMove(c, F(i)), PlaceMove(c, W(i)))
		}
	}
	seen := map[string]bool{}
	for _, m := range moves {
		s := m.String()
		if seen[s] {
			t.Fatalf("two moves print as %q", s)
		}
		seen[s] = true
		for _, form := range []string{s, strings.ToLower(s), " " + s + "\t"} {
			got, err := ParseMove(form)
			if err != nil || got != m {
				t.Fatalf("ParseMove(%q) = %v, %v; want %v", form, got, err, m)
			}
		}
		if got := string(m.AppendText([]byte("x"))); got != "x"+s {
			t.Fatalf("AppendText(%v) = %q, want %q", m, got, "x"+s)
		}
		b, err := m.MarshalText()
		if err != nil || string(b) != s {
			t.Fatalf("MarshalText(%v) = %q, %v", m, b, err)
		}
		var u Move
		if err := u.UnmarshalText(b); err != nil || u != m {
			t.Fatalf("UnmarshalText(%q) = %v, %v", b, u, err)
		}
	}
	if len(seen) != 52*8+2 {
		t.Fatalf("%d distinct moves", len(seen))
	}
}

func TestParseMove(t *testing.T) {
	tests := []struct {
		in   string
		want string // "" for an error
	}{
		{"3H>F2", "3H>F2"},
		{"jd>w1", "JD>W1"},
		{"10H>F4", "TH>F4"},
		{"10s>w3", "TS>W3"},
		{"R", "R"},
		{"r", "R"},
		{"T", "T"},
		{" t ", "T"},
		{"T>F1", ""},
		{"TT", ""},
		{"turn", ""},
		{" KC>W4 ", "KC>W4"},
		{"", ""},
		{"AS", ""},
		{"AS>", ""},
		{">F1", ""},
		{"AS>F0", ""},
		{"AS>F5", ""},
		{"AS>W0", ""},
		{"AS>X1", ""},
		{"AS>F10", ""},
		{"AS>F1>W1", ""},
		{"XS>F1", ""},
		{"1S>F1", ""},
		{"AS-F1", ""},
		{"AS > F1", ""},
		{"RR", ""},
		{"R1", ""},
		{"resign", ""},
		{"F1>AS", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			m, err := ParseMove(tt.in)
			if tt.want == "" {
				if err == nil {
					t.Fatalf("ParseMove(%q) = %v, want an error", tt.in, m)
				}
				if !strings.Contains(err.Error(), tt.in) {
					t.Errorf("error %q does not quote the input", err)
				}
				return
			}
			if err != nil || m.String() != tt.want {
				t.Fatalf("ParseMove(%q) = %v, %v; want %s", tt.in, m, err, tt.want)
			}
		})
	}
}

func TestParsePile(t *testing.T) {
	for i := range 4 {
		for _, p := range []Pile{F(i), W(i)} {
			for _, s := range []string{p.String(), strings.ToLower(p.String())} {
				got, err := ParsePile(s)
				if err != nil || got != p {
					t.Errorf("ParsePile(%q) = %v, %v; want %v", s, got, err, p)
				}
			}
		}
	}
	if F(0).String() != "F1" || W(3).String() != "W4" || (Pile{}).String() != "?" {
		t.Errorf("pile strings %s %s %s", F(0), W(3), Pile{})
	}
	for _, s := range []string{"", "F", "F0", "F5", "W9", "X1", "F11", "1F", "f 1"} {
		if p, err := ParsePile(s); err == nil {
			t.Errorf("ParsePile(%q) = %v, want an error", s, p)
		}
	}
}

func TestRecordString(t *testing.T) {
	var moves []Move
	for _, s := range strings.Fields("7H>W1 9S>W2 4H>W3 8D>W4 8H>W4 5C>W3 JH>W2 6H>W1 9C>W1 JS>W2 5H>W3 KH>W4") {
		moves = append(moves, mustMove(t, s))
	}
	rec := Record{Variant: "classic", Deal: 18446744073709551615, Moves: moves, Resigned: true, Result: "resigned 0",
		Tags: [][2]string{{"Player", "Ann \"the Ace\" Smith"}, {"Event", ""}}}
	want := `[Variant "classic"]
[Deal "18446744073709551615"]
[Result "resigned 0"]
[Player "Ann \"the Ace\" Smith"]
[Event ""]
7H>W1 9S>W2 4H>W3 8D>W4 8H>W4 5C>W3 JH>W2 6H>W1 9C>W1 JS>W2
5H>W3 KH>W4 resign
`
	if got := rec.String(); got != want {
		t.Fatalf("String():\n%s\nwant:\n%s", got, want)
	}
	back, err := ParseRecord(want)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, rec) {
		t.Fatalf("ParseRecord(String()) = %+v, want %+v", back, rec)
	}
	// Empty records.
	for _, r := range []Record{
		{Variant: "strict", Deal: 0},
		{Variant: "strict", Deal: 7, Resigned: true},
		{Variant: "redeal", Deal: 7, Moves: []Move{RedealMove}},
	} {
		back, err := ParseRecord(r.String())
		if err != nil || !reflect.DeepEqual(back, r) {
			t.Errorf("round trip of %+v:\n%s gave %+v, %v", r, r.String(), back, err)
		}
	}
}

func TestParseRecordForms(t *testing.T) {
	text := "; a game from the rule text\r\n" +
		"\r\n" +
		"  [Variant \"Four-At-A-Time\"] ; case does not matter\r\n" +
		"[Deal \"42\"]\r\n" +
		"[Site `club`]\r\n" +
		"\r\n" +
		"3h>f2    10D>W1 ; comment\r\n" +
		"\tR\r\n" +
		"RESIGN\r\n" +
		"; trailing comment\n"
	rec, err := ParseRecord(text)
	if err != nil {
		t.Fatal(err)
	}
	want := Record{Variant: "four-at-a-time", Deal: 42, Moves: []Move{mustMove(t, "3H>F2"), mustMove(t, "TD>W1"), RedealMove},
		Resigned: true, Tags: [][2]string{{"Site", "club"}}}
	if !reflect.DeepEqual(rec, want) {
		t.Fatalf("ParseRecord = %+v, want %+v", rec, want)
	}
}

func TestParseRecordErrors(t *testing.T) {
	const head = "[Variant \"classic\"]\n[Deal \"1\"]\n"
	tests := []struct {
		name string
		text string
		want []string // all in the error
	}{
		{"no tags", "7H>W1\n", []string{"Variant", "Deal"}},
		{"no deal", "[Variant \"classic\"]\n7H>W1\n", []string{"Deal"}},
		{"no variant", "[Deal \"1\"]\n", []string{"Variant"}},
		{"empty", "", []string{"Variant"}},
		{"unknown variant", "[Variant \"chess\"]\n[Deal \"1\"]\n", []string{"line 1", "chess"}},
		{"negative deal", "[Variant \"classic\"]\n\n[Deal \"-1\"]\n", []string{"line 3", "-1"}},
		{"deal too big", "[Variant \"classic\"]\n[Deal \"18446744073709551616\"]\n", []string{"line 2", "18446744073709551616"}},
		{"deal not a number", "[Variant \"classic\"]\n[Deal \"one\"]\n", []string{"line 2", "one"}},
		{"deal unquoted", "[Variant \"classic\"]\n[Deal 1]\n", []string{"line 2", "quoted"}},
		{"tag without ]", "[Variant \"classic\"\n[Deal \"1\"]\n", []string{"line 1", "]"}},
		{"tag without value", "[Variant]\n[Deal \"1\"]\n", []string{"line 1"}},
		{"tag twice", head + "[Deal \"2\"]\n", []string{"line 3", "Deal", "twice"}},
		{"result twice", head + "[Result \"won 52\"]\n[Result \"won 52\"]\n", []string{"line 4", "twice"}},
		{"tag after moves", head + "7H>W1\n[Result \"stuck 0\"]\n", []string{"line 4", "tag after the moves"}},
		{"tag after moves and comments", head + "7H>W1 ; x\n\n; y\n[Event \"x\"]\n", []string{"line 6", "tag after the moves"}},
		{"tag after resign", head + "resign\n[Event \"x\"]\n", []string{"line 4", "tag after the moves"}},
		{"move after resign", head + "7H>W1 resign 9S>W1\n", []string{"line 3", "9S>W1", "after resign"}},
		{"resign twice", head + "resign\nresign\n", []string{"line 4", "after resign"}},
		{"bad move", head + "7H>W1 9S>W1 4H>W5\n", []string{"line 3", "move 3", "4H>W5"}},
		{"bad move on a later line", head + "; moves\n7H>W1 9S>W1 4H>W1 8D>W1 8H>W1 5C>W1 JH>W1 6H>W1 9C>W1 JS>W1\n5H>W1 KH>W1 XX>W1\n",
			[]string{"line 5", "move 13", "XX>W1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec, err := ParseRecord(tt.text)
			if err == nil {
				t.Fatalf("ParseRecord accepted it: %+v", rec)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// stuckGame plays deal 1 of classic with every card onto W1 but the Aces,
// which go up: the game ends stuck with 4 cards on the foundations.
func stuckGame(t *testing.T) (Game, []Move) {
	t.Helper()
	g := New(mustVariant(t, "classic"), 1)
	var moves []Move
	f := 0
	for g.Status() == Playing {
		c := turned(&g)[0]
		m := PlaceMove(c, W(0))
		if c.Rank() == Ace {
			m = PlaceMove(c, F(f))
			f++
		}
		play(t, &g, m.String())
		moves = append(moves, m)
	}
	if g.Status() != Stuck || g.Score() != 4 {
		t.Fatalf("deal 1 ends %v %d", g.Status(), g.Score())
	}
	return g, moves
}

func TestReplay(t *testing.T) {
	g, moves := stuckGame(t)
	rec := RecordOf(&g, moves)
	if rec.Result != "stuck 4" || rec.Resigned || rec.Variant != "classic" || rec.Deal != 1 || len(rec.Moves) != 52 {
		t.Fatalf("RecordOf = %+v", rec)
	}
	moves[0] = mustMove(t, "KC>W1") // the record holds its own copy
	if rec.Moves[0] == moves[0] {
		t.Fatal("RecordOf shares the caller's slice")
	}
	text := rec.String()
	if !strings.Contains(text, "[Result \"stuck 4\"]\n") {
		t.Fatalf("no Result tag in\n%s", text)
	}
	final, err := mustParse(t, text).Replay()
	if err != nil || final != g {
		t.Fatalf("Replay = %v, %v", final.String(), err)
	}

	tests := []struct {
		name string
		edit func(string) string
		want []string // in the error; none for success
	}{
		{"as written", func(s string) string { return s }, nil},
		{"without result", func(s string) string { return strings.Replace(s, "[Result \"stuck 4\"]\n", "", 1) }, nil},
		{"result status mismatch", func(s string) string { return strings.Replace(s, "stuck 4", "won 52", 1) }, []string{"stuck 4", "won 52"}},
		{"result score mismatch", func(s string) string { return strings.Replace(s, "stuck 4", "stuck 5", 1) }, []string{"stuck 4", "stuck 5"}},
		{"result unreadable", func(s string) string { return strings.Replace(s, "stuck 4", "lost", 1) }, []string{"lost"}},
		{"resign after the end", func(s string) string { return strings.TrimSuffix(s, "\n") + " resign\n" }, []string{"resign", "stuck"}},
		{"illegal move", func(s string) string { return strings.Replace(s, "7H>W1 9S>W1", "7H>W1 9S>F1", 1) }, []string{"move 2", "9S>F1"}},
		{"move after the end", func(s string) string { return strings.TrimSuffix(s, "\n") + " AS>W2\n" }, []string{"move 53", "over"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := tt.edit(rec.String())
			_, err := mustParse(t, text).Replay()
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Replay: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Replay of\n%s\nsucceeded", text)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestReplayResign(t *testing.T) {
	g := New(mustVariant(t, "strict"), 2)
	moves := []Move{mustMove(t, "QD>W1"), mustMove(t, "3C>W2")}
	play(t, &g, "QD>W1", "3C>W2")
	g.Resign()
	rec := RecordOf(&g, moves)
	text := rec.String()
	if !strings.HasSuffix(text, "QD>W1 3C>W2 resign\n") || !strings.Contains(text, "[Result \"resigned 0\"]") {
		t.Fatalf("record:\n%s", text)
	}
	final, err := mustParse(t, text).Replay()
	if err != nil || final != g || final.Status() != Resigned {
		t.Fatalf("Replay = %v, %v", final.String(), err)
	}
	// Resigning at once.
	g = New(mustVariant(t, "strict"), 2)
	g.Resign()
	final, err = mustParse(t, RecordOf(&g, nil).String()).Replay()
	if err != nil || final != g {
		t.Fatalf("Replay of an immediate resignation = %v, %v", final.String(), err)
	}
	// A resignation the Result does not record.
	if _, err := mustParse(t, strings.Replace(text, "resigned 0", "playing 0", 1)).Replay(); err == nil {
		t.Fatal("Result \"playing 0\" accepted for a resigned game")
	}
	// A game left unfinished replays to a playing game.
	final, err = mustParse(t, "[Variant \"strict\"]\n[Deal \"2\"]\n[Result \"playing 0\"]\nQD>W1\n").Replay()
	if err != nil || final.Status() != Playing || final.Plies() != 1 {
		t.Fatalf("unfinished game: %v, %v", final.String(), err)
	}
}

func mustParse(t *testing.T, text string) Record {
	t.Helper()
	r, err := ParseRecord(text)
	if err != nil {
		t.Fatalf("ParseRecord(%q): %v", text, err)
	}
	return r
}

// TestRecordTagValueWithSemicolon: ";" starts a comment, so a tag value
// holding one must not be written as it is, or the record's own text would
// not read back.
func TestRecordTagValueWithSemicolon(t *testing.T) {
	for _, rec := range []Record{
		{Variant: "classic", Deal: 3, Tags: [][2]string{{"Event", "Cup; round 2"}}},
		{Variant: "classic", Deal: 3, Result: "stuck;0"},
		{Variant: "classic", Deal: 3, Tags: [][2]string{{"Note", ";;\";"}}, Moves: []Move{mustMove(t, "QD>W1")}},
	} {
		text := rec.String()
		back, err := ParseRecord(text)
		if err != nil {
			t.Fatalf("ParseRecord of\n%s: %v", text, err)
		}
		if !reflect.DeepEqual(back, rec) {
			t.Fatalf("read back %+v, want %+v", back, rec)
		}
	}
	// As read from a text that escapes it.
	rec := mustParse(t, "[Variant \"classic\"]\n[Deal \"3\"]\n[Event \"a\\x3bb\"] ; the comment\n")
	if rec.Tags[0][1] != "a;b" {
		t.Fatalf("Event = %q", rec.Tags[0][1])
	}
	if back := mustParse(t, rec.String()); !reflect.DeepEqual(back, rec) {
		t.Fatalf("read back %+v, want %+v", back, rec)
	}
}

// TestGameTextInDocs replays the whole game that docs/engine.md shows as
// its example of a game text, so that the page can only show a legal game
// of the deal it names.
func TestGameTextInDocs(t *testing.T) {
	b, err := os.ReadFile("../docs/engine.md")
	if err != nil {
		t.Fatalf("docs/engine.md not found: %v", err)
	}
	text := string(b)
	start := strings.Index(text, "\n[Variant ")
	if start < 0 {
		t.Fatal("docs/engine.md shows no game text")
	}
	end := strings.Index(text[start:], "\n```")
	if end < 0 {
		t.Fatal("docs/engine.md: the game text's block is not closed")
	}
	rec, err := ParseRecord(text[start+1 : start+end])
	if err != nil {
		t.Fatalf("docs/engine.md's game text: %v", err)
	}
	g, err := rec.Replay()
	if err != nil {
		t.Fatalf("docs/engine.md's game text does not replay: %v", err)
	}
	if rec.Result == "" || g.Status() != Won {
		t.Errorf("docs/engine.md's game ends %v %d (tag %q); the page says it is won", g.Status(), g.Score(), rec.Result)
	}
}
