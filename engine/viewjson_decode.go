package engine

import (
	"encoding/json"
	"strings"
)

// A View is read on every move too: by the load client (whose players
// choose their moves from it) and, in Redis mode, by the instances from
// the bus. Through encoding/json's reflection, with an UnmarshalText call
// for every card, that was a fifth of the load client's CPU. UnmarshalJSON
// reads the form AppendJSON writes by hand and leaves any other form
// (whitespace, other key orders, unknown keys, nulls, escapes) to
// encoding/json, so that what it accepts it reads exactly as encoding/json
// does (FuzzViewUnmarshalJSON compares them): fields absent from the
// input, as encoding/json leaves them, keep their values.

// plainView has View's fields and tags but not its JSON methods:
// encoding/json's reflection over it is the reference both ways.
type plainView View

// UnmarshalJSON reads a View's JSON.
func (v *View) UnmarshalJSON(data []byte) error {
	if readViewJSON(data, v) {
		return nil
	}
	return json.Unmarshal(data, (*plainView)(v))
}

// readViewJSON reads data into v if it has AppendJSON's form, and
// reports whether it did; on false, v is untouched.
func readViewJSON(data []byte, v *View) bool {
	out := *v
	r := jsonReader{b: data}
	ok := r.lit(`{"variant":`) && r.str(&out.Variant) &&
		r.lit(`,"stock":`) && r.int(&out.Stock) &&
		r.lit(`,"turned":`) && r.cards(&out.Turned) &&
		r.lit(`,"foundations":[`)
	for i := range out.Foundations {
		if !ok {
			return false
		}
		f := &out.Foundations[i]
		if i > 0 {
			ok = r.lit(",")
		}
		ok = ok && r.lit("{")
		if ok && r.peek(`"top":`) {
			ok = r.lit(`"top":`) && r.card(&f.Top) && r.lit(",")
		}
		ok = ok && r.lit(`"count":`) && r.int(&f.Count)
		if ok && r.peek(`,"wants":`) {
			ok = r.lit(`,"wants":`) && r.rank(&f.Wants)
		}
		ok = ok && r.lit(`,"step":`) && r.int(&f.Step) && r.lit("}")
	}
	ok = ok && r.lit(`],"waste":[`)
	for i := range out.Waste {
		if !ok {
			return false
		}
		w := &out.Waste[i]
		if i > 0 {
			ok = r.lit(",")
		}
		ok = ok && r.lit(`{"cards":`) && r.cards(&w.Cards) && r.lit(`,"count":`) && r.int(&w.Count) && r.lit("}")
	}
	ok = ok && r.lit(`],"redealsLeft":`) && r.int(&out.RedealsLeft)
	if ok && r.peek(`,"wasteLocked":`) {
		ok = r.lit(`,"wasteLocked":true`)
		out.WasteLocked = true
	}
	ok = ok && r.lit(`,"status":`) && r.status(&out.Status) &&
		r.lit(`,"score":`) && r.int(&out.Score) &&
		r.lit(`,"target":`) && r.int(&out.Target) &&
		r.lit(`,"moves":`) && r.int(&out.Moves) &&
		r.lit("}") && r.i == len(r.b)
	if ok {
		*v = out
	}
	return ok
}

// jsonReader reads the plainest JSON, token by token; each method reports
// whether the input had what it reads, and moves past it if so.
type jsonReader struct {
	b []byte
	i int
}

func (r *jsonReader) peek(s string) bool {
	// A comparison of string(bytes) makes no string.
	return len(r.b)-r.i >= len(s) && string(r.b[r.i:r.i+len(s)]) == s
}

func (r *jsonReader) lit(s string) bool {
	if !r.peek(s) {
		return false
	}
	r.i += len(s)
	return true
}

// quoted reads a string of printable ASCII without escapes.
func (r *jsonReader) quoted() ([]byte, bool) {
	if r.i >= len(r.b) || r.b[r.i] != '"' {
		return nil, false
	}
	for j := r.i + 1; j < len(r.b); j++ {
		switch c := r.b[j]; {
		case c == '"':
			s := r.b[r.i+1 : j]
			r.i = j + 1
			return s, true
		case c == '\\' || c < 0x20 || c > 0x7e:
			return nil, false
		}
	}
	return nil, false
}

func (r *jsonReader) str(dst *string) bool {
	s, ok := r.quoted()
	if ok && string(s) != *dst { // the same name again costs no string
		*dst = string(s)
	}
	return ok
}

// int reads an integer of at most 9 digits, as encoding/json writes one.
func (r *jsonReader) int(dst *int) bool {
	j, neg := r.i, false
	if j < len(r.b) && r.b[j] == '-' {
		neg = true
		j++
	}
	n, start := 0, j
	for j < len(r.b) && r.b[j] >= '0' && r.b[j] <= '9' && j-start < 10 {
		n = n*10 + int(r.b[j]-'0')
		j++
	}
	digits := j - start
	if digits == 0 || digits > 9 || (r.b[start] == '0' && digits > 1) || (neg && n == 0) {
		return false
	}
	if j < len(r.b) && (r.b[j] == '.' || r.b[j] == 'e' || r.b[j] == 'E') {
		return false
	}
	if neg {
		n = -n
	}
	*dst, r.i = n, j
	return true
}

// card reads a card as AppendJSON writes one: "AS", or "??" for Hidden.
func (r *jsonReader) card(dst *Card) bool {
	s, ok := r.quoted()
	if !ok || len(s) != 2 {
		return false
	}
	if s[0] == '?' && s[1] == '?' {
		*dst = Hidden
		return true
	}
	k, u := strings.IndexByte(rankLetters, s[0]), strings.IndexByte(suitLetters, s[1])
	if k < 0 || u < 0 {
		return false
	}
	*dst = NewCard(Rank(k+1), Suit(u))
	return true
}

// cards reads an array of cards into a new slice (an empty array is an
// empty slice, not nil, as encoding/json makes it).
func (r *jsonReader) cards(dst *[]Card) bool {
	if !r.lit("[") {
		return false
	}
	out := []Card{}
	for i := 0; !r.lit("]"); i++ {
		if i > 0 && !r.lit(",") {
			return false
		}
		var c Card
		if !r.card(&c) {
			return false
		}
		out = append(out, c)
	}
	*dst = out
	return true
}

func (r *jsonReader) rank(dst *Rank) bool {
	s, ok := r.quoted()
	if !ok || len(s) != 1 {
		return false
	}
	k := strings.IndexByte(rankLetters, s[0])
	if k < 0 {
		return false
	}
	*dst = Rank(k + 1)
	return true
}

func (r *jsonReader) status(dst *Status) bool {
	s, ok := r.quoted()
	if !ok {
		return false
	}
	for i, n := range statusNames {
		if n == string(s) {
			*dst = Status(i)
			return true
		}
	}
	return false
}
