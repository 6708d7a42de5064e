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

if ((checked < 20)); then
    echo "layering: only $checked files found under $src/{arch,base,core,sync}: is WEFT_SOURCE_DIR right?"
    exit 1
fi
if ((violations > 0)); then
    echo "layering: $violations include(s) break the layers ($checked files checked)"
    exit 1
fi
echo "layering: $checked files of arch/, base/, core/, sync/ respect the layers"
