package fleet

import (
	"encoding/json"
	"strconv"

	"sirtommy/engine"
)

// appendFrame appends fr's JSON to dst as encoding/json would write it
// (without HTML escaping): a frame is written for every forwarded request
// and reply, and encoding/json's reflection was most of a cross-instance
// move's extra encoding. A reply's Info, rare, goes through
// encoding/json. TestAppendFrame compares the two.
func appendFrame(dst []byte, fr *frame) ([]byte, error) {
	dst = engine.AppendJSONString(append(dst, `{"from":`...), fr.From)
	dst = append(dst, `,"m":`...)
	if fr.M == nil {
		return append(dst, "null}"...), nil
	}
	dst = append(dst, '[')
	for i := range fr.M {
		if i > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = appendEnvelope(dst, &fr.M[i]); err != nil {
			return nil, err
		}
	}
	return append(dst, "]}"...), nil
}

func appendEnvelope(dst []byte, e *envelope) ([]byte, error) {
	dst = strconv.AppendUint(append(dst, `{"n":`...), e.N, 10)
	if e.Req != nil {
		dst = appendRequest(append(dst, `,"req":`...), e.Req)
	}
	if e.Rep != nil {
		var err error
		if dst, err = appendReply(append(dst, `,"rep":`...), e.Rep); err != nil {
			return nil, err
		}
	}
	return append(dst, '}'), nil
}

// appendString appends ,"name":"s", or nothing when s is empty (omitempty).
func appendString(dst []byte, name, s string) []byte {
	if s == "" {
		return dst
	}
	return engine.AppendJSONString(append(append(append(dst, `,"`...), name...), `":`...), s)
}

func appendRequest(dst []byte, r *Request) []byte {
	dst = engine.AppendJSONString(append(dst, `{"op":`...), string(r.Op))
	dst = engine.AppendJSONString(append(dst, `,"race":`...), r.Race)
	dst = engine.AppendJSONString(append(dst, `,"topic":`...), r.Topic)
	dst = appendString(dst, "name", r.Name)
	dst = appendString(dst, "id", r.ID)
	dst = appendString(dst, "token", r.Token)
	dst = appendString(dst, "player", r.Player)
	dst = strconv.AppendInt(append(dst, `,"seat":`...), int64(r.Seat), 10)
	dst = appendString(dst, "move", r.Move)
	if r.Watching {
		dst = append(dst, `,"watching":true`...)
	}
	return append(dst, '}')
}

func appendReply(dst []byte, r *Reply) ([]byte, error) {
	dst = append(dst, '{')
	if r.Err != nil {
		dst = engine.AppendJSONString(append(dst, `"err":{"code":`...), string(r.Err.Code))
		dst = appendString(dst, "reason", r.Err.Reason)
		dst = engine.AppendJSONString(append(dst, `,"message":`...), r.Err.Message)
		dst = append(dst, "},"...)
	}
	dst = strconv.AppendInt(append(dst, `"seat":`...), int64(r.Seat), 10)
	dst = appendString(dst, "token", r.Token)
	dst = appendString(dst, "next", r.Next)
	dst = appendString(dst, "state", string(r.State))
	if r.Info != nil {
		b, err := json.Marshal(r.Info)
		if err != nil {
			return nil, err
		}
		dst = append(append(dst, `,"info":`...), b...)
	}
	return append(dst, '}'), nil
}
