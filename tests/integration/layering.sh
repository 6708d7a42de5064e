#!/usr/bin/env bash
# The layers of src/ (docs/design/core.md, "Layers"): no file of a lower layer
# includes a header of a higher one. From the bottom:
#   base     src/arch/ and src/base/ (the primitives the core is built on:
#            spinlock and atomics, the asymmetric fence, the fork gate): they
#            include only base headers, and the core's leaf headers (a core/
#            header that includes no src/ header itself, such as
#            core/tunables.hpp or core/clock.hpp: it depends on nothing, so the
#            layers below may use it).
#   core     src/core/: includes base headers, its own, and the layers above
#            only through their seams: the scheduler policy
#            interface (sched/policy.hpp), the load probe interface
#            (adapt/probe.hpp) and the adaptive controller's entry point
#            (adapt/controller.hpp).
#   objects  src/sync/: the user-facing synchronisation objects (mutex, cond,
#            rwlock, semaphore, barrier, once, thread sleep), built on the
#            core: they include base, core and their own headers only.
#   probes   src/adapt/: the controller, the budget and the API know a load
#            probe only through adapt/probe.hpp: the helpers of a probe P
#            (adapt/P.hpp beside adapt/P_probe.cpp, as adapt/schedstat.hpp)
#            are included by P_probe.cpp and P.cpp only, so that a new probe is
#            its file and its registration.
# And one home per function: a function or variable that a core/ header
# declares out of line is defined in the .cpp of the header's name (core/X.hpp's
# in core/X.cpp), never in another core/ .cpp. A header that declares nothing
# out of line (core/clock.hpp, core/ult.hpp) needs no .cpp; what a core header
# declares for a higher layer to define (a counter of core/stats.hpp) is not
# defined in core/ at all and is not checked here.
# Every violation is listed as "file: includes header (rule)"; the exit status
# is the number of violations (capped at 1).
#
# Environment (optional): WEFT_SOURCE_DIR (default: two levels above this script).
set -euo pipefail

src="${WEFT_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}/src"
[[ -d "$src/core" ]] || { echo "layering: no src/core under $src (set WEFT_SOURCE_DIR)"; exit 1; }
cd "$src"

core_seams=(sched/policy.hpp adapt/probe.hpp adapt/controller.hpp)

# The src/ headers a file includes ("dir/name.hpp" includes only).
includes() { sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([a-z_]*\/[^"]*\)".*/\1/p' "$1"; }

is_base() { [[ "$1" == arch/* || "$1" == base/* ]]; }

# A leaf of the core: a header of core/ that includes no header of src/.
is_core_leaf() { [[ "$1" == core/*.hpp && -f "$1" ]] && [[ -z "$(includes "$1" | grep -v '^weft/' || true)" ]]; }

violations=0
report() {
    echo "$1: includes $2 ($3)"
    violations=$((violations + 1))
}

checked=0
while IFS= read -r f; do
    checked=$((checked + 1))
    while IFS= read -r h; do
        [[ -z "$h" || "$h" == weft/* ]] && continue
        if is_base "$f"; then
            is_base "$h" || is_core_leaf "$h" ||
                report "$f" "$h" "a base file (arch/, base/) includes only base headers and the core's leaves"
        elif [[ "$f" == core/* ]]; then
            if [[ "$h" == core/* ]] || is_base "$h"; then continue; fi
            seam=0
            for s in "${core_seams[@]}"; do [[ "$h" == "$s" ]] && seam=1; done
            ((seam)) || report "$f" "$h" "the core reaches the layers above only through their seams: ${core_seams[*]}"
        elif [[ "$f" == sync/* ]]; then
            [[ "$h" == sync/* || "$h" == core/* ]] || is_base "$h" ||
                report "$f" "$h" "a synchronisation object (sync/) includes only base, core and sync headers"
        fi
    done < <(includes "$f")
done < <(for d in arch base core sync; do [[ -d "$d" ]] && find "$d" -type f \( -name '*.hpp' -o -name '*.cpp' -o -name '*.h' \); done | sort)

# A probe's helpers are its own (src/adapt/).
if [[ -d adapt ]]; then
    for pf in adapt/*_probe.cpp; do
        [[ -f "$pf" ]] || continue
        p="${pf%_probe.cpp}"
        [[ -f "$p.hpp" ]] || continue
        for f in adapt/*.hpp adapt/*.cpp; do
            [[ "$f" == "$pf" || "$f" == "$p.cpp" || "$f" == "$p.hpp" ]] && continue
            if includes "$f" | grep -qx "$p.hpp"; then
                report "$f" "$p.hpp" "only the probe ($pf) uses its helpers: the rest of adapt/ knows probes through adapt/probe.hpp"
            fi
        done
    done
fi

# Prints "decl NAME" and "def NAME" for what a file declares or defines at
# namespace scope: statements starting in column 0 (the tree's style: namespace
# bodies are not indented, function bodies are).
names_awk='
function flush(   s, i, head, term, ext, n, p, pre) {
    s = stmt; stmt = ""
    if (s ~ /^(inline|template|constexpr|consteval|using|struct|class|enum|static|typedef|friend|namespace|union|#|\/\/|}|return|extern "C")/) return
    i = match(s, /[;{]/); if (i == 0) return
    head = substr(s, 1, i - 1); term = substr(s, i, 1)
    sub(/^(\[\[[^]]*\]\][ ]*)+/, "", head)
    ext = 0; if (head ~ /^extern /) { ext = 1; sub(/^extern /, "", head) }
    if (head ~ /^(inline|constexpr|static|template)/) return
    if (match(head, /^[^(]*\(\*[ ]*[A-Za-z_][A-Za-z0-9_]*\)/)) {
        match(head, /\(\*[ ]*[A-Za-z_][A-Za-z0-9_]*\)/)
        n = substr(head, RSTART + 2, RLENGTH - 3); gsub(/ /, "", n)
        print (ext ? "decl" : "def"), n; return
    }
    sub(/=.*/, "", head)
    p = index(head, "(")
    if (p == 0) {
        if (!match(head, /[ *&][A-Za-z_][A-Za-z0-9_]*[ ]*(\[[^]]*\])?[ ]*$/)) return
        n = substr(head, RSTART + 1); sub(/[ \[].*/, "", n)
        print (ext ? "decl" : "def"), n; return
    }
    pre = substr(head, 1, p - 1); sub(/[ ]*$/, "", pre)
    if (!match(pre, /[ *&][A-Za-z_][A-Za-z0-9_]*$/)) return
    n = substr(pre, RSTART + 1)
    if (n ~ /^operator/) return
    print ((term == "{" && !ext) ? "def" : "decl"), n
}
/^[ \t]*(\/\/|#|$)/ { next }
/^}/ { stmt = ""; next }
/^[^ \t]/ && stmt == "" { stmt = $0; if ($0 ~ /[;{]/) flush(); next }
stmt != "" { stmt = stmt " " $0; if ($0 ~ /[;{]/) flush(); next }

'

# core/X.hpp's out-of-line names defined in a core/ .cpp other than core/X.cpp.
defs=$(for c in core/*.cpp; do awk "$names_awk" "$c" | awk -v f="$c" '$1 == "def" { print $2, f }'; done)
for h in core/*.hpp; do
    own="${h%.hpp}.cpp"
    while read -r kind n; do
        [[ "$kind" == decl ]] || continue
        grep -qx "$n $own" <<<"$defs" && continue
        while read -r _ where; do
            [[ -n "$where" ]] || continue
            echo "$where: defines $n, which $h declares (one home per function: define it in $own, the .cpp of the header's name)"
            violations=$((violations + 1))
        done < <(grep "^$n " <<<"$defs" || true)
    done < <(awk "$names_awk" "$h" | sort -u)
done

if ((checked < 20)); then
    echo "layering: only $checked files found under $src/{arch,base,core,sync}: is WEFT_SOURCE_DIR right?"
    exit 1
fi
if ((violations > 0)); then
    echo "layering: $violations violation(s) of the layers, the seams or one home per function ($checked files checked)"
    exit 1
fi
echo "layering: $checked files of arch/, base/, core/, sync/ respect the layers; each core/ header's functions are defined in its .cpp; adapt/ knows its probes through adapt/probe.hpp"
