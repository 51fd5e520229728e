package web

import "encoding/json"

// The client message sent on every move, {"v":1,"type":"move","id":"…",
// "move":"…"}, is read by hand: encoding/json's reflection over the
// client message's twenty fields was a twentieth of a load run's CPU.
// decodeFast takes only the plainest form (no spaces but after the object, the keys v, type, id
// and move each at most once, v a small integer, the strings printable
// ASCII, escaped only as \u00XX) and leaves everything else to encoding/json, so
// that what it accepts it reads exactly as encoding/json does
// (FuzzDecodeFast compares them).

// decodeClientMsg reads a client message into m.
func decodeClientMsg(data []byte, m *clientMsg) error {
	if decodeFast(data, m) {
		return nil
	}
	// Decoded apart and copied: m, given to encoding/json, would be moved
	// to the heap on every message, the fast ones too.
	var slow clientMsg
	err := json.Unmarshal(data, &slow)
	*m = slow
	return err
}

// decodeFast reads data into m when it has the plainest form; false
// leaves m in any state.
func decodeFast(data []byte, m *clientMsg) bool {
	*m = clientMsg{}
	// Whitespace after the object is JSON too: encoders that write one
	// value per line (gorilla's WriteJSON, the load client's) end with a
	// newline.
	for len(data) > 0 && isJSONSpace(data[len(data)-1]) {
		data = data[:len(data)-1]
	}
	if len(data) < 2 || data[0] != '{' || data[len(data)-1] != '}' {
		return false
	}
	var seen [4]bool
	i := 1
	for {
		key, next, ok := plainBytes(data, i)
		if !ok || next >= len(data) || data[next] != ':' {
			return false
		}
		i = next + 1
		var field int
		switch string(key) {
		case "v":
			field = 0
		case "type":
			field = 1
		case "id":
			field = 2
		case "move":
			field = 3
		default:
			return false
		}
		if seen[field] {
			return false
		}
		seen[field] = true
		if field == 0 {
			n, next, ok := smallInt(data, i)
			if !ok {
				return false
			}
			m.V, i = n, next
		} else {
			s, next, ok := plainBytes(data, i)
			if !ok {
				return false
			}
			switch field {
			case 1:
				m.Type = messageType(s)
			case 2:
				m.ID = string(s)
			case 3:
				m.Move = string(s)
			}
			i = next
		}
		switch {
		case i == len(data)-1:
			return true
		case data[i] == ',':
			i++
		default:
			return false
		}
	}
}

// isJSONSpace reports whether b is whitespace between JSON tokens.
func isJSONSpace(b byte) bool { return b == ' ' || b == '\n' || b == '\r' || b == '\t' }

// plainBytes reads the JSON string at data[i]: printable ASCII, where a
// \u00XX escape of a printable ASCII character may stand for it (Go's
// encoding/json writes > as \u003e, and moves have one); next is the index
// after its closing quote. Without escapes s is data's own bytes, so that
// a key or a type compared with constants costs no allocation.
func plainBytes(data []byte, i int) (s []byte, next int, ok bool) {
	if i >= len(data) || data[i] != '"' {
		return nil, 0, false
	}
	var buf []byte // the string so far, once it had an escape
	from := i + 1
	for j := i + 1; j < len(data); j++ {
		switch b := data[j]; {
		case b == '"':
			if buf == nil {
				return data[from:j], j + 1, true
			}
			return append(buf, data[from:j]...), j + 1, true
		case b == '\\':
			c, ok := asciiEscape(data, j)
			if !ok {
				return nil, 0, false
			}
			buf = append(append(buf, data[from:j]...), c)
			j += 5
			from = j + 1
		case b < 0x20 || b > 0x7e:
			return nil, 0, false
		}
	}
	return nil, 0, false
}

// hotTypes are the message types a connection sends over and over: their
// strings are shared, not made anew for every message.
var hotTypes = [...]string{"move", "ping", "resign"}

// messageType is the message type named by b.
func messageType(b []byte) string {
	for _, t := range hotTypes {
		if string(b) == t {
			return t
		}
	}
	return string(b)
}

// asciiEscape reads the escape \u00XX at data[j] that stands for a
// printable ASCII character.
func asciiEscape(data []byte, j int) (byte, bool) {
	if j+6 > len(data) || data[j+1] != 'u' || data[j+2] != '0' || data[j+3] != '0' {
		return 0, false
	}
	hi, ok1 := hexDigit(data[j+4])
	lo, ok2 := hexDigit(data[j+5])
	c := hi<<4 | lo
	return c, ok1 && ok2 && c >= 0x20 && c <= 0x7e
}

func hexDigit(b byte) (byte, bool) {
	switch {
	case b >= '0' && b <= '9':
		return b - '0', true
	case b >= 'a' && b <= 'f':
		return b - 'a' + 10, true
	case b >= 'A' && b <= 'F':
		return b - 'A' + 10, true
	}
	return 0, false
}

// smallInt reads a JSON integer of at most 9 digits, without sign or
// leading zero, at data[i].
func smallInt(data []byte, i int) (n, next int, ok bool) {
	j := i
	for j < len(data) && j-i < 10 && data[j] >= '0' && data[j] <= '9' {
		n = n*10 + int(data[j]-'0')
		j++
	}
	if j == i || j-i > 9 || (data[i] == '0' && j-i > 1) {
		return 0, 0, false
	}
	if j < len(data) && (data[j] == '.' || data[j] == 'e' || data[j] == 'E') {
		return 0, 0, false
	}
	return n, j, true
}
