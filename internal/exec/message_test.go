package executor

import (
	"context"
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"testing"
)

func TestParseMessage(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    *Message
		wantErr string
	}{
		{"done", `{"status":"done","summary":"all good"}`,
			&Message{Status: "done", Summary: "all good"}, ""},
		{"nulls from strict schema", `{"status":"retry","summary":"s","assumptions":null,"questions":null,"children":null}`,
			&Message{Status: "retry", Summary: "s"}, ""},
		{"lists, blanks dropped", `{"status":"blocked","summary":"s","assumptions":["a"," "],"questions":["q"],"children":[]}`,
			&Message{Status: "blocked", Summary: "s", Assumptions: []string{"a"}, Questions: []string{"q"}}, ""},
		{"decomposed", `{"status":"decomposed","summary":"split","children":[{"id":"a","title":"A","goal":null,"acceptance":["t"],"depends_on":null},{"id":"b","title":"B","depends_on":["a"]}]}`,
			nil, ""},
		{"surrounding space", " \n{\"status\":\"done\",\"summary\":\"x\"}\n", &Message{Status: "done", Summary: "x"}, ""},
		{"empty", "  ", nil, "empty"},
		{"not an object", `["done"]`, nil, "not a JSON object"},
		{"null", `null`, nil, "not a JSON object"},
		{"syntax error", `{"status":"done",}`, nil, "line 1, column 18"},
		{"trailing text", `{"status":"done","summary":"x"} ok`, nil, "after the JSON value"},
		{"duplicate key", `{"status":"done","status":"retry","summary":"x"}`, nil, `duplicate key "status"`},
		{"unknown field", `{"status":"done","summary":"x","mood":"happy"}`, nil, `unknown field "mood"`},
		{"missing status", `{"summary":"x"}`, nil, `"status" is missing`},
		{"bad status", `{"status":"finished","summary":"x"}`, nil, `status "finished"`},
		{"status wrong type", `{"status":1,"summary":"x"}`, nil, `field "status"`},
		{"missing summary", `{"status":"done"}`, nil, `"summary" is missing`},
		{"blank summary", `{"status":"done","summary":"  "}`, nil, `"summary" is missing or blank`},
		{"children without decomposed", `{"status":"done","summary":"x","children":[{"id":"a","title":"A"}]}`, nil, "only allowed with status decomposed"},
		{"decomposed without children", `{"status":"decomposed","summary":"x"}`, nil, "at least one child"},
		{"decomposed empty children", `{"status":"decomposed","summary":"x","children":[]}`, nil, "at least one child"},
		{"null child", `{"status":"decomposed","summary":"x","children":[null]}`, nil, "children[0] is null"},
		{"child without id", `{"status":"decomposed","summary":"x","children":[{"title":"A"}]}`, nil, "children[0] has no id"},
		{"child without title", `{"status":"decomposed","summary":"x","children":[{"id":"a"}]}`, nil, "children[0] (a) has no title"},
		{"child with runner-owned field", `{"status":"decomposed","summary":"x","children":[{"id":"a","title":"A","status":"done"}]}`, nil, `unknown field "status"`},
		{"nested children", `{"status":"decomposed","summary":"x","children":[{"id":"a","title":"A","children":[]}]}`, nil, `unknown field "children"`},
		{"too deep", `{"status":"done","summary":"x","assumptions":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}`, nil, "nesting deeper"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := ParseMessage([]byte(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseMessage error = %v, want it to mention %q", err, tt.wantErr)
				}
				if m != nil {
					t.Errorf("ParseMessage returned a message with an error")
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseMessage: %v", err)
			}
			if tt.want != nil && !reflect.DeepEqual(m, tt.want) {
				t.Errorf("ParseMessage = %+v, want %+v", m, tt.want)
			}
		})
	}
}

func TestParseMessageChildren(t *testing.T) {
	m, err := ParseMessage([]byte(`{"status":"decomposed","summary":"split","children":[
		{"id":"a","title":"A","goal":"do a","acceptance":["t1"],"depends_on":null},
		{"id":"b","title":"B","goal":null,"acceptance":null,"depends_on":["a"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Children) != 2 {
		t.Fatalf("got %d children, want 2", len(m.Children))
	}
	a, b := m.Children[0], m.Children[1]
	if a.ID != "a" || a.Title != "A" || a.Goal != "do a" || !reflect.DeepEqual(a.Acceptance, []string{"t1"}) || a.DependsOn != nil {
		t.Errorf("child a = %+v", a)
	}
	if b.ID != "b" || b.Goal != "" || b.Acceptance != nil || !reflect.DeepEqual(b.DependsOn, []string{"a"}) {
		t.Errorf("child b = %+v", b)
	}
	if a.Status != "" || a.Attempts != 0 || a.Children != nil {
		t.Errorf("child a has runner-owned fields set: %+v", a)
	}
}

const (
	msgDone  = `{"status":"done","summary":"from the file"}`
	msgRetry = `{"status":"retry","summary":"from stdout"}`
)

func claudeResultLine(result string, isError bool) string {
	b, _ := json.Marshal(map[string]any{"type": "result", "subtype": "success", "is_error": isError, "result": result})
	return string(b)
}

func TestFindMessageOrder(t *testing.T) {
	resultWithMsg := claudeResultLine("Done.\n```json\n"+`{"status":"blocked","summary":"from claude"}`+"\n```\nbye", false)
	tests := []struct {
		name       string
		file       string
		stdout     string
		wantSum    string
		wantSource string
		wantErr    string
	}{
		{"output file wins over everything", msgDone, resultWithMsg + "\n" + msgRetry, "from the file", SourceOutputFile, ""},
		{"output file with text around", "Here:\n" + msgDone + "\nthanks", msgRetry, "from the file", SourceOutputFile, ""},
		{"invalid output file is reported, not skipped", `{"status":"nope","summary":"x"}`, msgRetry, "", SourceOutputFile, `output file: final message: status "nope"`},
		{"broken output file", `{"status": "done", "summary": `, msgRetry, "", SourceOutputFile, "output file: final message: line 1"},
		{"garbage output file", "no json here", msgRetry, "", SourceOutputFile, "output file: holds no JSON object"},
		{"empty output file does not count", "", msgRetry, "from stdout", SourceStdout, ""},
		{"blank output file does not count", " \n\t", msgRetry, "from stdout", SourceStdout, ""},
		{"claude result event before stdout", "", `{"type":"system"}` + "\n" + resultWithMsg + "\n", "from claude", SourceResultEvent, ""},
		{"claude envelope, last object in its text", "",
			claudeResultLine(`first {"status":"retry","summary":"old"} then {"status":"done","summary":"new"}`, false),
			"new", SourceResultEvent, ""},
		{"claude result without JSON", "", claudeResultLine("I could not finish.", false) + "\n" + msgRetry, "", SourceResultEvent, "claude result text holds no JSON object"},
		{"claude result without result text", "", `{"type":"result","subtype":"error_max_turns","is_error":true}`, "", SourceResultEvent, `subtype "error_max_turns"`},
		{"stdout, text around ignored", "", "thinking...\n" + `{"note": 1}` + "\nFinal:\n" + msgRetry + "\nbye {", "from stdout", SourceStdout, ""},
		{"stdout, last top-level object not an inner one", "",
			`{"status":"decomposed","summary":"outer","children":[{"id":"a","title":"A"}]}`, "outer", SourceStdout, ""},
		{"stdout, agent events are no candidates", "", msgRetry + "\n" + `{"type":"turn.completed"}`, "from stdout", SourceStdout, ""},
		{"stdout holds only agent events", "", `{"type":"thread.started"}` + "\n" + `{"type":"turn.failed","error":{"message":"429"}}` + "\n", "", "",
			"no output file was written and stdout holds no JSON object besides the agent's events"},
		{"stdout last object invalid", "", msgRetry + "\n" + `{"type":"final","status":"done","summary":"s"}`, "", SourceStdout, `last JSON object in stdout: final message: unknown field "type"`},
		{"nothing anywhere", "", "just text\n", "", "", "no output file was written and stdout holds no JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, src, err := FindMessage([]byte(tt.file), []byte(tt.stdout))
			if src != tt.wantSource {
				t.Errorf("source = %q, want %q", src, tt.wantSource)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want it to mention %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("FindMessage: %v", err)
			}
			if m.Summary != tt.wantSum {
				t.Errorf("summary = %q, want %q", m.Summary, tt.wantSum)
			}
		})
	}
}

func TestTopLevelObjects(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{`a {"x":1} b {"y":{"z":[1,2,{"w":null}]}} c`, []string{`{"x":1}`, `{"y":{"z":[1,2,{"w":null}]}}`}},
		{`{"broken": } {"ok":true}`, []string{`{"ok":true}`}},
		{`{"s":"a } brace in a string"}`, []string{`{"s":"a } brace in a string"}`}},
		{`{{{{ {"a":"\u00e9\n"} }}}}`, []string{`{"a":"\u00e9\n"}`}},
		{`{"n":-1.5e+3,"t":true,"f":false}`, []string{`{"n":-1.5e+3,"t":true,"f":false}`}},
		{`{"n":01}`, nil},
		{`{"a":"raw` + "\n" + `newline"}`, nil},
		{strings.Repeat(`{"a":`, 200) + "1" + strings.Repeat("}", 200), []string{strings.Repeat(`{"a":`, scanMaxDepth) + "1" + strings.Repeat("}", scanMaxDepth)}},
		{"", nil},
	}
	for _, tt := range tests {
		var got []string
		for _, sp := range topLevelObjects([]byte(tt.in)) {
			got = append(got, tt.in[sp[0]:sp[1]])
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("topLevelObjects(%.60q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestOutputSchemaIsStrict(t *testing.T) {
	objects := strictObjects(t, OutputSchema)
	// The schema and the parser accept the same fields.
	if got, want := objects["message"], fields(wireMessage{}); !reflect.DeepEqual(got, want) {
		t.Errorf("schema message fields %v, parser fields %v", got, want)
	}
	if got, want := objects["message.children[]"], fields(wireChild{}); !reflect.DeepEqual(got, want) {
		t.Errorf("schema child fields %v, parser fields %v", got, want)
	}
	// A message shaped as strict output (every field present, nulls) parses.
	if _, err := ParseMessage([]byte(`{"status":"done","summary":"s","assumptions":null,"questions":[],"children":null}`)); err != nil {
		t.Errorf("a strict-schema message does not parse: %v", err)
	}
}

// TestNestedMessageSchema checks the schema of a message whose children
// nest (a plan's): strict, with the fields ParseNestedMessage accepts, and
// the texts given where they belong, JSON-escaped.
func TestNestedMessageSchema(t *testing.T) {
	ms := MessageSchema{
		Title: `a "title"`, Statuses: []string{StatusDecomposed, StatusBlocked},
		Status: "s <b> & 'c'", Summary: "su\nmmary", Assumptions: "as", Questions: "qu", Children: "ch",
		Child: "task", Nested: true,
	}
	text := ms.JSON()
	objects := strictObjects(t, text)
	if got, want := objects["message"], fields(wireMessageOf[wireNode]{}); !reflect.DeepEqual(got, want) {
		t.Errorf("schema message fields %v, parser fields %v", got, want)
	}
	if got, want := objects["$defs.task"], fields(wireNode{}); !reflect.DeepEqual(got, want) {
		t.Errorf("schema task fields %v, parser fields %v", got, want)
	}
	var s struct {
		Title      string `json:"title"`
		Properties map[string]struct {
			Enum        []string       `json:"enum"`
			Description string         `json:"description"`
			Items       map[string]any `json:"items"`
		} `json:"properties"`
		Defs map[string]struct {
			Properties map[string]struct {
				Description string         `json:"description"`
				Items       map[string]any `json:"items"`
			} `json:"properties"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal([]byte(text), &s); err != nil {
		t.Fatal(err)
	}
	p := s.Properties
	got := []string{s.Title, p["status"].Description, p["summary"].Description, p["assumptions"].Description,
		p["questions"].Description, p["children"].Description}
	if want := []string{ms.Title, ms.Status, ms.Summary, ms.Assumptions, ms.Questions, ms.Children}; !reflect.DeepEqual(got, want) {
		t.Errorf("texts %q, want %q", got, want)
	}
	if !reflect.DeepEqual(p["status"].Enum, ms.Statuses) {
		t.Errorf("status enum %q, want %q", p["status"].Enum, ms.Statuses)
	}
	ref := map[string]any{"$ref": "#/$defs/task"}
	task := s.Defs["task"].Properties
	if !reflect.DeepEqual(p["children"].Items, ref) || !reflect.DeepEqual(task["children"].Items, ref) {
		t.Errorf("children items %v and %v, want both %v", p["children"].Items, task["children"].Items, ref)
	}
	if d := task["id"].Description; !strings.HasPrefix(d, "Unique task id: ") {
		t.Errorf("task id description %q, want it to name a task", d)
	}
}

// strictObjects checks that every object of a JSON Schema follows OpenAI
// strict structured output, listing every property as required and
// forbidding additional ones, and returns the properties of each, by
// path ("message", "message.children[]", "$defs.task").
func strictObjects(t *testing.T, text string) map[string][]string {
	t.Helper()
	var schema map[string]any
	if err := json.Unmarshal([]byte(text), &schema); err != nil {
		t.Fatalf("schema is not JSON: %v", err)
	}
	var check func(path string, s map[string]any)
	objects := map[string][]string{}
	check = func(path string, s map[string]any) {
		props, ok := s["properties"].(map[string]any)
		if !ok {
			if items, ok := s["items"].(map[string]any); ok {
				check(path+"[]", items)
			}
			return
		}
		if s["additionalProperties"] != false {
			t.Errorf("%s: additionalProperties is not false", path)
		}
		var keys, required []string
		for k, v := range props {
			keys = append(keys, k)
			check(path+"."+k, v.(map[string]any))
		}
		for _, r := range s["required"].([]any) {
			required = append(required, r.(string))
		}
		sort.Strings(keys)
		sort.Strings(required)
		if !reflect.DeepEqual(keys, required) {
			t.Errorf("%s: required %v, want every property %v", path, required, keys)
		}
		objects[path] = keys
	}
	check("message", schema)
	defs, _ := schema["$defs"].(map[string]any)
	for name, d := range defs {
		check("$defs."+name, d.(map[string]any))
	}
	return objects
}

// fields are the JSON names of a struct's fields, sorted.
func fields(v any) []string {
	var out []string
	rt := reflect.TypeOf(v)
	for i := range rt.NumField() {
		out = append(out, strings.Split(rt.Field(i).Tag.Get("json"), ",")[0])
	}
	sort.Strings(out)
	return out
}

func FuzzParseMessage(f *testing.F) {
	seeds := []string{
		`{"status":"done","summary":"x"}`,
		`{"status":"decomposed","summary":"x","children":[{"id":"a","title":"A","goal":null,"acceptance":["t"],"depends_on":["b"]}]}`,
		`{"status":"retry","summary":"s","assumptions":null,"questions":["q"],"children":null}`,
		`{"status":"decomposed","summary":"x","children":[null]}`,
		`{"status":"done","status":"done"}`,
		`{"status":"done","summary":"\ud800"}`,
		`[]`, `null`, `{`, `{"a":` + strings.Repeat("[", 100),
		"prose {\"status\":\"blocked\",\"summary\":\"b\"} more",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseMessage(data)
		if (m == nil) == (err == nil) {
			t.Fatalf("ParseMessage returned message %v and error %v", m, err)
		}
		if m != nil {
			switch m.Status {
			case StatusDone, StatusRetry, StatusBlocked, StatusDecomposed:
			default:
				t.Fatalf("accepted status %q", m.Status)
			}
			if strings.TrimSpace(m.Summary) == "" || (m.Status == StatusDecomposed) != (len(m.Children) > 0) {
				t.Fatalf("accepted an invalid message %+v", m)
			}
		}
		// The lookup over arbitrary stdout never panics either.
		FindMessage(nil, data)
		FindMessage(data, data)
	})
}

func TestParseNestedMessage(t *testing.T) {
	m, err := ParseNestedMessage([]byte(`{"status":"decomposed","summary":"plan","assumptions":null,"questions":["q"],"children":[
		{"id":"app","title":"App","goal":null,"acceptance":null,"depends_on":null,"children":[
			{"id":"db","title":"DB","goal":"tables","acceptance":["migrates"],"depends_on":null,"children":null},
			{"id":"api","title":"API","depends_on":["db"],"children":[{"id":"auth","title":"Auth"}]}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Children) != 1 || m.Children[0].ID != "app" || len(m.Children[0].Children) != 2 {
		t.Fatalf("children = %+v", m.Children)
	}
	api := m.Children[0].Children[1]
	if api.ID != "api" || len(api.DependsOn) != 1 || len(api.Children) != 1 || api.Children[0].ID != "auth" {
		t.Fatalf("api = %+v", api)
	}
	if db := m.Children[0].Children[0]; db.Children != nil || db.Goal != "tables" || len(db.Acceptance) != 1 {
		t.Fatalf("db = %+v", db)
	}

	bad := []struct{ name, in, want string }{
		{"null deep down", `{"status":"decomposed","summary":"x","children":[{"id":"a","title":"A","children":[{"id":"b","title":"B"},null]},null]}`,
			"children[0].children[1] is null\nchildren[1] is null"},
		{"runner-owned field", `{"status":"decomposed","summary":"x","children":[{"id":"a","title":"A","children":[{"id":"b","title":"B","attempts":2}]}]}`,
			`unknown field "attempts"`},
		{"children without decomposed", `{"status":"done","summary":"x","children":[{"id":"a","title":"A"}]}`, "only allowed with status decomposed"},
		{"decomposed without children", `{"status":"decomposed","summary":"x","children":[]}`, "at least one child"},
		{"too deep", `{"status":"decomposed","summary":"x","children":` + strings.Repeat(`[{"id":"a","title":"A","children":`, 130) + `null` + strings.Repeat(`}]`, 130) + `}`, "deep"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			m, err := ParseNestedMessage([]byte(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("ParseNestedMessage = %+v, %v; want an error containing %q", m, err, tt.want)
			}
		})
	}

	// Ids and titles are left to the tree validation, which names every
	// problem at once; ParseMessage still wants them on its flat children.
	m, err = ParseNestedMessage([]byte(`{"status":"decomposed","summary":"x","children":[{"id":"","title":""}]}`))
	if err != nil || len(m.Children) != 1 {
		t.Fatalf("a child without id or title: %+v, %v; want it parsed for the tree to judge", m, err)
	}
}

func TestRunNestedChildren(t *testing.T) {
	script := `{"default": {"message": {"status": "decomposed", "summary": "plan",
		"children": [{"id": "a", "title": "A", "children": [{"id": "b", "title": "B"}]}]}, "deliver": "stdout"}}`
	for _, nested := range []bool{false, true} {
		o, r := setup(t, script)
		o.NestedChildren = nested
		res := runBounded(t, context.Background(), o, r)
		if nested {
			if res.Message == nil || len(res.Message.Children) != 1 || len(res.Message.Children[0].Children) != 1 {
				t.Errorf("NestedChildren: message %+v, error %q; want a with child b", res.Message, res.MessageError)
			}
		} else if res.Message != nil || !strings.Contains(res.MessageError, `unknown field "children"`) {
			t.Errorf("flat: message %+v, error %q; want nested children refused", res.Message, res.MessageError)
		}
	}
}
