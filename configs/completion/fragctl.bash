# bash completion for fragctl, the command-line client of fragd.
#
# Install: copy to /usr/share/bash-completion/completions/fragctl (loaded on demand by the
# bash-completion package), or source it from ~/.bashrc. It needs nothing from bash-completion:
# file names are completed with its _filedir when present, else with compgen -f.
#
# Completes the commands (hist status trace top map compact pool set preflight ensure release reload
# cost policy check), each
# command's options (an option already given is not offered again; --png and --json exclude
# each other), --order 0..10, --node with the host's NUMA nodes, --zone with zone names, pool
# sizes 2MB and 1GB for `pool set`, `preflight` and `ensure`, and file names for --socket, --png and `policy check`.
# tests/integration/docs_test.sh checks these lists against `fragctl --help`.

# Options that take a value, on any level: the word after one of them is its value.
_fragctl_value_opts=" --socket --order --interval --count --node --zone --png --max-age --blocks --timeout --seconds --sort --limit --within --hold --for --lease "

# File names matching $1 into COMPREPLY.
_fragctl_files() {
  if declare -F _filedir >/dev/null; then
    cur=$1 _filedir
  else
    local IFS=$'\n'
    COMPREPLY=($(compgen -f -- "$1"))
    compopt -o filenames 2>/dev/null
  fi
}

_fragctl() {
  local cur=${COMP_WORDS[COMP_CWORD]} cword=$COMP_CWORD
  local prev=""
  ((cword > 0)) && prev=${COMP_WORDS[cword - 1]}
  # --opt=value: bash splits it into "--opt" "=" "value".
  if [[ $cur == "=" ]]; then
    cur=""
  elif [[ $prev == "=" ]] && ((cword > 1)); then
    prev=${COMP_WORDS[cword - 2]}
  fi
  COMPREPLY=()

  # Walk the words before the cursor: the command, its subcommand, positionals, options given.
  local cmd="" sub="" npos=0 used=" " i w
  for ((i = 1; i < cword; i++)); do
    w=${COMP_WORDS[i]}
    if [[ $_fragctl_value_opts == *" $w "* ]]; then
      used+="$w "
      if [[ ${COMP_WORDS[i + 1]} == "=" ]]; then ((i += 2)); else ((i += 1)); fi
      continue
    fi
    case $w in
      -*) used+="$w "; continue ;;
    esac
    if [[ -z $cmd ]]; then
      cmd=$w
    elif [[ ($cmd == pool || $cmd == policy) && -z $sub ]]; then
      sub=$w
    else
      ((npos++))
    fi
  done

  # The value of the option before the cursor.
  case $prev in
    --socket | --png)
      _fragctl_files "$cur"
      return 0
      ;;
    --order)
      COMPREPLY=($(compgen -W "0 1 2 3 4 5 6 7 8 9 10" -- "$cur"))
      return 0
      ;;
    --node)
      local n nodes=""
      for n in /sys/devices/system/node/node[0-9]*; do
        [[ -e $n ]] && nodes+="${n##*/node} "
      done
      COMPREPLY=($(compgen -W "${nodes:-0}" -- "$cur"))
      return 0
      ;;
    --zone)
      COMPREPLY=($(compgen -W "DMA DMA32 Normal Movable" -- "$cur"))
      return 0
      ;;
    --sort)
      COMPREPLY=($(compgen -W "time stalls" -- "$cur"))
      return 0
      ;;
    --interval | --count | --max-age | --blocks | --timeout | --seconds | --limit | --within | --hold | --for | --lease)
      return 0  # a number, a duration or a name: nothing to offer
      ;;
  esac

  local opts="" words=""
  case $cmd in
    "") opts="--socket --help --version"
        words="hist status trace top map compact pool preflight ensure release reload cost policy" ;;
    hist) opts="--order --interval --count --json --help" ;;
    status | trace) opts="--json --help" ;;
    top) opts="--interval --count --once --sort --limit --stacks --json --help" ;;
    map) opts="--node --zone --png --json --max-age --blocks --help" ;;
    compact) opts="--node --timeout --json --help" ;;
    reload) opts="--help" ;;
    preflight)
      opts="--order --node --json --help"
      ((npos == 0)) && [[ $used != *" --order "* ]] && words="2MB 1GB"  # SIZE; COUNT is a number
      ;;
    ensure)
      opts="--order --node --within --hold --for --json --help"
      ((npos == 0)) && [[ $used != *" --order "* ]] && words="2MB 1GB"
      ;;
    release) opts="--for --lease --json --help" ;;
    cost) opts="--seconds --json --help" ;;
    pool)
      case $sub in
        "") opts="--help" words="set" ;;
        set)
          opts="--node --timeout --json --help"
          ((npos == 0)) && words="2MB 1GB"  # SIZE; COUNT (npos 1) is a number
          ;;
        *) return 0 ;;
      esac
      ;;
    policy)
      case $sub in
        "") opts="--help" words="check" ;;
        check)
          opts="--help"
          if [[ $cur != -* ]] && ((npos == 0)); then
            _fragctl_files "$cur"
            return 0
          fi
          ;;
        *) return 0 ;;
      esac
      ;;
    *) return 0 ;;  # not a fragctl command
  esac

  if [[ $cur == -* ]]; then
    # Each option once; --png and --json exclude each other (fragctl refuses both).
    local o offer=""
    for o in $opts; do
      [[ $used == *" $o "* ]] && continue
      [[ $o == --png && $used == *" --json "* ]] && continue
      [[ $o == --json && $used == *" --png "* ]] && continue
      offer+="$o "
    done
    COMPREPLY=($(compgen -W "$offer" -- "$cur"))
  else
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
  fi
  return 0
}

complete -F _fragctl fragctl
