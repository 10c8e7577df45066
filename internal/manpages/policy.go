package manpages

// policyManual is the source of agentjq-policy(5), in the markdown
// roff.FromMarkdown reads. It describes the approve package: keep it in
// step with approve/rules*.go, jqpolicy.go, approver.go and
// examples/policies/.
const policyManual = `% agentjq-policy(5) agentjq | File formats

# NAME

agentjq-policy - rules files, jq policies, and the approver and hook protocols that answer an agent's permission requests

# SYNOPSIS

    agentjq spawn --policy rules.json --policy policy.jq --approver CMD [--approver-format control|hook]
    agentjq approve --policy FILE... < agent-output.ndjson

# WHAT IS ENFORCED AND WHAT IS MATCHED

**The sandbox is the boundary.** Every Bash command the agent runs, and
every program it starts, runs in Claude Code's own OS sandbox (bubblewrap
on Linux, Seatbelt on macOS), which agentjq turns on for every claude
session and derives from the policy (SANDBOX, below). It enforces files,
reads and network whatever the command's spelling: writes only inside the
project and the build caches, never to its control files (git's hooks and
config, claude's settings, rc files) or to HOME; no reads of the files Read
deny rules name or of credentials (~/.ssh, ~/.aws, ~/.kube/config...); no
network except the domains the policy names; the agent's own credentials
are not in any command's environment.

**Rules state intent, and are matched, not enforced.** They are matched as
Claude Code matches them (a prefix rule, a compound command needs each part
allowed, a part agentjq cannot read is allowed by no rule), with the cheap
respellings of a deny or ask rule (option clusters in any order,
--opt=value, abbreviations). A Bash deny rule is **not** a boundary against
a program you allow that runs arbitrary code: under Bash(python3:*),
Bash(node:*), Bash(make:*) or Bash(npm run:*), a script can do anything the
sandbox lets it, deny rules or not. Nor is an allow rule a boundary
against what a program you allow reads from the project: Bash(npm test),
Bash(make test) or Bash(go test:*) beside Edit(./**) run whatever the agent
wrote into package.json, the Makefile or a test, inside the sandbox. Code
given inline (git -c, an interpreter's -c or -e) meets every Bash deny
rule, so such a policy does not allow it.

**The file tools are checked by path rules.** Read, Edit, Write,
MultiEdit, NotebookEdit, Glob and Grep run inside claude, outside the
sandbox: path rules decide them, and a write to a control file is denied
unless an allow rule names it.

# DESCRIPTION

Before it runs a tool, the agent sends a **can_use_tool** control request and
waits. agentjq answers it with a chain of deciders, asked in this order:

1. the rules files (**--policy** FILE.json), all merged;
2. the jq policies (**--policy** FILE.jq), in the order given;
3. the approver command (**--approver**);
4. the person at the terminal (spawn only, unless **--no-prompt**);
5. a fail-closed deny, whose message names what would have allowed the call.

A decider may answer allow, deny, or nothing (no opinion: the next one is
asked). "ask" from rules or a jq policy skips the remaining policies and goes
to the approver or the terminal; if neither can answer, the call is denied.
Any error, crash, garbage or timeout denies, with a message the agent reads. A
policy file that does not load stops agentjq before anything starts, with
file:line:column, exit status 2.

Every decision is reported as an agentjq event of subtype **decision**
(see agentjq-protocol(7)), naming who decided (**decided_by**: rules, jq,
approver, tty, default, timeout, cancel, error, hook), the path (**via**:
hook or permission, below) and which rule.

# SANDBOX

agentjq passes claude one **--settings** whose sandbox block it makes from
the policy, merged with the client's own (the proxy, the Agent SDK: the
stricter value wins, and a client's setting that would weaken the sandbox
is dropped, naming it on stderr):

- **enabled**, **failIfUnavailable** true; **allowUnsandboxedCommands**
  false (claude never retries a blocked command outside the sandbox: a Bash
  call that asks for **dangerouslyDisableSandbox** is denied besides);
  **autoAllowBashIfSandboxed** false (the rules still decide every call);
- **filesystem.denyWrite**: Edit and Write deny rules, as exact paths (the
  sandbox binds exact paths on Linux: a deny rule with a glob holds the
  files it matches when the session starts; dir/** holds dir), and the
  control files that exist in the project when it starts: .git/config,
  .git/hooks and those of nested, bare and submodule repositories, .claude,
  .husky, .vscode, .idea, .cargo/config.toml, the rc files of shells, git,
  npm, yarn, pnpm, bun, pip, mise, pre-commit and lefthook;
- **filesystem.denyRead**: Read deny rules, and the credential files below
  HOME (~/.ssh, ~/.aws, ~/.azure, ~/.config/gcloud, ~/.gnupg, ~/.netrc,
  ~/.git-credentials, ~/.docker/config.json, ~/.kube/config, ~/.npmrc,
  ~/.pypirc, ~/.config/gh/hosts.yml, cargo's and terraform's credentials,
  ~/.vault-token, ~/.pgpass, ~/.my.cnf, claude's own) unless a Read allow
  rule names them;
- **filesystem.allowWrite**: Edit and Write allow rules outside the
  project, and the build caches ordinary builds write, found the way each
  tool finds them (go env GOCACHE GOMODCACHE, npm config get cache,
  CARGO_HOME's registry and git, pip's, uv's, yarn's, pnpm's caches),
  made when missing. Never an install target (~/go/bin, ~/.cargo/bin,
  npm's global prefix): what is put there runs outside the sandbox. A
  cache is writable: a command can poison it (a Go build cache entry, an
  npm tarball) for a later build outside the sandbox that trusts it;
- **network.allowedDomains**: WebFetch(domain:...) allow rules and the
  policy's own list. A command reaching any other host makes claude ask,
  as a can_use_tool for the tool **SandboxNetworkAccess** with input
  {"host": ...}: the chain decides it like any call (a WebFetch or
  SandboxNetworkAccess domain rule matches it; else the default, deny).
  Loopback is never reachable;
- **credentials.envVars**: the agent's own credentials (ANTHROPIC_API_KEY,
  ANTHROPIC_AUTH_TOKEN, CLAUDE_CODE_OAUTH_TOKEN...) and the policy's list
  are unset for commands.

A rules file may carry a **sandbox** key, as Claude Code's settings do
(beside **permissions** in a settings.json): **enabled** (false runs
without the sandbox, warning once), **filesystem** {**allowWrite**,
**denyWrite**, **denyRead**, **allowRead**}, **network**
{**allowedDomains**}, **credentials** {**envVars**: names}. Any other key
(excludedCommands, allowUnsandboxedCommands, proxy ports...) is an error
naming file:line:column: nothing in a policy weakens the sandbox.

    {"allow": ["Bash(npm:*)", "Edit(./**)"],
     "sandbox": {"network": {"allowedDomains": ["registry.npmjs.org"]}}}

Where the sandbox cannot run (bubblewrap or socat missing, user namespaces
refused, an unsupported system) agentjq starts no agent: it exits 127 and
says what to install. **--no-sandbox** (spawn, record, proxy, serve, acp)
runs without it, warning once on stderr and once in the event stream
(warning code sandbox_off). claude 2.1.332 says "sandbox_enabled" on its
init line: false ends the session (exit 127). claude 2.1.328 says nothing
there; what holds its sandbox on is failIfUnavailable, with which it refuses
to start without a working sandbox or with settings it cannot take (checked
live on both versions), and an older claude is ended.

What the sandbox stopped is reported: an agentjq event of subtype
**sandbox** (tool_use_id, and what was blocked: a write, a read or a
network host), a line of **filter --view**, and an error event in the
daemon's and ACP's streams. On Linux claude reports only network blocks
itself (its <sandbox_violations> text); writes and reads are read from the
command's errors (EROFS, a refused read of a denied path), so a program
that hides its errors is blocked without a report.

What the sandbox does not hold, or breaks:

- a control file that does not exist when the session starts is not held
  by agentjq's list (claude's own defaults still hold .claude/settings*.json,
  .mcp.json, .gitconfig, .bashrc and a few more): bubblewrap holds a missing
  path with an empty character device that every command sees in the
  project, and git add -A, or a tool that reads the file, fails on it. So a
  repository made during the session (git init) has hooks it may write;
- claude's own placeholders break git add -A; agentjq hides them from the
  agent's git (an excludes file, through GIT_CONFIG_COUNT), nowhere else;
- a control file made during the session (a .cargo/config.toml, an .npmrc,
  a nested repository's config, git's rebase state, by a command or by a
  branch checked out) is not held, and can run code when git, a package
  manager or an editor next works there; agentjq names each on stderr when
  the session ends, for you to review;
- writes inside the project are allowed: rm -rf of the project, or a
  Makefile or package.json the agent wrote and you run later, is the
  project's content; the rules and your review hold it, not the sandbox.
  So is git's index: git update-index --assume-unchanged can hide a change
  from git status;
- a writable cache can be poisoned for a build that trusts it later
  outside the sandbox (a module in Go's module cache, which go build does
  not check again; go mod verify does);
- a Read deny rule holds the file, not copies of it: its content in git's
  history (git show HEAD~1:.env) is readable, and so is any file the rule
  does not name (.env.local under Read(./.env));
- claude's own temporary directory (/tmp/claude-UID) is shared by every
  session of the user and writable to commands, but for the session's own
  directory: one session's commands can read or change another's
  background task output.

# EVERY CALL, NOT ONLY THE ONES THE AGENT ASKS ABOUT

claude runs many calls without a can_use_tool request: Read inside the
project, read-only Bash (cat, grep -r, head, cd), and whatever a loaded
settings file allows. So whenever the chain holds more than the fail-closed
default (a policy, an approver, or a terminal that opens), spawn registers a
PreToolUse hook of its own and the policies judge every call before it runs
(agentjq-protocol(7) has the protocol):

- a **deny** from the rules files or a jq policy blocks the call; the model
  reads the message;
- a call the policies do not decide, or an **ask**, comes back as a
  can_use_tool request, which goes to the approver, the terminal and the
  default, not to the policies again;
- an **allow** lets the agent's own permission flow go on; if the agent
  then asks anyway, the whole chain decides again.

This means that the rules decide what the agent reads too. Under the rules'
default deny, a Read or an **ls** no rule allows is denied, even though the
agent would not have asked: allow what the agent should read (for example
"Read" or "Bash(ls:*)"), or set "default": "ask" to leave the rest to
the approver or the terminal. With only an approver, it is asked about
every call; with only the terminal, every call prompts (answer a, for
always).
A jq policy run for the hook sees the same fields, without
permission_suggestions, description or display_name, and request_id is the
hook call's.

The file tools' relative paths are judged where they land: the hook
reports the directory the agent's Bash shell is in (claude keeps it between
calls, so after **cd src/secret** a Write of **key.pem** is
src/secret/key.pem), and the permission request that follows is judged in
the same directory. Relative path rules stay anchored at the session's
working directory.

**--hook PreToolUse** commands run inside agentjq's hook, before the
policies, one after the other in the order given (each only for the tools
its matcher names; the matcher is a name, names joined with |, or a regular
expression). The policies then judge the input they leave, and the original
too when a hook changed it. The stricter answer wins: any deny denies (the
reasons are joined); else any ask, or a call the policies did not decide,
asks; else, the policies allowing it, a hook's allow is passed on. A hook's
own keys are read as the agent reads them (case-sensitive); its continue,
stopReason, systemMessage, suppressOutput and additionalContext are passed
on.

The agent loads only the user's settings (**--setting-sources user**, see
agentjq-protocol(7)): a settings file in the project can neither widen what
the policy allows nor run hooks of its own, unless you pass
**-- --setting-sources user,project,local**. Even then an allow rule there
cannot skip the policies, since the hook asks about every call; command
hooks and env entries there would run.

The terminal's **always** adds a rule for the rest of agentjq's session
only; the agent's permission_suggestions (which would write the rule into
.claude/settings.local.json) are never passed on. Likewise, the
updatedPermissions of an approver's or a jq policy's answer reach the agent
only when their destination is **session**; any other destination
(localSettings, projectSettings, userSettings) is dropped with a line on
stderr.

# RULES FILES

A JSON object in Claude Code's permission syntax: a **permissions** block, or a
whole Claude Code settings.json whose **permissions** key holds one, so a
project's .claude/settings.json can be used as it is.

**allow**, **ask**, **deny**
:   arrays of rules. Across all files, deny beats ask beats allow, whatever
    the order of the files.

**default**
:   what a request no rule matches gets: **deny** (the default) or **ask**.
    The merged default is deny unless every file says ask.

**message**
:   the message a deny by this file's default sends the agent.

**sandbox**
:   what the OS sandbox holds beyond what the rules give it (SANDBOX).

**answers**
:   scripted answers to AskUserQuestion: question text or header (or "*")
    to an option label, or "@first" for the first option.

**tools**
:   the names of tools of your own (a claude with a tool the checked CLI
    versions do not list) that the rules may name. A rule about any other
    tool claude does not have is an error with the file, line and column and
    the nearest known name, since a misspelt name (**Bassh(rm:*)**) would
    match nothing: the built-in tools of the checked versions' init lines,
    their older names (Glob, Grep, LS, MultiEdit, NotebookRead, TodoWrite,
    ...), and mcp__ names are accepted without it.

Other keys of a Claude Code permissions block (defaultMode,
additionalDirectories, ...) are accepted and ignored; any other key is an
error. A key "//" holds a comment.

## Rules

**Tool**
:   every call of the tool: Bash, Read, Edit, Write, WebFetch, mcp__server,
    mcp__server__tool.

**Bash(**_pattern_**)**
:   the command, read as shell words after quote removal: **npm run build**
    exactly these words; **git diff:*** these words then anything (the prefix
    form); **git *** a lone star is any words; **\*.sh** a star inside a word
    matches within the word. A compound command (&&, ||, ;, |, subshells) is
    judged part by part: every part must be allowed, and any part denied
    denies the call. A wrapper that changes what the command may do (sudo,
    doas, env with an assignment or -i, an option setting the user, the
    directory or the environment) must be allowed itself; one that only runs
    it (timeout, nice, nohup, time, env alone, strace) is looked through:
    Bash(npm test:*) allows timeout 60 npm test. A deny or ask rule also matches the command as the program
    would take it, so that respelling it does not dodge the rule: its
    options anywhere among the command's, before or after the operands
    (**Bash(git push --force:\*)** denies **git push origin main --force**),
    a short-option cluster in any order or spread out (**-rf** is **-fr**,
    **-r -f**, **-vrf**), a long option abbreviated or with a value
    (**--forc**, **--force=true**, not --force=false), and, for rm, cp, mv,
    chmod, chown, curl, docker, npm, kubectl and git's push, commit, clean,
    branch and checkout, a long option as the letter it has there (--force
    is -f to rm and git push, but not to kubectl, where -f is --filename).
    Options are compared in their case (-D is not -d). A word after one of
    the rule's options is that option's value and may stand anywhere
    (**Bash(curl -X DELETE:\*)** denies **curl URL --request DELETE** and
    **curl -sXDELETE URL**). The rule's first other operand, a subcommand
    such as push, stands where the command's first operand stands, past
    words just after an option, which may be that option's value (**git -C
    . push**, **kubectl -n prod delete**, **rm -rf dist build**); its later
    operands anywhere after it. An operand matches in any case (**RM -rf
    BUILD**, as a case-insensitive filesystem finds the program and the
    file) and spelled otherwise as a path (**build/**, **./build**,
    **../build**, an absolute path ending in it, ~ and ~/ for the home
    directory; not a URL). A rule naming /bin/rm holds for rm. Words may
    follow, with or without :\* (**Bash(npm publish)** denies **npm publish
    --tag beta**). An allow rule matches the words as written. A deny rule
    is about the command's words, not about what it does: the files it
    writes or reads are the sandbox's to hold (see HOW BASH COMMANDS ARE
    READ), so **Bash(cat .env)** is best written **Read(.env)**, which the
    sandbox holds for every command. Not matched: an operand the rule names
    after another operand in the first place (**cat a .env** for
    **Bash(cat .env)**), a path relative to a directory the command changed
    to (**cd src && rm -rf secret** for **Bash(rm -rf src/secret)**),
    clusters of four letters or more (-ffdx), and a program's own synonyms
    (git push origin +main for a force push). In turn a long option without
    = before the subcommand is taken to maybe have a value: **git
    --no-pager stash push** is denied by **Bash(git push:\*)**.

**Read(**_path_**)**, **Edit(**_path_**)**, **Write(**_path_**)**
:   gitignore-style globs: **//abs/path** from the root, **~/p** from the home
    directory, **/p**, **./p** or **a/b** from the session's working
    directory, a name without a slash at any depth below it. A star stays
    within one path segment and ** spans segments. An Edit rule covers every
    tool that writes a file, a Read rule every tool that reads one. Paths are
    matched as written and with symlinks resolved. A deny or ask rule also
    matches a name a case-insensitive filesystem such as macOS's takes for
    the same one: in another case (**Read(.env)** denies **.ENV**), with full
    case folding (ß is ss, the ligature ﬁ is fi) and composed or decomposed
    accents alike (Unicode's canonical caseless match, as APFS compares
    names). An allow rule covers only the name as written.

**WebFetch(domain:**_host_**)**
:   the URL's host; domain:*.host matches subdomains. The sandbox asks
    about a host outside its allowed list as a **SandboxNetworkAccess**
    request (input {"host": ...}); a WebFetch or
    **SandboxNetworkAccess(domain:**_host_**)** rule judges it like a
    WebFetch of that host (a bare WebFetch deny or ask covers every host, a
    bare WebFetch allow none), otherwise the default decides.

# HOW BASH COMMANDS ARE READ

Every Bash command runs in the sandbox, which holds files, reads and network
for it whatever its spelling: a write outside the project or to a protected
control file (below) fails, a read of a file a Read rule denies fails, and
the network reaches only the domains allowed. So the rules judge a Bash call
by Bash rules only, by the commands it runs: what it writes, reads or
fetches is not looked for in its text, and an allow of **Bash(python3:\*)**
allows **python3** with any arguments, the sandbox holding what it does. A
Bash call whose input carries **dangerouslyDisableSandbox** (claude adds it
to rerun a command that failed in the sandbox) is denied whatever the
policies say, on both paths.

A Bash command is parsed with a real shell parser and judged by what bash
would run, never by its text. agentjq knows a fixed set of constructs; a part
it does not fully understand is **unknown**: no allow rule (other than a bare
**Bash**) allows it, and every deny or ask rule matches it, so the call falls
through to ask or deny. Unknown are:

- arithmetic and subscripts holding a name or an expansion, which bash
  evaluates as code: **$((x))**, **$[x]**, **((x))**, **${a[x]}**,
  **${x:$n}**, C-style **for ((...))**, **[[ $x -eq 1 ]]**, **[[ -v x ]]**,
  **test -v**, **printf -v**, **let**; and **${!x}**, **${x@P}** and the
  other **@** operators, **${x:=...}**;
- assignments that change what later commands do. A bare assignment is
  allowed only to a name with a lower-case letter (the shell's own
  variables; upper-case names are the environment's: HOME, PATH, IFS,
  BASH_ENV, ENV, PS4, PROMPT_COMMAND, LD_*, GIT_* ...) that is not a
  lower-case environment variable (http_proxy, npm_config_*, ...).
  export, readonly, and an assignment before a command reach the programs
  run, so only LANG, LC_*, TZ, TERM, NO_COLOR and a few like them are
  looked through; any other makes the form with the assignment need an
  allow of its own. declare/local/typeset with an option (-n, -i, -x ...),
  unset of a non-inert name, and builtins that change the shell or run text
  (source, alias, trap, shopt, set other than -e/-u/-x/-o pipefail, eval of
  an expansion, mapfile, getopts...) are unknown;
- wrappers (env, exec, command, builtin, nice, ionice, nohup, timeout,
  time, stdbuf, sudo, doas, setsid, taskset, chrt, strace, watch, flock,
  xargs, find -exec, setarch, linux32/linux64, chronic, ifne, logsave,
  systemd-cat, caffeinate, trickle) are read with their real option grammar;
  an option the table does not know, or a word whose value is known only at
  run time, is unknown, never "the next word is the command"; so is an
  option value that names a command (strace -o '|cmd'). Programs that
  run a command in a way agentjq does not follow (chroot, su, script,
  parallel, unshare, busybox, perf, hyperfine, pee, direnv, nix-shell, vim,
  emacs, a dynamic loader such as ld-linux.so ...) are unknown. A wrapper or
  shell run by a path outside /bin, /usr/bin, /usr/local/bin, /sbin and
  /usr/sbin (/opt/homebrew/bin/env, ./node_modules/.bin/sh) is not looked
  through, and every deny or ask rule matches it. A program's name is read
  in any case, as a case-insensitive filesystem finds it (**SUDO RM** is sudo
  rm to the wrappers and to deny and ask rules; an allow rule still matches
  only the words as written); a builtin's is not, as bash matches those
  exactly;
- a shell with no script operand and no -c (or with -) reads its script from
  stdin: a literal here-document or here-string is read as the script
  (**bash <<< 'ls'** is ls), anything else (**echo x | sh**, **bash < file**)
  is unknown;
- text the shell reads otherwise than the parser: a command holding a
  carriage return or a NUL byte (a carriage return is a blank to the parser
  and part of the word to the shell, so ls, a carriage return and #$(cmd)
  run cmd), and a
  here-document holding a line that starts with its delimiter (bash ends one
  inside $( ) at **EOF)**) or, unquoted, a line ending in a backslash (the
  shell joins it to the next line before it compares the delimiter).

Code given on a command line is opaque: python -c, perl, ruby, lua, julia
and Rscript -e, node, bun and deno -e and -p, an interpreter reading its
program from stdin, php -r, pwsh, osascript, tclsh, dc, git -c,
--config-env, --exec-path and --git-dir, make --eval. An allow rule that
matches its words allows it (**Bash(python3 -c:\*)**), but every Bash deny
or ask rule matches it, since the code may run anything: under **"deny":
["Bash(curl:\*)"]**, **python3 -c '...'** is denied. Programs that run code
some other way (an awk program's system(), sed's e command, rg --pre, go
test -exec) are matched by their own words only; the sandbox holds what the
code does. Likewise a
runner of a subcommand (uv run, poetry run, pipenv run, pnpm exec, npm exec,
npx, bundle exec ...) is allowed by a rule for its own words
(**Bash(uv run pytest:\*)**), and deny and ask rules also see the command it
runs.

claude runs the user's shell when that is zsh. So an extended glob such as
**\*(e:'cmd':)** (a zsh glob qualifier that runs cmd) is unknown, and so
are zsh's subscript of a plain **$x[i]** (also **$#x[i]**, in double quotes
too), whose name i is evaluated as an expression that may run code, unless
it holds only numbers, and **$~x**, **$=x**, **$^x** and **$+x** (the value
globbed, where a qualifier runs code, or split into words). zsh also
evaluates as arithmetic a numeric argument of printf (printf %d
'path[$(cmd)]' runs cmd) and read -t's timeout, so these are unknown unless
the values are plain numbers; and a bare assignment to one of zsh's own
lower-case parameters (path, which is PATH, fpath, cdpath, functions,
aliases, commands, options, the hook arrays ending in _functions...) or to
COLUMNS or LINES is unknown. A word starting
with an unquoted = and a name (zsh's **=rm**, the path of rm) may expand.
Options the user's zsh sets in its start-up files (GLOB_SUBST,
SH_WORD_SPLIT) are not known: under GLOB_SUBST a plain **$x** is globbed as
**$~x** is, and the rules do not hold against that.

The shell's directory is followed for the file tools: **cd**, **pushd** and
**popd** are followed within the command, and the chain remembers where
each Bash call it did not deny may have left claude's shell (claude keeps
the shell's directory between calls), so that a relative path of a later
Read, Edit or Write is judged in every directory the shell may be in; when
that cannot be known (cd $X, cd -, popd, a cd in a loop or a function, more
than 16 directories), no rule allows a relative path. **cd** cleans .. as
bash's logical cd does (**cd -P** makes the directory unknown). A command
made only of cd, set -e, read, true and the like runs no program and is
allowed; deny and ask rules still see it. Commands are matched whatever
their length.

# PROTECTED CONTROL FILES

Some files make the agent or its tools run code, or widen what the agent
may do, when somebody later works in the project (package protect holds the
one list): **.claude/\*\*** (settings.json, settings.local.json, hooks,
commands), **.husky/\*\***, **.vscode/\*\***, **.idea/\*\***,
**.mcp.json**, Claude Code's **.claude.json**, a file named .git, the
config, config.worktree, commondir and hooks of any git directory (.git,
a bare x.git, and those below them for modules and worktrees),
**.cargo/config** and **.cargo/config.toml** at any depth, shell start-up
files (.bashrc, .bash_profile, .profile, .zshrc, .zshenv, .zprofile,
.kshrc, .cshrc, .inputrc, .envrc...), the files that set how git, npm,
yarn, pnpm, bun, pip, curl and wget run or what they run (.gitconfig,
.npmrc, .yarnrc, .yarnrc.yml, .pnpmfile.cjs, bunfig.toml, pip.conf,
.pypirc, .curlrc, .wgetrc, .netrc), mise's and the commit hook runners'
files (mise.toml, .pre-commit-config.yaml, lefthook.yml), wherever they
are; and below HOME ~/.ssh, ~/.config/git, ~/.config/fish,
~/.config/systemd, ~/.config/autostart, go's ~/.config/go (GOFLAGS may name
programs) and ~/.config/pip. A write to one by a file tool (Edit, Write,
MultiEdit, NotebookEdit), also through a symlink or in another case
(.CLAUDE/settings.json, .Git/HOOKS), is denied by default, whatever jq
policies or approvers would answer, unless an allow rule names it
explicitly: the rule's literal part, before any wildcard, reaches into the
protected file or directory. **Edit(\*\*)** and **Edit(\*.json)** do not
name .claude/settings.json; **Edit(.claude/settings.local.json)**,
**Edit(.claude/\*\*)** and **Edit(~/.bashrc)** do. A Bash command's write
to one fails in the sandbox, which holds those that exist when the session
starts read-only (SANDBOX), whatever the rules allow.

# PATHS

Every file tool's path field is judged: file_path (Read, Edit, Write,
MultiEdit), notebook_path (NotebookEdit), path (Grep, Glob, LS; the session's
directory when absent) and the glob of Grep and Glob (a glob that is
absolute, starts with ~ or has a .. segment is not allowed). An input that
does not match the tool's schema (a path that is not a string, a missing
file_path, a duplicate key, a key that differs from the schema's only in
case such as Command or File_path) is not allowed by any rule. Symlinks are
followed through every component, dangling ones included: a link whose
target does not exist yet is judged where the write would land. A path under
/proc or /dev/fd (/proc/self/cwd/.env) leads wherever the agent's process
is, so it is unknown: no rule allows it and every deny rule of the tool
matches it. So is a path with white space at either end (a space before
/etc/x, a newline after .env): claude trims it before the tool opens the
file. Grep of a directory reads every file below it: a deny or ask
Read rule that matches any file there (links resolved; in a tree too large
to list, any path the pattern may match below it) matches the call.

# JQ POLICIES

A file ending in .jq is a jq program (gojq). Its input is the can_use_tool
request body (tool_name, input, tool_use_id, permission_suggestions, ...) plus
**request_id**, **cwd**, **session_id** and **permission_mode**. Its first
output decides:

**"allow"**, **"deny"**, **"ask"**
:   the behavior, with a default message for deny.

**{behavior, message, updatedInput, updatedPermissions, interrupt}**
:   an answer in the shape of the control response: updatedInput rewrites the
    tool's input (an allow always carries one); interrupt stops the turn along
    with a deny.

**{answers: {...}}**
:   answers an AskUserQuestion.

**empty**, **null**
:   no opinion.

An error at run time denies with the error as the message. See
examples/policies/dry-run.jq.

# ANSWERS

Answers from jq policies, approvers and hooks are read exactly as claude reads
them: keys are case-sensitive and a duplicate key is an error, so
{"behavior":"deny","Behavior":"allow"} is not an allow (it is an answer agentjq
cannot read, which denies); the same holds for hookSpecificOutput,
permissionDecision and decision. An allow whose updatedInput is null, a
string or anything but an object is a protocol error and denies with a
message. A deny whose message is empty or only spaces gets agentjq's
default message. **updatedPermissions** are kept only when their destination
is **session**: updates for userSettings, projectSettings or localSettings
(or with no destination) would write rules into the agent's own settings
files, outside the policy, and are dropped; so is a setMode to
bypassPermissions, whatever its destination. An allow that rewrites the input
(a jq policy's or the approver's updatedInput) is judged again by the rules
files as it will run: a rewrite that a deny or ask rule matches is denied.

# APPROVER PROTOCOL (--approver-format control)

The approver is a command run with sh -c once, as a co-process. For each
request it gets one line on stdin: the agent's control_request, as it came.
It writes one line back naming the same request_id, either a
control_response:

    {"type":"control_response","response":{"subtype":"success","request_id":"ID","response":{"behavior":"allow","updatedInput":{...}}}}

or a bare decision with a request_id member:

    {"request_id":"ID","behavior":"deny","message":"not on a Friday"}

Requests are sent one at a time, in the order agentjq asks, so at most one
waits for an answer. An answer counts only for the request whose request_id
it names: an answer for another request and a second answer are reported on
stderr and ignored, so neither can answer a later request. Every line of the
approver's stdout must be an answer: a line that is not one (not JSON, JSON
of another shape, an answer without request_id) denies the request waiting,
at once, with a message that says what was wrong with the line (requests
queued behind it are not sent yet and are not touched), and the approver's
later answer to that request is dropped. Chatter belongs on stderr. An
answer for the request that is not a decision, a crash, a line over 16 MiB
or no answer within the approval timeout denies too; a crashed approver is
restarted once. **agentjq approve** itself speaks this protocol, so it can be
spawn's approver.

Approvers run as agentjq-spawn(1) PROCESSES says: their whole process tree
ends with them, and they do not get the agent's credentials unless
--pass-credentials.

# HOOK PROTOCOL (--approver-format hook)

The approver is a Claude Code PreToolUse command hook, run with sh -c once per
request. Stdin: the hook input:

    {"session_id":"...","transcript_path":"","cwd":"...","permission_mode":"default",
     "hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{...},"tool_use_id":"..."}

Stdout: hook output, whose **hookSpecificOutput.permissionDecision** (allow,
deny, ask), **permissionDecisionReason** and **updatedInput** answer. Exit
status 2 denies with stderr as the message. Empty output is no opinion;
anything else that is not a decision denies, and so does stdout over 16 MiB.
See examples/policies/hook.sh.

# EXAMPLES

A rules file (examples/policies/rules.json):

    {
      "allow": ["Bash(git diff:*)", "Bash(go test:*)", "Read(**)", "Edit(src/**)"],
      "ask": ["Bash(git push:*)"],
      "deny": ["Bash(rm -rf:*)", "Read(.env)", "Read(~/.ssh/**)"],
      "default": "deny",
      "message": "Not allowed by the project's agent policy."
    }

Test it against a recording, then use it:

    agentjq approve test --policy rules.json session.rec
    agentjq spawn --policy rules.json -p 'run the tests'

Explain one decision:

    echo '{"tool_name":"Bash","input":{"command":"git push --force"}}' | agentjq approve explain --policy rules.json

# SEE ALSO

agentjq(1), agentjq-approve(1), agentjq-spawn(1), agentjq-protocol(7)
`
