package executor

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

type splitLine struct {
	text  string
	start int64
}

// splitChunked feeds data to a lineSplitter in chunks of the given sizes
// (cycled) and returns the lines and the count of skipped ones.
func splitChunked(data []byte, max int, sizes []int) ([]splitLine, int64) {
	var got []splitLine
	s := lineSplitter{max: max, fn: func(line []byte, start int64) {
		got = append(got, splitLine{string(line), start})
	}}
	for i, k := 0, 0; i < len(data); k++ {
		n := 1
		if len(sizes) > 0 {
			n = max1(sizes[k%len(sizes)])
		}
		n = min(n, len(data)-i)
		s.Write(data[i : i+n])
		i += n
	}
	s.Close()
	return got, s.skip
}

func max1(n int) int {
	if n < 1 {
		return 1
	}
	return n
}

// splitReference is what lineSplitter must give: the lines of data, each
// with its offset, those longer than max skipped.
func splitReference(data []byte, max int) ([]splitLine, int64) {
	var want []splitLine
	var skipped int64
	off := int64(0)
	parts := bytes.Split(data, []byte{'\n'})
	for i, p := range parts {
		if i == len(parts)-1 && len(p) == 0 {
			break // data ended with a newline (or was empty)
		}
		if len(p) > max {
			skipped++
		} else {
			want = append(want, splitLine{string(p), off})
		}
		off += int64(len(p)) + 1
	}
	return want, skipped
}

func TestLineSplitter(t *testing.T) {
	data := []byte("one\n\ntwo is longer than eight\nthree\n" + strings.Repeat("x", 20) + "\nlast")
	want, wantSkip := splitReference(data, 8)
	if len(want) != 4 || wantSkip != 2 {
		t.Fatalf("reference: %v, %d skipped", want, wantSkip)
	}
	for _, sizes := range [][]int{{1}, {3}, {7, 1, 30}, {len(data)}} {
		got, skip := splitChunked(data, 8, sizes)
		if !reflect.DeepEqual(got, want) || skip != wantSkip {
			t.Errorf("chunks %v: lines %v, %d skipped; want %v, %d", sizes, got, skip, want, wantSkip)
		}
	}
}

func FuzzLineSplitter(f *testing.F) {
	f.Add([]byte("a\nbb\n\nccc"), 2, 1, 3)
	f.Add([]byte(`{"type":"turn.completed"}`+"\n"+strings.Repeat("z", 100)+"\n"), 16, 5, 64)
	f.Add([]byte("\n\n\n"), 0, 1, 1)
	f.Fuzz(func(t *testing.T, data []byte, max, a, b int) {
		max = max % 64
		if max < 0 {
			max = -max
		}
		want, wantSkip := splitReference(data, max)
		got, skip := splitChunked(data, max, []int{a % 97, b % 13})
		if !reflect.DeepEqual(got, want) || skip != wantSkip {
			t.Fatalf("max %d chunks %d,%d: lines %v, %d skipped; want %v, %d", max, a, b, got, skip, want, wantSkip)
		}
	})
}

func TestLineRouter(t *testing.T) {
	in := "{\"a\":1}\ntext\n{\"b\":2}\n{\"c\":3}\n  {indented}\nno newline at the end"
	var want struct{ json, other string }
	for _, line := range strings.SplitAfter(in, "\n") {
		if strings.HasPrefix(line, "{") {
			want.json += line
		} else {
			want.other += line
		}
	}
	for _, chunk := range []int{1, 2, 5, 9, len(in)} {
		var js, other bytes.Buffer
		r := &lineRouter{json: &js, other: &other}
		for i := 0; i < len(in); i += chunk {
			r.Write([]byte(in[i:min(i+chunk, len(in))]))
		}
		if js.String() != want.json || other.String() != want.other {
			t.Errorf("chunk %d: json %q other %q; want %q and %q", chunk, js.String(), other.String(), want.json, want.other)
		}
	}
}

// TestEventStreamReadsTheWholeStream writes more than the in-memory tail
// holds and checks that what came early still counts: a declined command,
// a Codex usage report followed by megabytes of other events, and a
// Claude result event far from the end.
func TestEventStreamReadsTheWholeStream(t *testing.T) {
	e := newEventStream()
	write := func(s string) { e.Write([]byte(s)) }
	write(`{"type":"thread.started","thread_id":"t"}` + "\n")
	write(`{"type":"item.completed","item":{"id":"i","type":"command_execution","command":"git push","status":"declined"}}` + "\n")
	write(`{"type":"turn.completed","usage":{"input_tokens":7,"cached_input_tokens":2,"output_tokens":3}}` + "\n")
	result := `{"type":"result","subtype":"success","is_error":false,"result":"done","total_cost_usd":0.5}`
	write("text before " + result + "\n")
	end := e.split.off - 1
	filler := fmt.Sprintf(`{"type":"item.updated","item":{"id":"x","type":"reasoning","text":"%s"}}`+"\n", strings.Repeat("r", 1000))
	for range 3 * stdoutTailSize / len(filler) {
		write(filler)
	}
	write(`{"type":"error","message":"` + strings.Repeat("e", StreamLineMax) + `"}` + "\n") // too long: skipped
	write(`{"type":"item.started"}`)                                                        // no newline: read at Close
	e.Close()
	cx := e.codex.result()
	if cx.Usage == nil || cx.Usage.InputTokens != 7 || len(cx.Declined) != 1 || cx.Failure != "" {
		t.Errorf("codex: usage %+v, declined %q, failure %q", cx.Usage, cx.Declined, cx.Failure)
	}
	if e.claude == nil || e.claude.CostUSD == nil || *e.claude.CostUSD != 0.5 || e.claudeEnd != end {
		t.Errorf("claude result %+v ending at %d, want cost 0.5 ending at %d", e.claude, e.claudeEnd, end)
	}
	if e.split.skip != 1 || cx.Events != 3+3*stdoutTailSize/len(filler)+1 {
		t.Errorf("skipped %d lines, read %d events", e.split.skip, cx.Events)
	}
}

// TestClaudeResultOfPicksTheLater checks the choice between the result
// event the stream read and one in the tail: a pretty-printed envelope
// (several lines) after a one-line result event wins.
func TestClaudeResultOfPicksTheLater(t *testing.T) {
	oneLine := `{"type":"result","subtype":"success","is_error":false,"result":"{\"status\":\"retry\",\"summary\":\"first\"}"}` + "\n"
	pretty := "{\n  \"type\": \"result\",\n  \"subtype\": \"success\",\n  \"is_error\": false,\n  \"result\": \"{\\\"status\\\":\\\"done\\\",\\\"summary\\\":\\\"second\\\"}\"\n}\n"
	for _, tt := range []struct {
		name, stdout, want string
	}{
		{"pretty after one line", oneLine + pretty, "second"},
		{"one line after pretty", pretty + oneLine, "first"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEventStream()
			e.Write([]byte(tt.stdout))
			e.Close()
			f := lookupMessage(nil, stdoutView{tail: []byte(tt.stdout), stream: e}, parseTaskMessage)
			if m := f.message(); m == nil || m.Summary != tt.want || f.source != SourceResultEvent {
				t.Errorf("message %+v from %s (%v), want %q", f.message(), f.source, f.err, tt.want)
			}
		})
	}
}

// FuzzEventStream checks that what the event stream reads does not depend
// on how stdout arrives in pieces, and that it agrees with the lookup over
// the whole stdout kept in memory.
func FuzzEventStream(f *testing.F) {
	f.Add([]byte(`{"type":"turn.completed","usage":{"input_tokens":1,"output_tokens":2}}`+"\n"+`{"type":"error","message":"x"}`), 3)
	f.Add([]byte(`{"type":"result","subtype":"success","is_error":true,"api_error_status":429,"result":"{\"status\":\"done\",\"summary\":\"s\"}"}`), 1)
	f.Add([]byte("text {\"type\":\"result\",\"result\":\"r\"}\n{\"type\":\"item.completed\",\"item\":{\"type\":\"command_execution\",\"command\":\"rm\",\"status\":\"declined\"}}\n"), 7)
	f.Fuzz(func(t *testing.T, data []byte, chunk int) {
		chunk = max1(chunk % 50)
		whole, pieces := newEventStream(), newEventStream()
		whole.Write(data)
		whole.Close()
		for i := 0; i < len(data); i += chunk {
			pieces.Write(data[i:min(i+chunk, len(data))])
		}
		pieces.Close()
		if a, b := whole.codex.result(), pieces.codex.result(); !reflect.DeepEqual(a, b) {
			t.Fatalf("codex events differ: whole %+v, in pieces %+v", a, b)
		}
		if !reflect.DeepEqual(whole.claude, pieces.claude) || whole.claudeEnd != pieces.claudeEnd {
			t.Fatalf("claude result differs: whole %+v at %d, in pieces %+v at %d", whole.claude, whole.claudeEnd, pieces.claude, pieces.claudeEnd)
		}
		// A result event the tail (here all of stdout) holds is never lost
		// by adding what the stream read.
		f1 := lookupMessage(nil, stdoutView{tail: data, stream: whole}, parseTaskMessage)
		f2 := findMessage(nil, data)
		if f2.source == SourceResultEvent && f1.source != SourceResultEvent {
			t.Fatalf("stream lookup %s %v, tail lookup %s %v", f1.source, f1.err, f2.source, f2.err)
		}
	})
}
