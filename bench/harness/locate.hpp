// weft-bench harness — locating the running executable and the report script.
#pragma once

#include <string>

namespace weft::bench {

// Absolute path of the running executable ("" if unknown).
std::string self_exe();
// bench/report/make_report.py, searched for as docs/bench.md says ("" if not
// found).
std::string find_report_script();

}  // namespace weft::bench
