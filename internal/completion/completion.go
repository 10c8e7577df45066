// Package completion writes shell completion scripts (bash, zsh, fish)
// for agentjq from a command tree built from the kong model. kongplete was
// weighed and measured against it (BENCHMARKS.md): it would lose zsh's and
// fish's descriptions and filter's own flags for 418 KB.
package completion

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/alecthomas/kong"
)

// Value kinds: what the word after a flag (or a positional) completes to.
const (
	KindNone = ""     // a switch: no value
	KindText = "text" // free text: nothing to offer
	KindEnum = "enum" // one of Values
	KindFile = "file"
	KindDir  = "dir"
)

// Flag is one flag of a command.
type Flag struct {
	Names  []string // with dashes: -p, --prompt
	Help   string
	NArgs  int // words the flag consumes after it (0 for a switch)
	Kind   string
	Values []string
}

// Command is one node of the command tree.
type Command struct {
	Name     string
	Path     string // "" for the root, "approve test"
	Help     string
	Commands []*Command
	Flags    []Flag
	// Args are the values a positional argument takes; ArgKind says what
	// else a positional completes to (files, by default).
	Args    []string
	ArgKind string
}

// Extra adds what the kong model cannot say: flags of commands that parse
// their own (filter), and values of positional arguments (man's pages).
type Extra struct {
	Flags map[string][]Flag
	Args  map[string][]string
}

// FromKong builds the tree from a kong model.
func FromKong(app *kong.Application, extra Extra) *Command {
	return fromNode(app.Node, "", extra)
}

func fromNode(n *kong.Node, path string, extra Extra) *Command {
	c := &Command{Name: n.Name, Path: path, Help: n.Help, ArgKind: KindFile}
	c.Flags = append(c.Flags, Flag{Names: []string{"-h", "--help"}, Help: "Show help."})
	c.Flags = append(c.Flags, flags(n)...)
	if n.DefaultCmd != nil {
		// `agentjq approve --policy x` runs the default subcommand: its flags
		// belong to the parent too.
		c.Flags = append(c.Flags, flags(n.DefaultCmd)...)
	}
	c.Flags = append(c.Flags, extra.Flags[path]...)
	for _, p := range n.Positional {
		if p.Enum != "" {
			c.Args = append(c.Args, p.EnumSlice()...)
			c.ArgKind = KindNone
		}
	}
	if vals, ok := extra.Args[path]; ok {
		c.Args = append(c.Args, vals...)
		c.ArgKind = KindNone
	}
	if len(n.Positional) == 0 && len(n.Children) > 0 || n.Type == kong.ApplicationNode {
		c.ArgKind = KindNone
	}
	for _, ch := range n.Children {
		if ch.Hidden || ch.Type != kong.CommandNode {
			continue
		}
		p := ch.Name
		if path != "" {
			p = path + " " + ch.Name
		}
		c.Commands = append(c.Commands, fromNode(ch, p, extra))
	}
	return c
}

func flags(n *kong.Node) []Flag {
	var out []Flag
	for _, f := range n.Flags {
		if f.Hidden || f.Name == "help" {
			continue
		}
		fl := Flag{Help: f.Help}
		if f.Short != 0 {
			fl.Names = append(fl.Names, "-"+string(f.Short))
		}
		fl.Names = append(fl.Names, "--"+f.Name)
		if !f.IsBool() && !f.IsCounter() {
			fl.NArgs = 1
			fl.Kind = valueKind(f)
			if fl.Kind == KindEnum {
				fl.Values = f.EnumSlice()
			}
		}
		out = append(out, fl)
	}
	return out
}

func valueKind(f *kong.Flag) string {
	switch {
	case f.Enum != "":
		return KindEnum
	case f.Tag != nil && (f.Tag.Type == "path" || f.Tag.Type == "existingfile"):
		return KindFile
	case f.Tag != nil && f.Tag.Type == "existingdir":
		return KindDir
	}
	return PlaceholderKind(f.PlaceHolder)
}

// PlaceholderKind guesses a value's kind from its placeholder: FILE and
// PATH complete files, DIR directories.
func PlaceholderKind(ph string) string {
	switch ph {
	case "FILE", "PATH":
		return KindFile
	case "DIR":
		return KindDir
	}
	return KindText
}

// walk visits c and its descendants, parents first.
func (c *Command) walk(fn func(*Command)) {
	fn(c)
	for _, ch := range c.Commands {
		ch.walk(fn)
	}
}

// Write writes the script for shell (bash, zsh or fish).
func Write(w io.Writer, shell string, root *Command) error {
	var s string
	switch shell {
	case "bash":
		s = bashScript(root)
	case "zsh":
		s = zshScript(root)
	case "fish":
		s = fishScript(root)
	default:
		return fmt.Errorf("no completion for shell %q (bash, zsh, fish)", shell)
	}
	_, err := io.WriteString(w, s)
	return err
}

// helpers writes the shell functions bash and zsh share: POSIX case
// statements that answer questions about the tree.
//
//	_agentjq_sub CMD WORD     sets _agentjq_next to the subcommand's path, or ""
//	_agentjq_nargs CMD FLAG   sets _agentjq_n to the words FLAG consumes
//	_agentjq_value CMD FLAG   sets _agentjq_kind and _agentjq_vals for FLAG's value
//	_agentjq_words CMD        sets _agentjq_cmds, _agentjq_flags, _agentjq_args
func helpers(root *Command) string {
	var b strings.Builder
	b.WriteString("_agentjq_sub() {\n    case \"$1|$2\" in\n")
	root.walk(func(c *Command) {
		for _, ch := range c.Commands {
			fmt.Fprintf(&b, "        %s) _agentjq_next=%s ;;\n", shq(c.Path+"|"+ch.Name), shq(ch.Path))
		}
	})
	b.WriteString("        *) _agentjq_next= ;;\n    esac\n}\n\n")

	byN := map[int][]string{}
	kinds := map[string][]string{} // "kind\x00values" -> case labels
	var kindKeys []string
	root.walk(func(c *Command) {
		for _, f := range c.Flags {
			for _, name := range f.Names {
				label := shq(c.Path + "|" + name)
				if f.NArgs > 0 {
					byN[f.NArgs] = append(byN[f.NArgs], label)
					key := f.Kind + "\x00" + strings.Join(f.Values, " ")
					if _, ok := kinds[key]; !ok {
						kindKeys = append(kindKeys, key)
					}
					kinds[key] = append(kinds[key], label)
				}
			}
		}
	})
	b.WriteString("_agentjq_nargs() {\n    case \"$1|$2\" in\n")
	var ns []int
	for n := range byN {
		ns = append(ns, n)
	}
	sort.Ints(ns)
	for _, n := range ns {
		fmt.Fprintf(&b, "        %s) _agentjq_n=%d ;;\n", strings.Join(byN[n], "|"), n)
	}
	b.WriteString("        *) _agentjq_n=0 ;;\n    esac\n}\n\n")

	b.WriteString("_agentjq_value() {\n    _agentjq_vals=\n    case \"$1|$2\" in\n")
	for _, key := range kindKeys {
		kind, vals, _ := strings.Cut(key, "\x00")
		fmt.Fprintf(&b, "        %s) _agentjq_kind=%s", strings.Join(kinds[key], "|"), kind)
		if vals != "" {
			fmt.Fprintf(&b, " _agentjq_vals=%s", shq(vals))
		}
		b.WriteString(" ;;\n")
	}
	b.WriteString("        *) _agentjq_kind= ;;\n    esac\n}\n\n")

	b.WriteString("_agentjq_words() {\n    case \"$1\" in\n")
	root.walk(func(c *Command) {
		var cmds, fl []string
		for _, ch := range c.Commands {
			cmds = append(cmds, ch.Name)
		}
		for _, f := range c.Flags {
			fl = append(fl, f.Names...)
		}
		fmt.Fprintf(&b, "        %s) _agentjq_cmds=%s _agentjq_flags=%s _agentjq_args=%s _agentjq_argkind=%s ;;\n",
			shq(c.Path), shq(strings.Join(cmds, " ")), shq(strings.Join(fl, " ")), shq(strings.Join(c.Args, " ")), shq(c.ArgKind))
	})
	b.WriteString("        *) _agentjq_cmds= _agentjq_flags= _agentjq_args= _agentjq_argkind=file ;;\n    esac\n}\n\n")

	// The command path of the words before the cursor: flags and their
	// values skipped; after "--" everything is the agent's.
	b.WriteString(`# _agentjq_path WORD... sets _agentjq_cmd to the command path the words
# name, and _agentjq_rest=1 when a "--" ends agentjq's own arguments.
_agentjq_path() {
    local w skip=0
    _agentjq_cmd= _agentjq_rest=
    for w in "$@"; do
        if [[ $skip -gt 0 ]]; then skip=$((skip - 1)); continue; fi
        if [[ $w == -- ]]; then _agentjq_rest=1; return; fi
        if [[ $w == -* ]]; then
            if [[ $w != *=* ]]; then _agentjq_nargs "$_agentjq_cmd" "$w"; skip=$_agentjq_n; fi
            continue
        fi
        [[ $w == = ]] && continue
        _agentjq_sub "$_agentjq_cmd" "$w"
        [[ -n $_agentjq_next ]] && _agentjq_cmd=$_agentjq_next
    done
}

`)
	return b.String()
}

// shq quotes s for sh.
func shq(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func bashScript(root *Command) string {
	var b strings.Builder
	b.WriteString("# bash completion for agentjq; generated by `agentjq completion bash`.\n")
	b.WriteString("# Install: agentjq completion bash > /usr/share/bash-completion/completions/agentjq\n\n")
	b.WriteString(helpers(root))
	b.WriteString(`_agentjq() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev= flag=
    [[ $COMP_CWORD -gt 0 ]] && prev=${COMP_WORDS[COMP_CWORD-1]}
    COMPREPLY=()
    _agentjq_path "${COMP_WORDS[@]:1:COMP_CWORD-1}"
    [[ -n $_agentjq_rest ]] && return 0
    # bash splits --flag=value at "=" (COMP_WORDBREAKS).
    if [[ $cur == = ]]; then
        flag=$prev cur=
    elif [[ $prev == = && $COMP_CWORD -gt 1 ]]; then
        flag=${COMP_WORDS[COMP_CWORD-2]}
    elif [[ $cur == --*=* ]]; then
        flag=${cur%%=*} cur=${cur#*=}
    elif [[ $prev == -* ]]; then
        flag=$prev
    fi
    if [[ -n $flag ]]; then
        _agentjq_value "$_agentjq_cmd" "$flag"
        case $_agentjq_kind in
            enum) COMPREPLY=($(compgen -W "$_agentjq_vals" -- "$cur")); return 0 ;;
            file) COMPREPLY=($(compgen -f -- "$cur")); return 0 ;;
            dir) COMPREPLY=($(compgen -d -- "$cur")); return 0 ;;
            text) return 0 ;;
        esac
    fi
    _agentjq_words "$_agentjq_cmd"
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$_agentjq_flags" -- "$cur"))
        return 0
    fi
    COMPREPLY=($(compgen -W "$_agentjq_cmds $_agentjq_args" -- "$cur"))
    if [[ ${#COMPREPLY[@]} -eq 0 && $_agentjq_argkind == file ]]; then
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
    return 0
}
complete -o filenames -o bashdefault -F _agentjq agentjq
`)
	return b.String()
}

func zshScript(root *Command) string {
	var b strings.Builder
	b.WriteString("#compdef agentjq\n# zsh completion for agentjq; generated by `agentjq completion zsh`.\n")
	b.WriteString("# Install: agentjq completion zsh > \"${fpath[1]}/_agentjq\"\n\n")
	b.WriteString(helpers(root))
	b.WriteString(`_agentjq() {
    setopt localoptions noshwordsplit
    local cur=${words[CURRENT]} prev=${words[CURRENT-1]} flag=
    _agentjq_path "${(@)words[2,CURRENT-1]}"
    if [[ -n $_agentjq_rest ]]; then _files; return; fi
    if [[ $cur == --*=* ]]; then
        flag=${cur%%=*}
        compset -P '*='
    elif [[ $prev == -* ]]; then
        flag=$prev
    fi
    if [[ -n $flag ]]; then
        _agentjq_value "$_agentjq_cmd" "$flag"
        case $_agentjq_kind in
            enum) compadd -- ${=_agentjq_vals}; return ;;
            file) _files; return ;;
            dir) _files -/; return ;;
            text) return ;;
        esac
    fi
    _agentjq_words "$_agentjq_cmd"
    if [[ $cur == -* ]]; then
        compadd -- ${=_agentjq_flags}
        return
    fi
    if [[ -n $_agentjq_cmds$_agentjq_args ]]; then
        compadd -- ${=_agentjq_cmds} ${=_agentjq_args}
    elif [[ $_agentjq_argkind == file ]]; then
        _files
    fi
}

if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
    _agentjq "$@"
else
    compdef _agentjq agentjq
fi
`)
	return b.String()
}

// fishq quotes s for fish.
func fishq(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// firstSentence shortens a help text for a completion menu.
func firstSentence(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if i := strings.Index(s, ". "); i > 0 {
		s = s[:i]
	}
	s = strings.TrimSuffix(s, ".")
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}

func fishScript(root *Command) string {
	var b strings.Builder
	b.WriteString("# fish completion for agentjq; generated by `agentjq completion fish`.\n")
	b.WriteString("# Install: agentjq completion fish > ~/.config/fish/completions/agentjq.fish\n\n")
	b.WriteString("complete -c agentjq -f\n")
	// cond is the fish condition under which c is the command being typed.
	cond := func(c *Command) string {
		if c.Path == "" {
			return "__fish_use_subcommand"
		}
		parts := strings.Split(c.Path, " ")
		conds := []string{"__fish_seen_subcommand_from " + parts[0]}
		for _, p := range parts[1:] {
			conds = append(conds, "__fish_seen_subcommand_from "+p)
		}
		if len(c.Commands) > 0 {
			var names []string
			for _, ch := range c.Commands {
				names = append(names, ch.Name)
			}
			conds = append(conds, "not __fish_seen_subcommand_from "+strings.Join(names, " "))
		}
		return strings.Join(conds, "; and ")
	}
	root.walk(func(c *Command) {
		cnd := fishq(cond(c))
		for _, ch := range c.Commands {
			fmt.Fprintf(&b, "complete -c agentjq -n %s -a %s -d %s\n", cnd, fishq(ch.Name), fishq(firstSentence(ch.Help)))
		}
		if len(c.Args) > 0 {
			fmt.Fprintf(&b, "complete -c agentjq -n %s -a %s\n", cnd, fishq(strings.Join(c.Args, " ")))
		}
		if c.ArgKind == KindFile {
			fmt.Fprintf(&b, "complete -c agentjq -n %s -F\n", cnd)
		}
		for _, f := range c.Flags {
			var opts []string
			for _, n := range f.Names {
				if strings.HasPrefix(n, "--") {
					opts = append(opts, "-l "+fishq(n[2:]))
				} else {
					opts = append(opts, "-s "+fishq(n[1:]))
				}
			}
			switch f.Kind {
			case KindEnum:
				opts = append(opts, "-x -a "+fishq(strings.Join(f.Values, " ")))
			case KindFile:
				opts = append(opts, "-r -F")
			case KindDir:
				opts = append(opts, "-x -a '(__fish_complete_directories)'")
			case KindText:
				opts = append(opts, "-x")
			}
			fmt.Fprintf(&b, "complete -c agentjq -n %s %s -d %s\n", cnd, strings.Join(opts, " "), fishq(firstSentence(f.Help)))
		}
	})
	return b.String()
}
