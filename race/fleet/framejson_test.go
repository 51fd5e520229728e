package fleet

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"sirtommy/race"
)

// TestAppendFrame: appendFrame writes what encoding/json writes (HTML
// left unescaped), for requests and replies with every field set and
// with none, strings that need escaping included, and the frame reads
// back as it was, by readFrame as by encoding/json.
func TestAppendFrame(t *testing.T) {
	frames := []frame{
		{From: "a", M: nil},
		{From: "b", M: []envelope{}},
		{From: "inst\"<1>", M: []envelope{
			{N: 1, Req: &Request{Op: OpMove, Race: "R", Topic: "R/conn/a/1", Seat: 1, Move: "KH>F1", ID: "m7"}},
			{N: 18446744073709551615, Req: &Request{Op: OpJoin, Race: "R", Topic: "t", Name: "Zoë \\ \"q\" <b>&\n", ID: "x",
				Token: "tok", Player: "p1", Seat: -1, Move: "m", Watching: true}},
			{N: 2, Req: &Request{}},
			{N: 3, Rep: &Reply{}},
			{N: 4, Rep: &Reply{Err: &WireError{Code: race.CodeIllegalMove, Reason: "why", Message: "no \"way\""}, Seat: 1,
				Token: "t", Next: "n", State: race.Finished}},
			{N: 5, Rep: &Reply{Err: &WireError{Code: CodeNotOwner, Message: "m"}}},
			{N: 6, Rep: &Reply{Info: &race.Info{Race: "R", Variant: "classic", State: race.Running}}},
			{N: 7},
		}},
	}
	for _, fr := range frames {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(&fr); err != nil {
			t.Fatal(err)
		}
		got, err := appendFrame(nil, &fr)
		if err != nil {
			t.Fatal(err)
		}
		if w := bytes.TrimSuffix(want.Bytes(), []byte("\n")); !bytes.Equal(got, w) {
			t.Errorf("appendFrame:\n got %s\nwant %s", got, w)
		}
		var std frame
		if err := json.Unmarshal(got, &std); err != nil {
			t.Fatalf("%s: %v", got, err)
		}
		back, err := readFrame(got)
		if err != nil {
			t.Fatalf("readFrame %s: %v", got, err)
		}
		if !reflect.DeepEqual(back, std) {
			t.Errorf("readFrame read %+v, encoding/json %+v", back, std)
		}
		if fr.M == nil {
			continue
		}
		if !reflect.DeepEqual(back, fr) {
			t.Errorf("read back as %+v, want %+v", back, fr)
		}
	}
}

// FuzzReadFrame: readFrame reads what encoding/json reads, and refuses
// what it refuses.
func FuzzReadFrame(f *testing.F) {
	for _, s := range []string{
		`{"from":"a","m":[{"n":1,"req":{"op":"move","race":"R","topic":"t","seat":1,"move":"KH>F1","id":"m7"}}]}`,
		`{"from":"b","m":[{"n":2,"rep":{"err":{"code":"illegal-move","message":"no"},"state":"finished"}}]}`,
		`{"from":"c\u00e9","m":[]}`,
		`{"from":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var std frame
		serr := json.Unmarshal(b, &std)
		got, err := readFrame(b)
		if (err == nil) != (serr == nil) {
			t.Fatalf("%q: readFrame error %v, encoding/json %v", b, err, serr)
		}
		if err == nil && !reflect.DeepEqual(got, std) {
			t.Fatalf("%q: readFrame %+v, encoding/json %+v", b, got, std)
		}
	})
}
