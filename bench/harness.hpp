// weft-bench harness — what every experiment shares.
//
// weft-bench is a registry of experiments. An experiment is one file in bench/
// (bench/micro.cpp, bench/matmul.cpp, ...) that describes itself with an
// `experiment` value and registers it with a static `registrar`; adding an
// experiment therefore touches no other file (bench/CMakeLists.txt globs every
// bench/*.cpp and bench/*/*.cpp into the executable). See docs/bench.md,
// "Adding an experiment", for a complete example.
//
// This header includes every piece of the harness, one concept per file in
// bench/harness/:
//   - clock:       now_ns() on std::chrono::steady_clock, process_cpu_s() and
//                  process_cpu_ns() (the process's CPU time), busy_for_ns(),
//                  keep();
//   - stats:       summarize(), median() -> median, min, max, p10, p90 and the spread,
//                  defined as (p90 - p10) / median (linear interpolation
//                  between order statistics, as numpy's default percentile);
//   - json:        json_object (a tiny JSON writer with proper escaping);
//   - table:       aligned text tables, fmt*() and join();
//   - experiment:  experiment, registrar, and the context a run gets, whose
//                  emit() writes one JSON object per line (JSONL) on stdout
//                  under --json and appends it to the file named by --jsonl;
//   - options:     option_spec + parse_options() with validation; errors name
//                  the bad option or value and list what is valid (exit 2);
//   - cpus:        allowed_cpus(), pin_current_thread(), confine_to_cpus(),
//                  affinity_guard;
//   - child:       spawn_piped() (a child whose stdout we read), wait_child(),
//                  run_piped();
//   - target:      emit_target(), a figure against its bound;
//   - failure:     check(), die();
//   - provenance:  add_provenance(), source_commit(), build_warning();
//   - locate:      self_exe(), find_report_script().
//
// The harness is plain C++20 and uses nothing of weft: it can be compiled and
// tested without the runtime.
#pragma once

#include "harness/child.hpp"
#include "harness/clock.hpp"
#include "harness/cpus.hpp"
#include "harness/experiment.hpp"
#include "harness/failure.hpp"
#include "harness/json.hpp"
#include "harness/locate.hpp"
#include "harness/options.hpp"
#include "harness/provenance.hpp"
#include "harness/stats.hpp"
#include "harness/table.hpp"
#include "harness/target.hpp"
