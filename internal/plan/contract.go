package plan

import executor "github.com/runner-cli/runner/internal/exec"

// The fixed sections of a planning prompt, and the schema of its answer.
// Like the loop's contracts, every sentence is a rule the agent can act
// on; the two modes (a whole tree, one task's decomposition) differ only
// in what the answer's children are.

const contractHead = `# Planning Contract

You are planning work for ` + "`runner`" + `, a program that drives a coding agent unattended through a task tree: each leaf task is done by a fresh agent session that knows only its task, the tree's outline and the repository. No human is watching; do not wait for one. In this session you write the plan, you do not do the work.

- Do not change any file. Read the documents below (when there are any) and the repository, to see what already exists; the runner writes the tree from your answer, after checking it.
`

const contractWhole = `- Your answer is the whole task tree under the root, replacing the Current Tree's tasks (when there is one): the root itself stays as the Current Tree shows it (with no Current Tree, or when its root is the example ` + "`runner init`" + ` wrote, the runner names the root after the first document: its title and its first paragraph).
`

const contractNode = `- Your answer is the decomposition of the Task to Decompose below: its subtasks, added under it. The rest of the tree stays as the Current Tree shows it.
`

const contractRules = `- Each leaf is one session's work: small enough to finish and check in one go (an hour of a careful developer's work, not a day), with a goal that says what to build and acceptance checks that can be verified by running commands (tests, a build, a linter) or by reading the code.
- Group related leaves under parent tasks; a parent is done when all its children are. Put siblings in the order to do them, and give a task depends_on (ids of tasks that must be done first) when it needs another one's work. A task never depends on its own ancestor or descendant, and dependencies never form a cycle.
- Ids: letters, digits, '.', '_' or '-', starting with a letter or a digit, at most 64 characters, unique in the whole tree; short and meaningful (auth-login, not task-17).
- Plan what the documents ask for, no more. Where they leave a choice open, choose and say so in assumptions; what only a person can decide goes in questions. If they do not say enough to plan at all, answer blocked with your questions.

Below: the Task to Decompose (when planning one task), the documents to plan from, the Current Tree (background: the tasks that exist and their status), and the exact answer format.
`

const outputHead = `# Output Contract

End your reply with exactly one JSON object and nothing after it:

{"status": "decomposed", "summary": "...", "assumptions": ["..."], "questions": ["..."], "children": [{"id": "...", "title": "...", "goal": "...", "acceptance": ["..."], "depends_on": ["..."], "checks": [{"name": "...", "run": "...", "report": null}], "children": [...]}]}

- status (required): "decomposed" with the plan in children; or "blocked", without children, when the documents do not say enough to plan, with your questions.
- summary (required, non-empty): the plan in a few sentences: its parts, their order, what you left out and why.
- assumptions, questions (optional): lists of strings, shown to the person who reviews the plan and kept for the agents that do the work.
`

const outputWhole = `- children: the root's tasks, the top level of the plan, in the order to do them; each holds its own subtasks in its children. Do not repeat the root.
`

const outputNode = `- children: the subtasks of the Task to Decompose, in the order to do them.
`

const outputTail = `- Every task has id, title (short), goal (what to build, precise enough to work from without the documents), acceptance (a list of checks) and, optionally, depends_on (ids of tasks to finish first), checks and children (its own subtasks, each with the same fields).
- checks: commands that judge this task alone and must pass once it is done, run in the repository root: the tests of the part it makes (for example "go test -run TestSlug ./..." or "python3 -m pytest tests/test_slug.py -q"), with report "go-json" (stdout of go test -json), "tap", "unittest" (python3 -m unittest -v) or "junit:PATH" when the command produces one, else null. A check must fail before the task is done: one that already passes proves nothing. A task with children may have checks too: they run with its last open subtask. null when the project's guards are enough.

If the environment variable RUNNER_OUTPUT_FILE is set, you may also write the same JSON object to the file it names.
`

// contract returns the Planning Contract of a mode (node: one task's
// decomposition).
func contract(node bool) string {
	mode := contractWhole
	if node {
		mode = contractNode
	}
	return contractHead + mode + contractRules
}

// outputContract returns the Output Contract of a mode.
func outputContract(node bool) string {
	mode := outputWhole
	if node {
		mode = outputNode
	}
	return outputHead + mode + outputTail
}

// Schema is the JSON Schema of a planning answer, written to the run
// folder as plan.schema.json and given to the agent as {schema_file}
// (`codex exec --output-schema`). It follows the rules of OpenAI strict
// structured output, as executor.OutputSchema does (see
// executor.MessageSchema), and a task's children refer back to the
// task's own definition. executor.ParseNestedMessage reads the answer.
var Schema = executor.MessageSchema{
	Title:       "runner plan",
	Statuses:    []string{executor.StatusDecomposed, executor.StatusBlocked},
	Status:      "decomposed: the plan is in children; blocked: the documents do not say enough to plan",
	Summary:     "The plan in a few sentences; for blocked, why",
	Assumptions: "Choices made where the documents leave them open",
	Questions:   "Questions only a person can answer",
	Children:    "Only with status decomposed: the plan's top-level tasks, in the order to do them",
	Child:       "task",
	Nested:      true,
}.JSON()
