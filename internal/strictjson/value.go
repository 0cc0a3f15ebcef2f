package strictjson

// Kind is the JSON type of a Value.
type Kind int

// The kinds of JSON value.
const (
	Null Kind = iota
	Bool
	Number
	String
	Array
	Object
)

func (k Kind) String() string {
	return [...]string{"null", "boolean", "number", "string", "array", "object"}[k]
}

// Member is one key/value pair of an object, in document order.
type Member struct {
	Key       string
	KeyOffset int
	Value     *Value
}

// Value is a parsed JSON value with its position in the input.
type Value struct {
	Kind    Kind
	Offset  int // byte offset of the value's first character
	Bool    bool
	Str     string // String: the decoded string; Number: the literal
	Array   []*Value
	Members []Member
}

// Get returns the member named key of an object, or nil.
func (v *Value) Get(key string) *Value {
	for i := range v.Members {
		if v.Members[i].Key == key {
			return v.Members[i].Value
		}
	}
	return nil
}

// Parse parses data as exactly one JSON value. maxDepth bounds the nesting
// of arrays and objects (0 means DefaultMaxDepth).
func Parse(data []byte, maxDepth int) (*Value, error) {
	s := NewScanner(data, maxDepth)
	v, err := s.Value()
	if err != nil {
		return nil, err
	}
	if err := s.End(); err != nil {
		return nil, err
	}
	return v, nil
}

// Check applies every check of Parse to data without building a Value.
func Check(data []byte, maxDepth int) error {
	s := NewScanner(data, maxDepth)
	if err := s.Skip(); err != nil {
		return err
	}
	return s.End()
}
