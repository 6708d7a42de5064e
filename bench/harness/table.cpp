// weft-bench harness — aligned text tables and human-readable text (harness/table.hpp).
#include "harness/table.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace weft::bench {

table::table(std::vector<std::string> headers, std::string align)
    : headers_(std::move(headers)), align_(std::move(align)) {
    if (align_.empty()) {
        align_.assign(headers_.size(), 'r');
        if (!align_.empty()) align_[0] = 'l';
    }
    align_.resize(headers_.size(), 'r');
}

void table::add_row(std::vector<std::string> cells) {
    cells.resize(headers_.size());
    rows_.push_back(std::move(cells));
}

void table::add_separator() { rows_.emplace_back(); }

namespace {
// Display width of UTF-8 text: counts code points, not bytes (so "±" is 1).
std::size_t display_width(std::string const& s) {
    std::size_t w = 0;
    for (char const c : s)
        if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++w;
    return w;
}
}  // namespace

void table::print(std::FILE* out) const {
    std::vector<std::size_t> width(headers_.size());
    for (std::size_t c = 0; c < headers_.size(); ++c) width[c] = display_width(headers_[c]);
    for (auto const& row : rows_)
        for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], display_width(row[c]));

    auto print_row = [&](std::vector<std::string> const& row) {
        std::string line;
        for (std::size_t c = 0; c < headers_.size(); ++c) {
            std::string const& cell = row[c];
            std::size_t const pad = width[c] - display_width(cell);
            if (c) line += "  ";
            if (align_[c] == 'r') line.append(pad, ' ');
            line += cell;
            if (align_[c] != 'r' && c + 1 < headers_.size()) line.append(pad, ' ');
        }
        while (!line.empty() && line.back() == ' ') line.pop_back();
        std::fprintf(out, "%s\n", line.c_str());
    };
    auto rule = [&] {
        std::size_t total = 0;
        for (std::size_t c = 0; c < width.size(); ++c) total += width[c] + (c ? 2 : 0);
        std::string line;
        for (std::size_t i = 0; i < total; ++i) line += "-";
        std::fprintf(out, "%s\n", line.c_str());
    };
    print_row(headers_);
    rule();
    for (auto const& row : rows_) {
        if (row.empty())
            rule();
        else
            print_row(row);
    }
}

std::string join(std::vector<std::string> const& v, char const* sep) {
    std::string out;
    for (std::size_t i = 0; i < v.size(); ++i) {
        if (i) out += sep;
        out += v[i];
    }
    return out;
}

std::string fmt(double v, int decimals) {
    if (!std::isfinite(v)) return "-";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

namespace {
std::string thousands(long long v) {
    std::string digits = std::to_string(v < 0 ? -v : v);
    std::string out;
    int n = 0;
    for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
        if (n && n % 3 == 0) out.push_back(',');
        out.push_back(*it);
        ++n;
    }
    if (v < 0) out.push_back('-');
    std::reverse(out.begin(), out.end());
    return out;
}
}  // namespace

std::string fmt_sig(double v) {
    if (!std::isfinite(v)) return "-";
    double const a = std::fabs(v);
    if (a >= 1000) return thousands(std::llround(v));
    if (a >= 100) return fmt(v, 0);
    if (a >= 10) return fmt(v, 1);
    if (a >= 1) return fmt(v, 2);
    if (a == 0) return "0";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", v);
    return buf;
}

std::string fmt_pct(double fraction) {
    if (!std::isfinite(fraction)) return "-";
    return fmt(fraction * 100, fraction < 0.1 ? 1 : 0) + "%";
}

std::string fmt_ratio(double v) {
    if (!std::isfinite(v)) return "-";
    return fmt_sig(v) + "x";
}

}  // namespace weft::bench
