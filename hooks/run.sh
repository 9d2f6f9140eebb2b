# Engram's hook front, in POSIX sh: `sh <install folder>/hooks/run.sh <entry> --agent claude|codex`, registered in
# hooks.json and codex-hooks.json (scripts/hook-registry.mjs). When the warm server of this home is there, it hands the
# agent's event to it without starting Node at all — a Node process costs a hook ~25 ms before it runs a line, this
# script ~5 ms all told (docs/PERFORMANCE.md, section 6, wave 11) — and prints its answer. Anything else runs the Node
# launcher next to it (hooks/run.cjs, which does everything a hook does: the server's other pipe, the socket, the
# in-process answer, the first-run bootstrap) with the same arguments and stdin, so behaviour there is exactly the
# Node hook's. The script always exits 0 and prints nothing but the server's answer (or what the launcher prints).
#
# The protocol (the server's side is src/server/mailbox-server.ts, takeShell):
# 1. the payload, as the agent gave it, is saved to `run/hooks/<id>.req` (a create that fails if the file exists, so
#    the id is this call's alone), and the hook makes its own answer pipe `run/hooks/<id>.out`;
# 2. one line `<id> TAB <entry> TAB <agent> TAB <hints> TAB <root> TAB <plugin data>` goes down `run/hook-calls-sh.fifo`
#    (well under PIPE_BUF: atomic), which only servers that read this form make, beside the file naming their pid
#    (`run/hook-calls-sh.pid`): a shell cannot open a pipe without blocking when nobody reads it, so the server must be
#    alive first. The write runs in a background subshell, overlapping the start of step 3; a server alive but not
#    reading (wedged) could let the pipe fill, and a write blocked there must not hold the hook: it is killed;
# 3. `timeout <wait> cat <id>.out`: the server claims the call (creating `<id>.work`, failing if it exists), opens the
#    pipe and writes the hook's stdout into it whole, or marks the call `<id>.no` (not answered: another version, no
#    runtime) and closes it empty; it starts writing only while the hook still waits, so no answer is cut in half;
# 4. a hook that gave up takes its call back by creating `<id>.work` itself (noclobber: O_EXCL): exactly one of the two
#    wins. Won: the server never saw the call, and the Node launcher runs with the saved payload, told the wait is
#    over (`--mailbox timeout`). Lost: the server has it and records it; a hook that only records exits in silence,
#    one whose answer is context runs the launcher with `--mailbox timeout` too. A server found dead after the
#    wait (killed mid-call) sends the hook to the launcher either way (`--mailbox lost`: answered in-process, as a Node
#    hook that saw the server go).
# The files are left to the server (it removes an answered call's, and its sweep the rest): the hook forks no `rm`.
# Programs run on the hot path: `cat` (stdin), `mkfifo`, `timeout` (which runs `cat`); and one fork (the post).

node_launcher=${0%.sh}.cjs
case $1 in
  pre-tool-use | post-tool-use | post-tool-use-failure | stop) wait=0.8 ;;
  session-start | user-prompt-submit) wait=1.5 ;;
  session-end) wait=0.4 ;;
  *) exec node --v8-pool-size=1 "$node_launcher" "$@" ;;
esac
# hooks/run.cjs HOOK_ENTRIES holds the same waits (the server's deadline for an answer is read from there).

root=${0%/hooks/run.sh}
# No HOME: the launcher asks the system (os.homedir), so the home stays empty here and the launcher runs.
home=${ENGRAM_HOME:-${HOME:+$HOME/.engram}}
data=${PLUGIN_DATA:-$CLAUDE_PLUGIN_DATA}
fifo=$home/run/hook-calls-sh.fifo
box=$home/run/hooks
tab='	'
nl='
'
# What the Node launcher decides better: another command-line shape, the server switched off (any ENGRAM_SERVER but
# empty, on, 1, true, yes),
# a nested agent session, a home that is relative, `~` or unset, paths a line cannot carry, data folders with edge
# whitespace (the launcher trims), a terminal for stdin, no `timeout` (macOS), no pipe, no live server behind it.
case $#:$2:$3:${ENGRAM_LLM_CHILD:+x}:$root:$home in
  3:--agent:claude::/*:/* | 3:--agent:codex::/*:/*) ;;
  *) exec node --v8-pool-size=1 "$node_launcher" "$@" ;;
esac
case $ENGRAM_SERVER in
  '' | on | ON | 1 | true | yes) ;;
  *) exec node --v8-pool-size=1 "$node_launcher" "$@" ;;
esac
case $root$home$data in
  *"$tab"* | *"$nl"*) exec node --v8-pool-size=1 "$node_launcher" "$@" ;;
esac
case $data in
  [[:space:]]* | *[[:space:]]) exec node --v8-pool-size=1 "$node_launcher" "$@" ;;
esac
if [ "$root" = "$0" ] || [ -t 0 ] || [ ! -p "$fifo" ] || ! command -v timeout >/dev/null; then
  exec node --v8-pool-size=1 "$node_launcher" "$@"
fi
pid=
{ read -r pid <"$home/run/hook-calls-sh.pid"; } 2>/dev/null
case $pid in
  '' | *[!0-9]*) exec node --v8-pool-size=1 "$node_launcher" "$@" ;;
esac
kill -0 "$pid" 2>/dev/null || exec node --v8-pool-size=1 "$node_launcher" "$@"

# The call's id: this shell's pid and the first number whose payload file did not exist (noclobber: O_EXCL).
set -C
n=0
until { command exec 3>"$box/s$$-$n.req"; } 2>/dev/null; do
  n=$((n + 1))
  # No folder (removed under the server), or not writable: the launcher copes.
  [ $n -lt 8 ] || exec node --v8-pool-size=1 "$node_launcher" "$@"
done
id=s$$-$n
cat >&3
exec 3>&-
# (A redirection that fails on `exec` ends a shell with an error; `command` keeps it a failure: the payload file gone
# means the payload is, and the hook says nothing.)
{ command exec 0<"$box/$id.req"; } 2>/dev/null || exit 0
# From here stdin is the saved payload: every fallback hands it to the launcher as the agent gave it.
codex=0 claude=0
[ -z "$PLUGIN_ROOT$CODEX_HOME" ] || codex=1
[ -z "$CLAUDE_PROJECT_DIR" ] || claude=1
line="$id$tab$1$tab$3$tab$codex$claude$tab$root$tab$data"
# A line the server reads whole: one atomic pipe write, under PIPE_BUF — Linux's 4 KiB holds 1000 characters in any
# encoding; elsewhere (no /proc) POSIX's 512 bytes, 120 characters.
max=120
[ ! -d /proc/self/fd ] || max=1000
[ ${#line} -le $max ] || exec node --v8-pool-size=1 "$node_launcher" "$@"
mkfifo "$box/$id.out" 2>/dev/null || exec node --v8-pool-size=1 "$node_launcher" "$@"
# The post, in a background subshell (a fork, no program), so the server works on the call while `timeout cat`
# starts. Read-write: opening never blocks (Linux), and the write cannot fail for want of a reader. A server alive but
# not reading (wedged) can let the pipe fill; a write blocked there must not hold the hook: the wait's time limit
# covers it, and a post not yet written by then (no `.sent`) is killed — only then, so the pid is still the subshell's.
(printf '%s\n' "$line" 4<>"$fifo" >&4 && : >"$box/$id.sent") &
post=$!
timeout "$wait" cat "$box/$id.out"
status=$?
if [ $status -eq 0 ]; then
  [ -e "$box/$id.no" ] || exit 0
  # The server does not answer this call: the launcher asks the way Node hooks do (versions, runtimes).
  exec node --v8-pool-size=1 "$node_launcher" "$@"
fi
[ -e "$box/$id.sent" ] || kill "$post" 2>/dev/null
# A server that died meanwhile (killed mid-call): the launcher answers in-process, as a Node hook that saw it go does;
# what the server recorded of the call is recorded again idempotently.
kill -0 "$pid" 2>/dev/null || exec node --v8-pool-size=1 "$node_launcher" "$@" --mailbox lost
if { true >"$box/$id.work"; } 2>/dev/null; then
  # Taken back before the server claimed it.
  [ $status -eq 124 ] && exec node --v8-pool-size=1 "$node_launcher" "$@" --mailbox timeout
  exec node --v8-pool-size=1 "$node_launcher" "$@"
fi
# The server has the call and is still working on it (a server busy warming up on a loaded machine): it records the
# call, but its answer is late and is not written. An event that only records is done; one whose answer gives the agent
# context is answered in-process by the launcher, as a Node hook whose wait ran out is (the server records nothing
# of an answer its hook never printed).
case $1 in
  session-start | user-prompt-submit | pre-tool-use | post-tool-use-failure)
    exec node --v8-pool-size=1 "$node_launcher" "$@" --mailbox timeout ;;
esac
exit 0
