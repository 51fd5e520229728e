package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// A View is sent on every move (to its player, and on the instances' bus in
// Redis mode) and in every state: it writes its JSON by hand. Through
// encoding/json's reflection, with a MarshalText call and an allocation for
// every card, it was most of the cost of a state message. The output is
// byte for byte what encoding/json writes for View's fields and tags
// (TestViewJSONIsEncodingJSON compares them over whole games of every
// variant), so a field added to View must be added here too.

// MarshalJSON is View's JSON, as AppendJSON writes it.
func (v View) MarshalJSON() ([]byte, error) { return v.AppendJSON(make([]byte, 0, 512)) }

// AppendJSON appends v's JSON to dst. It fails, as encoding/json does, on
// a card that is neither a card nor Hidden, or a foundation's rank that is
// not a rank.
func (v *View) AppendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, `{"variant":`...)
	dst = AppendJSONString(dst, v.Variant)
	dst = jsonInt(dst, `,"stock":`, v.Stock)
	dst = append(dst, `,"turned":`...)
	dst, err := appendCardsJSON(dst, v.Turned)
	if err != nil {
		return dst, err
	}
	dst = append(dst, `,"foundations":[`...)
	for i := range v.Foundations {
		f := &v.Foundations[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '{')
		if f.Top != NoCard {
			if dst, err = appendCardJSON(append(dst, `"top":`...), f.Top); err != nil {
				return dst, err
			}
			dst = append(dst, ',')
		}
		dst = jsonInt(dst, `"count":`, f.Count)
		if f.Wants != 0 {
			if f.Wants < Ace || f.Wants > King {
				return dst, fmt.Errorf("engine: cannot write invalid rank %d", uint8(f.Wants))
			}
			dst = append(append(append(dst, `,"wants":"`...), f.Wants.String()...), '"')
		}
		dst = append(jsonInt(dst, `,"step":`, f.Step), '}')
	}
	dst = append(dst, `],"waste":[`...)
	for i := range v.Waste {
		w := &v.Waste[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		if dst, err = appendCardsJSON(append(dst, `{"cards":`...), w.Cards); err != nil {
			return dst, err
		}
		dst = append(jsonInt(dst, `,"count":`, w.Count), '}')
	}
	dst = jsonInt(append(dst, ']'), `,"redealsLeft":`, v.RedealsLeft)
	if v.WasteLocked {
		dst = append(dst, `,"wasteLocked":true`...)
	}
	dst = append(append(append(dst, `,"status":"`...), v.Status.String()...), '"')
	dst = jsonInt(dst, `,"score":`, v.Score)
	dst = jsonInt(dst, `,"target":`, v.Target)
	dst = jsonInt(dst, `,"moves":`, v.Moves)
	return append(dst, '}'), nil
}

// AppendJSONString appends s as a JSON string, as encoding/json writes it
// without HTML escaping (a caller that wants it escapes when it compacts
// the result). Plain printable ASCII, the usual case, is copied as it is;
// anything else (ids and names come from clients) goes through
// encoding/json. The hand-written JSON of views, race events and the
// protocol's envelope all write their strings with it.
func AppendJSONString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if b := s[i]; b < 0x20 || b == '"' || b == '\\' || b >= utf8.RuneSelf {
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			_ = enc.Encode(s) // a string always encodes
			return append(dst, bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})...)
		}
	}
	return append(append(append(dst, '"'), s...), '"')
}

// jsonInt appends key (with its colon) and n.
func jsonInt(dst []byte, key string, n int) []byte {
	return strconv.AppendInt(append(dst, key...), int64(n), 10)
}

// appendCardsJSON appends cs as a JSON array of card strings (null if nil).
func appendCardsJSON(dst []byte, cs []Card) ([]byte, error) {
	if cs == nil {
		return append(dst, "null"...), nil
	}
	dst = append(dst, '[')
	for i, c := range cs {
		if i > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = appendCardJSON(dst, c); err != nil {
			return dst, err
		}
	}
	return append(dst, ']'), nil
}

// appendCardJSON appends c as a JSON string: "AS", or "??" for Hidden.
func appendCardJSON(dst []byte, c Card) ([]byte, error) {
	if !c.Valid() && c != Hidden {
		return dst, fmt.Errorf("engine: cannot write invalid card %d", uint8(c))
	}
	return append(c.AppendText(append(dst, '"')), '"'), nil
}
