#!/usr/bin/env bash
# The PDE solver's MPI versions (apps/pde) under mpiexec: on 2 ranks (2 x 1
# blocks) and 4 ranks (2 x 2 blocks; on a 2-core machine oversubscribed), for
# blocks of odd and even sides, mpi_plain, blocking1 and handcoded must each produce the
# serial program's result exactly (weft-bench pde --mpi-child gathers it on
# rank 0 and prints "check VERSION SIDE SWEEPS MAX_ABS_DIFF"). Then the child
# started without mpiexec must refuse: a job of 1 rank is not the 2 asked for.
#
# Environment (tests/CMakeLists.txt sets it): WEFT_BIN_DIR; WEFT_MPI_STATUS (on,
# off-by-option, off-not-found), WEFT_MPIEXEC and WEFT_MPI_FLAVOR (the launcher
# found with the MPI library, and whose it is).
# Skipped (exit 77) only when MPI is not installed, the build was configured
# with WEFT_WITH_MPI=OFF, or it is a sanitizer build that left MPI out (AUTO).
set -euo pipefail

status="${WEFT_MPI_STATUS:-off-not-found}"
case "$status" in
    on) ;;
    off-by-option)
        echo "skipped: this build was configured with -DWEFT_WITH_MPI=OFF"
        exit 77
        ;;
    off-sanitizer)
        echo "skipped: a sanitizer build leaves MPI out unless -DWEFT_WITH_MPI=ON (LeakSanitizer reports Open MPI's" \
             "own allocations)"
        exit 77
        ;;
    *)
        if command -v mpiexec >/dev/null 2>&1; then
            echo "FAIL: mpiexec is installed ($(command -v mpiexec)) but this build found no MPI when it was" \
                 "configured: configure it again (cmake --preset ...) so that WEFT_WITH_MPI=AUTO picks MPI up"
            exit 1
        fi
        echo "skipped: MPI is not installed (scripts/deps.sh build installs Open MPI)"
        exit 77
        ;;
esac

bench="${WEFT_BIN_DIR:?WEFT_BIN_DIR is not set}/weft-bench"
[[ -x "$bench" ]] || { echo "FAIL: $bench is not built"; exit 1; }
launch=("${WEFT_MPIEXEC:?WEFT_MPIEXEC is not set}")
if [[ "${WEFT_MPI_FLAVOR:-}" == openmpi ]]; then
    [[ $(id -u) -eq 0 ]] && launch+=(--allow-run-as-root)
    launch+=(--oversubscribe --mca pml ob1 --mca btl self,vader,tcp)
fi

failures=0
for ranks in 2 4; do
    out=$(timeout 100 "${launch[@]}" -n "$ranks" "$bench" pde --mpi-child --ranks "$ranks" --sides 5,16 \
          --versions mpi_plain,blocking1,handcoded --rounds 1 --work 3000 2>&1) || {
        echo "FAIL: $ranks ranks: the job failed: $out"
        failures=$((failures + 1))
        continue
    }
    checks=$(grep -c '^check ' <<<"$out" || true)
    exact=$(grep -cE '^check (mpi_plain|blocking1|handcoded) (5|16) [0-9]+ 0$' <<<"$out" || true)
    if [[ "$checks" -ne 6 || "$exact" -ne 6 ]]; then
        echo "FAIL: $ranks ranks: expected 6 exact checks (3 versions x 2 sides), got $exact of $checks:"
        echo "$out"
        failures=$((failures + 1))
    else
        echo "ok: $ranks ranks: mpi_plain and handcoded equal the serial result (sides 5 and 16)"
    fi
done

# Without mpiexec the child is a job of one rank: it must say so and fail.
if out=$(timeout 60 "$bench" pde --mpi-child --ranks 2 --sides 4 --rounds 1 2>&1); then
    echo "FAIL: a child started without mpiexec ran: $out"
    failures=$((failures + 1))
elif ! grep -q "this MPI job has 1 rank, not the 2 asked for" <<<"$out"; then
    echo "FAIL: a child started without mpiexec failed without naming the rank count: $out"
    failures=$((failures + 1))
else
    echo "ok: a child started without mpiexec refuses (1 rank, not 2)"
fi

[[ $failures -eq 0 ]]
