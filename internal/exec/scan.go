package executor

import (
	"bytes"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/runner-cli/runner/internal/strictjson"
)

// scanMaxDepth bounds the nesting the object scanner follows. It also
// bounds the scanner's work on hostile input: a candidate object is
// abandoned at its first syntax error or when it nests deeper than this.
const scanMaxDepth = 128

// scanDeepCheck is the nesting at which a candidate object is checked for
// nesting deeper than scanMaxDepth before the decoder reads on.
const scanDeepCheck = 16

// scanOptions read candidate objects for their syntax only: duplicate
// names and invalid UTF-8 inside strings do not make an object end
// elsewhere, so they are left to whoever reads the object.
var scanOptions = []jsontext.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)}

// topLevelObjects returns the [start, end) spans of the JSON objects in
// data that are not inside another one, in order; text around and between
// them is ignored. A candidate starts at each '{' outside a found object
// and must be a syntactically valid object (strings, escapes, numbers,
// literals) to count.
func topLevelObjects(data []byte) [][2]int {
	var spans [][2]int
	var s objectScanner
	for i := 0; i < len(data); {
		j := bytes.IndexByte(data[i:], '{')
		if j < 0 {
			break
		}
		start := i + j
		if end := s.objectEnd(data, start); end > 0 {
			spans = append(spans, [2]int{start, end})
			i = end
		} else {
			i = start + 1
		}
	}
	return spans
}

// lastObject returns the last top-level JSON object in data, or nil.
func lastObject(data []byte) []byte {
	spans := topLevelObjects(data)
	if len(spans) == 0 {
		return nil
	}
	last := spans[len(spans)-1]
	return data[last[0]:last[1]]
}

// objectScanner checks candidate objects with one reused decoder.
type objectScanner struct {
	buf bytes.Buffer
	dec jsontext.Decoder
}

// objectEnd returns the end (exclusive) of the JSON object starting at
// data[start] == '{', or -1 when no valid object starts there. The object
// is read token by token, so that nesting deeper than scanMaxDepth stops
// the reading where it begins.
func (s *objectScanner) objectEnd(data []byte, start int) int {
	// Most braces in text start no object: one needs a name or '}' next.
	next := start + 1
	for next < len(data) && (data[next] == ' ' || data[next] == '\t' || data[next] == '\n' || data[next] == '\r') {
		next++
	}
	if next == len(data) || (data[next] != '"' && data[next] != '}') {
		return -1
	}
	s.buf = *bytes.NewBuffer(data[start:])
	s.dec.Reset(&s.buf, scanOptions...)
	for {
		switch kind := s.dec.PeekKind(); kind {
		case jsontext.KindInvalid:
			return -1
		case jsontext.KindBeginObject, jsontext.KindBeginArray:
			switch s.dec.StackDepth() {
			case scanDeepCheck:
				// Deep already: the brackets say at less cost than the
				// decoder whether the object nests too deep.
				if strictjson.DeeperThan(data[start:], scanMaxDepth) >= 0 {
					return -1
				}
			case scanMaxDepth:
				return -1
			}
			fallthrough
		default:
			// A value where a name belongs: refused here without the cost
			// of the decoder's error.
			if in, n := s.dec.StackIndex(s.dec.StackDepth()); in == jsontext.KindBeginObject && n%2 == 0 &&
				kind != jsontext.KindString && kind != jsontext.KindEndObject {
				return -1
			}
		}
		if _, err := s.dec.ReadToken(); err != nil {
			return -1
		}
		if s.dec.StackDepth() == 0 {
			return start + int(s.dec.InputOffset())
		}
	}
}
