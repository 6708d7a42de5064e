// weft-bench harness — aligned text tables and human-readable text.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace weft::bench {

// An aligned text table. Columns whose alignment is 'r' are right-aligned
// (numbers), 'l' left-aligned; by default the first column is left-aligned
// and the others right-aligned.
class table {
public:
    explicit table(std::vector<std::string> headers, std::string align = {});
    void add_row(std::vector<std::string> cells);
    void add_separator();
    void print(std::FILE* out) const;
    std::size_t rows() const noexcept { return rows_.size(); }

private:
    std::vector<std::string> headers_;
    std::string align_;
    std::vector<std::vector<std::string>> rows_;  // an empty row is a separator
};

// The strings of `v` with `sep` between them: join({"a", "b"}, ", ") is "a, b".
std::string join(std::vector<std::string> const& v, char const* sep);

// Human-readable numbers for tables.
std::string fmt(double v, int decimals);  // fixed decimals
std::string fmt_sig(double v);            // ~3-4 significant digits, thousands separated
std::string fmt_pct(double fraction);     // 0.034 -> "3.4%"
std::string fmt_ratio(double v);          // 12.3 -> "12.3x"

}  // namespace weft::bench
