package web

import (
	"encoding/json"
	"testing"
)

// TestDecodeFastTakesMoves: the move messages the browser and the load
// client send take the fast path, and are read right; other messages go
// to encoding/json.
func TestDecodeFastTakesMoves(t *testing.T) {
	for in, want := range map[string]clientMsg{
		`{"v":1,"type":"move","id":"m12","move":"3H>F2"}`:    {V: 1, Type: "move", ID: "m12", Move: "3H>F2"},
		`{"v":1,"type":"move","move":"T>W1","id":"7"}`:       {V: 1, Type: "move", ID: "7", Move: "T>W1"},
		`{"type":"ping","v":1}`:                              {V: 1, Type: "ping"},
		`{"v":1,"type":"move","id":"9","move":"3H\u003eF2"}`: {V: 1, Type: "move", ID: "9", Move: "3H>F2"}, // as Go's encoding/json writes it
		`{"v":1,"type":"mo\u0076e"}`:                         {V: 1, Type: "move"},
		// As gorilla's WriteJSON sends it (the load client): a newline after.
		"{\"v\":1,\"type\":\"move\",\"id\":\"4\",\"move\":\"T\"}\n": {V: 1, Type: "move", ID: "4", Move: "T"},
	} {
		var m clientMsg
		if !decodeFast([]byte(in), &m) || m != want {
			t.Errorf("decodeFast(%s) = %+v, want %+v on the fast path", in, m, want)
		}
	}
	for _, in := range []string{
		`{"v":1,"type":"join","race":"r","name":"ann"}`, // other fields
		`{"v":1, "type":"move"}`,                        // a space
		`{"v":1,"type":"a\nb"}`,                         // an escape other than \u00XX
		`{"v":1,"type":"\u0007"}`,                       // an escaped control character
		`{"v":1,"type":"\u00e9"}`,                       // not ASCII
		`{"v":1,"Type":"move"}`,                         // encoding/json matches keys without case
		`{"v":1,"v":2}`,                                 // a key twice
		`{"v":01}`, `{"v":1.0}`, `{"v":-1}`, `{"v":1e0}`, `{}`, `{"v":1,}`, `[]`,
	} {
		var m clientMsg
		if decodeFast([]byte(in), &m) {
			t.Errorf("decodeFast(%s) took the fast path", in)
		}
	}
}

// FuzzDecodeFast: whatever the fast path accepts, encoding/json accepts
// too and reads the same.
func FuzzDecodeFast(f *testing.F) {
	for _, s := range []string{"{\"v\":1,\"type\":\"move\"}\r\n ", `{"v":1,"type":"move","id":"m1","move":"3H>F2"}`, `{"v":1,"type":"ping"}`, `{"v":12,"id":""}`, `{"move":"x","v":0}`, `{"v":1,"type":"move","id":"m\u0031","move":"3H\u003eF2"}`, `{"id":"\u005c\u0022"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var fast clientMsg
		if !decodeFast(data, &fast) {
			return
		}
		var slow clientMsg
		if err := json.Unmarshal(data, &slow); err != nil {
			t.Fatalf("fast path read %q, encoding/json refuses it: %v", data, err)
		}
		if fast != slow {
			t.Fatalf("%q: fast %+v, encoding/json %+v", data, fast, slow)
		}
	})
}
