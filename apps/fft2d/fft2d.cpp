// fft2d: the three versions and the registration (apps/fft2d/fft2d.hpp).
#include "apps/fft2d/fft2d.hpp"

#include <cstddef>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "apps/app.hpp"
#include "apps/coarse.hpp"
#include "apps/fft2d/fft2d_instance.hpp"
#include "weft/filament.hpp"

namespace weft::apps::fft2d {

void serial(const plan& p, cplx* a) {
    const std::size_t n = p.n;
    for (int pass = 0; pass < 2; ++pass) {
        for (std::size_t i = 0; i < n; ++i) fft_row(p, a + i * n);
        transpose(a, n);
    }
}

void filaments(const plan& p, cplx* a) {
    const std::size_t n = p.n;
    int pass = 0;
    // One filament per row; the after function is the sequential transpose
    // between the two sweeps and after the second.
    weft::pool_set rows([&p, a, n](int i, int) { fft_row(p, a + static_cast<std::size_t>(i) * n); },
                        [&pass, a, n] {
                            transpose(a, n);
                            return ++pass == 2 ? weft::next::done : weft::next::continue_;
                        },
                        weft::order::forward);
    std::vector<weft::pool> pools = rows.add_pools();
    // Strips of consecutive rows (the paper's whichPool): each pool is one
    // dense range, run as a loop.
    const std::size_t w = pools.size();
    for (std::size_t k = 0; k < w; ++k)
        for (std::size_t i = k * n / w; i < (k + 1) * n / w; ++i) pools[k].add(static_cast<int>(i));
    weft::run(rows);
}

void coarse(const plan& p, cplx* a, int workers) {
    const std::size_t n = p.n, w = static_cast<std::size_t>(workers);
    struct transposer {
        cplx* a;
        std::size_t n;
        void operator()() noexcept { transpose(a, n); }
    };
    sweep_barrier sync(static_cast<std::ptrdiff_t>(workers), transposer{a, n});
    auto work = [&](std::size_t k) {
        for (int pass = 0; pass < 2; ++pass) {
            for (std::size_t i = k * n / w; i < (k + 1) * n / w; ++i) fft_row(p, a + i * n);
            sync.arrive_and_wait();  // the last to arrive transposes
        }
    };
    on_kernel_threads(w, work);
}

void problem::run_serial() { serial(p, data.data()); }
void problem::run_coarse(int workers) { coarse(p, data.data(), workers); }
void problem::run_filaments() { filaments(p, data.data()); }

std::string problem::compare(const instance& reference) const {
    const auto& ref = static_cast<const problem&>(reference);
    if (ref.n != n) return "sizes differ: " + std::to_string(n) + " and " + std::to_string(ref.n);
    for (std::size_t k = 0; k < n * n; ++k) {
        const cplx x = data[k], y = ref.data[k];
        if (x.re != y.re || x.im != y.im) {
            char buf[256];
            std::snprintf(buf, sizeof buf, "element (%zu, %zu) is %.17g%+.17gi, serial has %.17g%+.17gi", k / n, k % n,
                          x.re, x.im, y.re, y.im);
            return buf;
        }
    }
    return {};
}

namespace {
registrar const reg{app{
    .name = "fft2d",
    .description = "2-D FFT of an n x n complex array: a filament per row, sequential transposes",
    .bench_size = 8192,
    .demo_size = 4096,
    .test_size = 64,
    .size_meaning = "side n of the n x n array (a power of two)",
    .make = [](long size) -> std::unique_ptr<instance> {
        std::size_t n = 1;
        while (n < static_cast<std::size_t>(size)) n *= 2;
        if (n != static_cast<std::size_t>(size)) throw std::invalid_argument("fft2d: n must be a power of two");
        return std::make_unique<problem>(n);
    },
}};
}  // namespace

}  // namespace weft::apps::fft2d
