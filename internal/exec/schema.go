package executor

import (
	"bytes"
	"encoding/json"
	"strings"
	"text/template"
)

// MessageSchema is what differs between the JSON Schemas of two kinds of
// final message: an agent's answer to its task (OutputSchema, read by
// ParseMessage) and a plan (plan.Schema, read by ParseNestedMessage).
// Both have the fields of Message, and both follow the rules of OpenAI
// strict structured output: every object lists all its properties in
// "required" and sets "additionalProperties": false, so optional fields
// are nullable instead of absent. A child carries only the human-owned
// fields a new node needs.
type MessageSchema struct {
	Title    string
	Statuses []string // the statuses allowed, in the order to list them
	// What each property means, for the agent.
	Status, Summary, Assumptions, Questions, Children string
	// Child is what a child is called in its id's description ("node",
	// "task").
	Child string
	// Nested: a child has children of its own, of the same schema, to any
	// depth (ParseNestedMessage); the child's schema is then "$defs/task".
	// Otherwise a child has none (ParseMessage).
	Nested bool
}

// JSON returns the schema's text.
func (s MessageSchema) JSON() string {
	var b strings.Builder
	if err := messageSchema.Execute(&b, s); err != nil {
		panic(err) // the template and its data are the program's own
	}
	return b.String()
}

var messageSchema = parseMessageSchema()

func parseMessageSchema() *template.Template {
	t := template.New("message")
	return template.Must(t.Funcs(template.FuncMap{
		"json": jsonText,
		"list": jsonList,
		// include is the text of a template, to indent: "task" stands in
		// two places, at two depths.
		"include": func(name string, data any) (string, error) {
			var b strings.Builder
			err := t.ExecuteTemplate(&b, name, data)
			return b.String(), err
		},
		"indent": func(prefix, s string) string { return strings.ReplaceAll(s, "\n", "\n"+prefix) },
	}).Parse(messageSchemaText))
}

const messageSchemaText = `{{define "task" -}}
{
  "type": "object",
  "additionalProperties": false,
  "required": ["id", "title", "goal", "acceptance", "depends_on"{{if .Nested}}, "checks", "children"{{end}}],
  "properties": {
    "id": {"type": "string", "description": {{json (print "Unique " .Child " id: letters, digits, '.', '_' or '-', at most 64 characters")}}},
    "title": {"type": "string"},
    "goal": {"type": ["string", "null"]},
    "acceptance": {"type": ["array", "null"], "items": {"type": "string"}},
    "depends_on": {"type": ["array", "null"], "items": {"type": "string"}}
{{- if .Nested}},
    "checks": {
      "type": ["array", "null"],
      "description": "Commands that judge this task alone and must pass once it is done (for example the tests of the part it makes), run in the repository root. null when the project's guards are enough.",
      "items": {
        "type": "object",
        "additionalProperties": false,
        "required": ["name", "run", "report"],
        "properties": {
          "name": {"type": "string"},
          "run": {"type": "string", "description": "A shell command, for example \"go test -run TestSlug ./...\" or \"python3 -m pytest tests/test_slug.py -q\""},
          "report": {"type": ["string", "null"], "description": "The test report it produces: \"go-json\" (stdout of go test -json), \"tap\", \"unittest\" (python3 -m unittest -v), \"junit:PATH\", or null"}
        }
      }
    },
    "children": {"type": ["array", "null"], "items": {"$ref": "#/$defs/task"}}
{{- end}}
  }
}
{{- end -}}

{
  "title": {{json .Title}},
  "type": "object",
  "additionalProperties": false,
  "required": ["status", "summary", "assumptions", "questions", "children"],
  "properties": {
    "status": {
      "type": "string",
      "enum": {{list .Statuses}},
      "description": {{json .Status}}
    },
    "summary": {
      "type": "string",
      "description": {{json .Summary}}
    },
    "assumptions": {
      "type": ["array", "null"],
      "items": {"type": "string"},
      "description": {{json .Assumptions}}
    },
    "questions": {
      "type": ["array", "null"],
      "items": {"type": "string"},
      "description": {{json .Questions}}
    },
    "children": {
      "type": ["array", "null"],
      "description": {{json .Children}},
{{- if .Nested}}
      "items": {"$ref": "#/$defs/task"}
    }
  },
  "$defs": {
    "task": {{include "task" . | indent "    "}}
  }
{{- else}}
      "items": {{include "task" . | indent "      "}}
    }
  }
{{- end}}
}
`

// jsonText is s as a JSON string.
func jsonText(s string) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// jsonList is list as a JSON array of strings on one line.
func jsonList(list []string) (string, error) {
	items := make([]string, len(list))
	for i, s := range list {
		var err error
		if items[i], err = jsonText(s); err != nil {
			return "", err
		}
	}
	return "[" + strings.Join(items, ", ") + "]", nil
}
