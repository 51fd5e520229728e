package web

import "encoding/json"

// The client message sent on every move, {"v":1,"type":"move","id":"…",
// "move":"…"}, is read by hand: encoding/json's reflection over the
// client message's twenty fields was a twentieth of a load run's CPU.
// decodeFast takes only the plainest form (no spaces, the keys v, type, id
// and move each at most once, v a small integer, the strings printable
// ASCII without escapes) and leaves everything else to encoding/json, so
// that what it accepts it reads exactly as encoding/json does
// (FuzzDecodeFast compares them).

// decodeClientMsg reads a client message into m.
func decodeClientMsg(data []byte, m *clientMsg) error {
	if decodeFast(data, m) {
		return nil
	}
	*m = clientMsg{}
	return json.Unmarshal(data, m)
}

// decodeFast reads data into m when it has the plainest form; false
// leaves m in any state.
func decodeFast(data []byte, m *clientMsg) bool {
	*m = clientMsg{}
	if len(data) < 2 || data[0] != '{' || data[len(data)-1] != '}' {
		return false
	}
	var seen [4]bool
	i := 1
	for {
		key, next, ok := plainString(data, i)
		if !ok || next >= len(data) || data[next] != ':' {
			return false
		}
		i = next + 1
		var field int
		switch key {
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
			s, next, ok := plainString(data, i)
			if !ok {
				return false
			}
			switch field {
			case 1:
				m.Type = s
			case 2:
				m.ID = s
			case 3:
				m.Move = s
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

// plainString reads the JSON string at data[i]: printable ASCII without a
// quote or backslash inside; next is the index after its closing quote.
func plainString(data []byte, i int) (s string, next int, ok bool) {
	if i >= len(data) || data[i] != '"' {
		return "", 0, false
	}
	for j := i + 1; j < len(data); j++ {
		switch b := data[j]; {
		case b == '"':
			return string(data[i+1 : j]), j + 1, true
		case b < 0x20 || b > 0x7e || b == '\\':
			return "", 0, false
		}
	}
	return "", 0, false
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
