package cli

import (
	"io"

	"github.com/spf13/cobra"
)

// bashFallback stands in, in a bash without the bash-completion package,
// for the two of its functions that cobra's completion script calls
// (_get_comp_words_by_ref and _filedir): the words as bash split them,
// and file names by compgen. With the package loaded, its own are used.
const bashFallback = `# runner's completion works in a bare bash too: where the bash-completion
# package is not loaded, these stand in for the two of its functions the
# script below calls.
if ! declare -F _get_comp_words_by_ref >/dev/null 2>&1; then
_get_comp_words_by_ref()
{
    while [[ $# -gt 0 ]]; do
        case $1 in
            -n) shift 2 ;;
            cur) cur=${COMP_WORDS[COMP_CWORD]}; shift ;;
            prev) prev=${COMP_WORDS[COMP_CWORD-1]}; shift ;;
            words) words=("${COMP_WORDS[@]}"); shift ;;
            cword) cword=$COMP_CWORD; shift ;;
            *) shift ;;
        esac
    done
}
fi
if ! declare -F _filedir >/dev/null 2>&1; then
_filedir()
{
    local IFS=$'\n'
    if [[ ${1-} == -d ]]; then
        COMPREPLY+=($(compgen -d -- "$cur"))
    else
        COMPREPLY+=($(compgen -f -- "$cur"))
    fi
}
fi

`

// withBashFallback makes `runner completion bash` print the fallback
// before cobra's script, and says so in its help.
func withBashFallback(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	var completion *cobra.Command
	for _, c := range root.Commands() {
		if c.Name() == "completion" {
			completion = c
		}
	}
	if completion == nil {
		return
	}
	for _, c := range completion.Commands() {
		if c.Name() != "bash" {
			continue
		}
		c.Long = `Generate the autocompletion script for the bash shell. It completes task ids
with their titles, iteration numbers and presets.

It works in any bash 4 or later: it uses the 'bash-completion' package when it
is loaded, and functions of its own in its place when it is not.

To load completions in your current shell session:

	source <(runner completion bash)

To load completions for every new session, add that line to ~/.bashrc, or
execute once:

	runner completion bash > /etc/bash_completion.d/runner   # Linux, with bash-completion
	runner completion bash > $(brew --prefix)/etc/bash_completion.d/runner   # macOS

You will need to start a new shell for this setup to take effect.
`
		c.RunE = func(cmd *cobra.Command, args []string) error {
			noDesc, _ := cmd.Flags().GetBool("no-descriptions")
			out := cmd.OutOrStdout()
			if _, err := io.WriteString(out, bashFallback); err != nil {
				return err
			}
			return cmd.Root().GenBashCompletionV2(out, !noDesc)
		}
	}
}
