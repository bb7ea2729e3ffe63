#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The operator-facing files agree with the programs they describe:
# - configs/completion/fragctl.bash completes exactly the commands and options that
#   `fragctl --help` and `fragctl COMMAND --help` list, values included;
# - docs/man/fragctl.8 and fragd.8 render without groff warnings, document every option the
#   programs have and mention none they lack, and their fragctl examples parse;
# - configs/kubernetes/base/fragd-daemonset.yaml parses, its policy passes `fragd --check-config`,
#   and it mounts, grants and annotates what fragd needs.
# Needs no root and no running fragd.
source "$(dirname "$0")/lib.sh"

COMPLETION="$SRC/configs/completion/fragctl.bash"
MAN_DIR="$SRC/docs/man"
DAEMONSET="$SRC/configs/kubernetes/base/fragd-daemonset.yaml"
ACT_PATCH="$SRC/configs/kubernetes/act/fragd-act-patch.yaml"

for f in "$BUILD/fragctl" "$BUILD/fragd"; do [ -x "$f" ] || fail "$f is missing: build first (make build)"; done
for f in "$COMPLETION" "$MAN_DIR/fragctl.8" "$MAN_DIR/fragd.8" "$DAEMONSET" "$ACT_PATCH"; do [ -f "$f" ] || fail "$f is missing"; done
command -v groff >/dev/null || skip_or_fail "groff is not installed (Debian groff-base; scripts/install-deps.sh installs it)"
python3 -c 'import yaml' 2>/dev/null || skip_or_fail "python3 has no yaml module (Debian python3-yaml; scripts/install-deps.sh installs it)"

log "bash -n $COMPLETION"
bash -n "$COMPLETION" || fail "$COMPLETION has a bash syntax error"

for page in fragctl.8 fragd.8; do
  log "groff -man -Tutf8 -ww $page"
  warnings=$(groff -man -Tutf8 -ww -z "$MAN_DIR/$page" 2>&1) || fail "groff failed on $page: $warnings"
  [ -z "$warnings" ] || fail "groff warns about $page:
$warnings"
  if command -v man >/dev/null; then
    warnings=$(MANWIDTH=80 man --warnings -l "$MAN_DIR/$page" 2>&1 >/dev/null) || fail "man -l failed on $page: $warnings"
    [ -z "$warnings" ] || fail "man -l warns about $page:
$warnings"
  fi
  groff -man -Tutf8 -P-cbou "$MAN_DIR/$page" >"$WORK/$page.txt" 2>/dev/null
done

mkdir -p "$WORK/files"
touch "$WORK/files/policy.yaml" "$WORK/files/map.png"

log "help, completion, man pages and DaemonSet against each other"
python3 - "$BUILD" "$COMPLETION" "$MAN_DIR" "$DAEMONSET" "$WORK" "$ACT_PATCH" <<'PY'
import os, re, shlex, subprocess, sys
import yaml

build, completion, man_dir, daemonset, work, act_patch = sys.argv[1:7]
FRAGCTL, FRAGD = os.path.join(build, "fragctl"), os.path.join(build, "fragd")
NO_SOCKET = os.path.join(work, "no-fragd.sock")
errors = []

def err(msg):
    errors.append(msg)
    print("  FAIL: " + msg, file=sys.stderr)

def run(argv, **kw):
    env = dict(os.environ, FRAGD_SOCKET=NO_SOCKET)
    env.update(kw.pop("env", {}))
    return subprocess.run(argv, capture_output=True, text=True, env=env, **kw)

# ---- what the programs say ------------------------------------------------------------------
OPT_RE = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*(?:\.[\w-]+)*)")  # node_exporter-style --path.procfs too

def parse_help(text):
    """{'options': {name: takes_value}, 'subcommands': [...], 'positionals': [...], 'text': text}"""
    h = {"options": {}, "subcommands": [], "positionals": [], "text": text}
    section = None
    for line in text.splitlines():
        if re.match(r"^\S.*:$", line):
            section = line[:-1]
            continue
        if not line.strip():
            section = None
            continue
        m = re.match(r"^  (\S+)(?: (\S+))?", line)
        if not m:
            continue
        first, second = m.group(1), m.group(2) or ""
        if section == "Options" and first.startswith("-"):
            takes = bool(re.match(r"^[A-Z][A-Z_]*(?:[:=]|$)", second))
            for name in first.split(","):
                h["options"][name] = takes
        elif section == "Subcommands":
            h["subcommands"].append(first)
        elif section == "Positionals":
            h["positionals"].append(first)
    return h

def help_of(prog, path):
    r = run([prog, *path, "--help"])
    if r.returncode != 0:
        sys.exit(f"'{prog} {' '.join(path)} --help' exited {r.returncode}: {r.stderr}")
    return parse_help(r.stdout)

tree = {}  # command path (tuple) -> parsed help
def walk(path):
    tree[path] = help_of(FRAGCTL, list(path))
    for s in tree[path]["subcommands"]:
        walk(path + (s,))
walk(())
leaves = [p for p, h in tree.items() if p and not h["subcommands"]]
groups = [p for p, h in tree.items() if h["subcommands"]]
longs = lambda h: {o for o in h["options"] if o.startswith("--")}
all_fragctl_opts = set().union(*(set(h["options"]) for h in tree.values()))
print(f"  fragctl commands: {', '.join(' '.join(p) for p in leaves)}")
if len(leaves) < 8:
    err(f"fragctl --help lists only {len(leaves)} commands: the help parser no longer understands it")

# ---- completion -----------------------------------------------------------------------------
def complete(words, cwd=None):
    script = ('source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=(); '
              '_fragctl; printf "%s\\n" "${COMPREPLY[@]}"')
    r = run(["bash", "-c", script, "comp", completion, *words], cwd=cwd)
    if r.returncode != 0:
        err(f"completing {words}: bash exited {r.returncode}: {r.stderr.strip()}")
    return [w for w in r.stdout.split("\n") if w]

def expect_comp(words, want, cwd=None):
    got = complete(words, cwd)
    if sorted(got) != sorted(want):
        err(f"completing {' '.join(words)!r}<TAB> gives {sorted(got)}, want {sorted(want)}")

expect_comp(["fragctl", "ma"], ["map"])
expect_comp(["fragctl", ""], tree[()]["subcommands"])
expect_comp(["fragctl", "-"], longs(tree[()]))
for g in groups:
    if g:
        expect_comp(["fragctl", *g, ""], tree[g]["subcommands"])
for p in leaves:
    expect_comp(["fragctl", *p, "-"], longs(tree[p]))

r = run(["bash", "-c", 'source "$1"; printf "%s\\n" $_fragctl_value_opts', "x", completion])
comp_value_opts = set(r.stdout.split())
help_value_opts = {o for h in tree.values() for o, takes in h["options"].items() if takes and o.startswith("--")}
if comp_value_opts != help_value_opts:
    err(f"options taking a value: completion has {sorted(comp_value_opts)}, fragctl --help {sorted(help_value_opts)}")

# Values: orders from the help's range, zones from its text, sizes fragctl accepts, files.
m = re.search(r"--order [^\n]*?in \[(\d+) - (\d+)\]", tree[("hist",)]["text"])
if not m:
    err("fragctl hist --help no longer shows the range of --order")
else:
    expect_comp(["fragctl", "hist", "--order", ""], [str(i) for i in range(int(m[1]), int(m[2]) + 1)])
m = re.search(r"--zone .*\(([^)]*)\)", tree[("map",)]["text"])
if not m:
    err("fragctl map --help no longer lists zone names")
else:
    expect_comp(["fragctl", "map", "--zone", ""], [z.strip() for z in m[1].split(",")])
nodes = sorted(d[4:] for d in os.listdir("/sys/devices/system/node") if re.fullmatch(r"node\d+", d))
expect_comp(["fragctl", "map", "--node", ""], nodes or ["0"])
sizes = complete(["fragctl", "pool", "set", ""])
if sorted(sizes) != ["1GB", "2MB"]:
    err(f"completing 'fragctl pool set '<TAB> gives {sizes}, want 2MB and 1GB")
for s in sizes:
    r = run([FRAGCTL, "pool", "set", s, "1"])
    if "not running" not in r.stderr:
        err(f"'fragctl pool set {s} 1' without fragd: want 'fragd is not running', got {r.returncode}: {r.stderr.strip()}")
files = os.path.join(work, "files")
expect_comp(["fragctl", "policy", "check", "pol"], ["policy.yaml"], cwd=files)
expect_comp(["fragctl", "map", "--png", "ma"], ["map.png"], cwd=files)
expect_comp(["fragctl", "--socket", "pol"], ["policy.yaml"], cwd=files)
expect_comp(["fragctl", "map", "--json", "--p"], [])  # --png excludes --json

# ---- man pages ------------------------------------------------------------------------------
def roff_text(line):
    line = re.sub(r"\\f(?:\[[^]]*\]|\(..|.)", "", line)
    line = line.replace("\\-", "-").replace("\\(en", "-").replace("\\&", "").replace("\\ ", " ")
    return line

def parse_man(path):
    """sections: name -> list of lines; subsections of COMMANDS; .TP headings per (sub)section;
    SYNOPSIS blocks; EXAMPLES command lines."""
    page = {"sections": {}, "ss": {}, "tp": {}, "synopsis": [], "examples": []}
    sec = ss = None
    lines = open(path).read().split("\n")
    in_ex = False
    for i, raw in enumerate(lines):
        if raw.startswith(".SH "):
            sec, ss = raw[4:].strip('"'), None
            page["sections"][sec] = []
            continue
        if raw.startswith(".SS "):
            ss = raw[4:].strip().strip('"')
            page["ss"][ss] = []
            continue
        if raw.startswith('.\\"') or sec is None:
            continue
        key = ss if sec == "COMMANDS" and ss else sec
        text = roff_text(raw)
        page["sections"][sec].append(text)
        if ss and sec == "COMMANDS":
            page["ss"][ss].append(text)
        if raw == ".TP" and i + 1 < len(lines):
            page["tp"].setdefault(key, []).append(roff_text(lines[i + 1]))
        if sec == "SYNOPSIS":
            if raw.startswith(".SY"):
                page["synopsis"].append([raw[4:].strip()])
            elif raw.startswith(".YS"):
                pass
            elif page["synopsis"]:
                page["synopsis"][-1].append(re.sub(r"^\.\w+\s*", "", text))
        if raw == ".EX":
            in_ex = True
        elif raw == ".EE":
            in_ex = False
        elif in_ex:
            page["examples"].append(text)
    return page

def tp_opts(page, key):
    return {o for h in page["tp"].get(key, []) for o in OPT_RE.findall(h)}

REQUIRED = ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "FILES", "SIGNALS", "EXIT STATUS", "EXAMPLES", "SEE ALSO"]

def check_common(name, page, rendered):
    for s in REQUIRED:
        if s not in page["sections"]:
            err(f"{name}: no {s} section")
    for f in ("/etc/fragd/fragd.yaml", "/run/fragd/fragd.sock"):
        if f not in "\n".join(page["sections"].get("FILES", [])):
            err(f"{name}: FILES does not name {f}")
    version = run([FRAGD, "--version"]).stdout.strip()  # "fragd X.Y.Z"
    th = open(os.path.join(man_dir, name)).read()
    if not re.search(r'^\.TH \S+ 8 \S+ "' + re.escape(version) + '"', th, re.M):
        err(f"{name}: .TH does not say '{version}' (the version the programs report)")
    text = open(rendered).read()
    if "\\f" in text or re.search(r"^\.", text, re.M):
        err(f"{name}: rendered text has unprocessed roff")

# fragctl.8
page = parse_man(os.path.join(man_dir, "fragctl.8"))
check_common("fragctl.8", page, os.path.join(work, "fragctl.8.txt"))
if tp_opts(page, "OPTIONS") != set(tree[()]["options"]):
    err(f"fragctl.8 OPTIONS documents {sorted(tp_opts(page, 'OPTIONS'))}, "
        f"fragctl --help has {sorted(tree[()]['options'])}")
documented = {tuple(s.split()) for s in page["ss"]}
for p in leaves:
    if p not in documented:
        err(f"fragctl.8 COMMANDS has no '.SS {' '.join(p)}'")
for p in sorted(documented):
    if p not in tree or p not in leaves:
        err(f"fragctl.8 documents command '{' '.join(p)}', which fragctl --help does not list")
        continue
    want = set(tree[p]["options"]) - {"-h", "--help"}
    if tp_opts(page, " ".join(p)) != want:
        err(f"fragctl.8 '{' '.join(p)}' documents {sorted(tp_opts(page, ' '.join(p)))}, "
            f"'fragctl {' '.join(p)} --help' has {sorted(want)}")
    body = " ".join(page["ss"][" ".join(p)])
    for pos in tree[p]["positionals"]:
        if pos not in body:
            err(f"fragctl.8 '{' '.join(p)}' does not explain its argument {pos}")
# SYNOPSIS: one block per command, with its options and arguments.
seen = set()
for block in page["synopsis"]:
    words = " ".join(block[1:]).replace("[", " ").replace("]", " ").replace("|", " ").split()
    cmd = tuple(w for w in words if re.fullmatch(r"[a-z]+", w))
    opts = {w for w in words if w.startswith("-")}
    if not cmd:
        if opts != {"--help", "--version"}:
            err(f"fragctl.8 SYNOPSIS block without a command lists {sorted(opts)}")
        continue
    if cmd not in tree or cmd not in leaves:
        err(f"fragctl.8 SYNOPSIS names '{' '.join(cmd)}', not a fragctl command")
        continue
    seen.add(cmd)
    want = set(o for o in tree[cmd]["options"] if o.startswith("--")) - {"--help"}
    if opts - {"--socket"} != want:
        err(f"fragctl.8 SYNOPSIS of '{' '.join(cmd)}' shows {sorted(opts - {'--socket'})}, fragctl has {sorted(want)}")
    for pos in tree[cmd]["positionals"]:
        if pos not in words:
            err(f"fragctl.8 SYNOPSIS of '{' '.join(cmd)}' lacks {pos}")
for p in set(leaves) - seen:
    err(f"fragctl.8 SYNOPSIS has no line for '{' '.join(p)}'")
# Every option mentioned anywhere outside the examples exists.
for sec, lines in page["sections"].items():
    if sec == "EXAMPLES":
        continue
    for o in OPT_RE.findall(" ".join(lines)):
        if o not in all_fragctl_opts:
            err(f"fragctl.8 {sec} mentions {o}, which fragctl does not have")
# Examples: each fragctl command line parses (exit 2 is a usage error; without fragd others exit 1).
n_examples = 0
for line in page["examples"]:
    for part in re.split(r"&&|\|\||;|\|", line.split("#")[0]):
        argv = shlex.split(part)
        while argv and (argv[0] == "sudo" or re.fullmatch(r"\w+=\S*", argv[0])):
            argv.pop(0)
        if not argv or argv[0] != "fragctl":
            continue
        n_examples += 1
        r = run([FRAGCTL, *argv[1:]], cwd=work)
        if r.returncode == 2 or (r.returncode != 0 and not re.search(r"not running|cannot read|No such file", r.stderr)):
            err(f"fragctl.8 example '{part.strip()}' exits {r.returncode}: {r.stderr.strip()}")
if n_examples < 3:
    err(f"fragctl.8 EXAMPLES has {n_examples} fragctl command lines; want at least 3")

# fragd.8
fh = help_of(FRAGD, [])
page = parse_man(os.path.join(man_dir, "fragd.8"))
check_common("fragd.8", page, os.path.join(work, "fragd.8.txt"))
if tp_opts(page, "OPTIONS") != set(fh["options"]):
    err(f"fragd.8 OPTIONS documents {sorted(tp_opts(page, 'OPTIONS'))}, fragd --help has {sorted(fh['options'])}")
syn = {o for block in page["synopsis"] for o in OPT_RE.findall(" ".join(block))}
if syn != set(fh["options"]):
    err(f"fragd.8 SYNOPSIS shows {sorted(syn)}, fragd --help has {sorted(fh['options'])}")
for sec, lines in page["sections"].items():
    for o in OPT_RE.findall(" ".join(l for l in lines if sec != "EXAMPLES" or l.lstrip().startswith("fragd"))):
        if o not in fh["options"] and o not in all_fragctl_opts:
            err(f"fragd.8 {sec} mentions {o}, which neither fragd nor fragctl has")

# ---- DaemonSet --------------------------------------------------------------------------------
def check_daemonset():
    docs = [d for d in yaml.safe_load_all(open(daemonset)) if d]
    by_kind = {}
    for d in docs:
        by_kind.setdefault(d.get("kind"), []).append(d)
    missing = [k for k in ("Namespace", "ServiceAccount", "ConfigMap", "DaemonSet") if k not in by_kind]
    if missing:
        err(f"{daemonset}: no {', '.join(missing)}")
        return
    ds = by_kind["DaemonSet"][0]
    ns = ds["metadata"]["namespace"]
    for d in docs:
        if d["kind"] not in ("Namespace", "PriorityClass") and d["metadata"].get("namespace") != ns:  # cluster-scoped
            err(f"{daemonset}: {d['kind']} {d['metadata']['name']} is not in namespace {ns}")
    spec = ds["spec"]
    pod = spec["template"]["spec"]
    if spec.get("updateStrategy", {}).get("type") != "RollingUpdate":
        err("DaemonSet updateStrategy is not RollingUpdate")
    if spec["selector"]["matchLabels"].items() - spec["template"]["metadata"]["labels"].items():
        err("DaemonSet selector does not match its pod labels")
    # The kubelet counts the container's log against ephemeral-storage and keeps up to
    # containerLogMaxSize x containerLogMaxFiles of it (10Mi x 5 by default).
    (fc,) = [c for c in pod["containers"] if c["name"] == "fragd"]
    eph = fc.get("resources", {}).get("limits", {}).get("ephemeral-storage", "0")
    units = {"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30}
    eph_bytes = int(eph[:-2]) * units[eph[-2:]] if eph[-2:] in units else int(eph)
    if eph_bytes <= 50 << 20:
        err(f"fragd's ephemeral-storage limit {eph} does not hold the log the kubelet keeps by default "
            "(10Mi x 5): a long-lived act-mode pod would be evicted for its own log")
    if pod.get("hostPID"):
        err("pod sets hostPID: fragd (uid 0) could signal every root process of the node; it needs "
            "only its own pid namespace (BPF knows fragd by it)")
    if not any(t.get("operator") == "Exists" and "key" not in t for t in pod.get("tolerations", [])):
        err("pod does not tolerate every taint (operator: Exists without a key): it would miss tainted nodes")
    (c,) = [c for c in pod["containers"] if c["name"] == "fragd"]
    args = c.get("args", [])
    def flag(name):
        for i, a in enumerate(args):
            if a.startswith(name + "="):
                return a.split("=", 1)[1]
            if a == name and i + 1 < len(args):
                return args[i + 1]
        return None
    caps = set(c.get("securityContext", {}).get("capabilities", {}).get("add", []))
    if caps != {"BPF", "PERFMON", "SYS_ADMIN", "SYSLOG"}:
        err(f"container adds capabilities {sorted(caps)}; fragd needs BPF, PERFMON, SYS_ADMIN, SYSLOG and no more")
    if c.get("securityContext", {}).get("appArmorProfile", {}).get("type") != "RuntimeDefault":
        err("observe mode's container is not under the runtime's default AppArmor profile")
    res = c.get("resources", {})
    for kind in ("requests", "limits"):
        if "memory" not in res.get(kind, {}):
            err(f"container has no memory {kind}")

    volumes = {v["name"]: v for v in pod["volumes"]}
    mounts = {}
    for m in c["volumeMounts"]:
        if m["name"] not in volumes:
            err(f"volumeMount {m['mountPath']} names volume {m['name']}, which the pod does not define")
            continue
        mounts[m["mountPath"]] = (volumes[m["name"]], bool(m.get("readOnly")))
    # Host paths fragd opens by fixed names must appear at the same path in the container.
    # Observe mode writes nothing on the node but /run/fragd; /sys is the container's read-only one.
    want_host = {"/sys/kernel/btf": True, "/sys/kernel/tracing": True, "/run/fragd": False}
    for path, ro in want_host.items():
        if path not in mounts or "hostPath" not in mounts[path][0]:
            err(f"container does not mount the host's {path} at {path}")
            continue
        v, mro = mounts[path]
        if v["hostPath"]["path"] != path:
            err(f"{path} in the container is the host's {v['hostPath']['path']}")
        if mro != ro:
            err(f"{path} is mounted {'read-only' if mro else 'read-write'}; want {'read-only' if ro else 'read-write'}")
    for path, (v, _) in mounts.items():
        if "hostPath" in v and path not in want_host:
            err(f"container mounts the host's {v['hostPath']['path']} at {path}, which this test does not expect")

    config = flag("--config") or flag("-c")
    sock = flag("--socket")
    listen = flag("--listen")
    if not config or not sock or not listen:
        err(f"fragd args {args} lack --config, --socket or --listen")
        return
    cdir, cfile = os.path.split(config)
    if cdir not in mounts or "configMap" not in mounts[cdir][0]:
        err(f"--config {config}: {cdir} is not a ConfigMap volume")
        return
    cm_name = mounts[cdir][0]["configMap"]["name"]
    cms = [d for d in by_kind["ConfigMap"] if d["metadata"]["name"] == cm_name]
    if not cms or cfile not in cms[0].get("data", {}):
        err(f"ConfigMap {cm_name} has no key {cfile}")
        return
    policy = os.path.join(work, "daemonset-policy.yaml")
    open(policy, "w").write(cms[0]["data"][cfile])
    # fragd parses the container's own arguments and checks the policy (no privileges needed).
    if os.path.basename((c.get("command") or ["?"])[0]) != "fragd":
        err(f"the container's command {c.get('command')} is not fragd")
    r = run([FRAGD, *args, "--check-config", policy])
    if r.returncode != 0:
        err(f"fragd with the DaemonSet's args rejects them or its policy: {r.stdout.strip()} {r.stderr.strip()}")
    else:
        print(f"  DaemonSet policy: {r.stdout.strip()}")
    if os.path.dirname(sock) != "/run/fragd":
        err(f"--socket {sock} is not on the /run/fragd host mount")
    port = listen.rsplit(":", 1)[1]
    ports = {str(p["containerPort"]): p.get("name") for p in c.get("ports", [])}
    ann = spec["template"]["metadata"].get("annotations", {})
    if ann.get("prometheus.io/scrape") != "true" or ann.get("prometheus.io/port") != port \
            or ann.get("prometheus.io/path") != "/metrics":
        err(f"scrape annotations {ann} do not say scrape true, port {port}, path /metrics")
    if port not in ports:
        err(f"--listen port {port} is not a containerPort ({sorted(ports)})")
    for probe, path in (("readinessProbe", "/readyz"), ("livenessProbe", "/healthz")):
        g = c.get(probe, {}).get("httpGet", {})
        if g.get("path") != path or str(g.get("port")) not in (port, ports.get(port)):
            err(f"{probe} is not an HTTP GET of {path} on port {port}")
    if pod.get("priorityClassName") not in {d["metadata"]["name"] for d in by_kind.get("PriorityClass", [])}:
        err(f"priorityClassName {pod.get('priorityClassName')} is not a PriorityClass of the manifest")
    # The act overlay: the two sysfs directories act mode writes, read-write, and nothing else.
    patch = yaml.safe_load(open(act_patch))
    pc = patch["spec"]["template"]["spec"]["containers"][0]
    pvols = {v["name"]: v["hostPath"]["path"] for v in patch["spec"]["template"]["spec"]["volumes"]}
    pmounts = {m["mountPath"]: (pvols.get(m["name"]), bool(m.get("readOnly"))) for m in pc["volumeMounts"]}
    want_act = {"/sys/devices/system/node": ("/sys/devices/system/node", False),
                "/sys/kernel/mm/hugepages": ("/sys/kernel/mm/hugepages", False)}
    if pc.get("name") != c["name"] or pmounts != want_act:
        err(f"the act overlay mounts {pmounts}, want {want_act} in container {c['name']}")
    if set(pc.get("securityContext", {})) != {"appArmorProfile"}:
        err(f"the act overlay changes {sorted(pc.get('securityContext', {}))} of the security context; want appArmorProfile alone")
    if pod.get("hostNetwork") and listen.startswith("127."):
        err("hostNetwork with a loopback --listen: Prometheus could not reach fragd")

try:
    check_daemonset()
except yaml.YAMLError as e:
    err(f"{daemonset} is not valid YAML: {e}")
except (KeyError, TypeError, ValueError, IndexError, AttributeError) as e:
    err(f"{daemonset}: an expected field is missing or has the wrong type ({type(e).__name__}: {e})")

if errors:
    print(f"{len(errors)} problem(s)", file=sys.stderr)
    sys.exit(1)
print("  help, completion, man pages and DaemonSet agree")
PY

log "PASS"
