// weft::detail::fil — reduction variables (Lowenthal, Freeh & Andrews §2.2: Local(), fReduce).
//
// One copy per worker, each on its own cache line (no false sharing between
// workers updating their copies in every filament). weft_fil_reduce combines
// them in worker order; it is meant for an after function, when every worker
// waits at the barrier, or for code outside regions.
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>

#include "core/dispatch.hpp"
#include "core/runtime.hpp"
#include "fil/region.hpp"

struct weft_fil_red_s {
    int type;
    std::size_t size;
    int n;                // copies
    unsigned char* mem;   // n copies, 64 bytes apart
    unsigned char* at(int k) { return mem + static_cast<std::size_t>(k) * 64; }
};

namespace {

template <class T> void fold(int op, T& acc, T x) {
    switch (op) {
    case WEFT_FIL_SUM: acc = acc + x; break;
    case WEFT_FIL_PROD: acc = acc * x; break;
    case WEFT_FIL_MIN: acc = x < acc ? x : acc; break;
    case WEFT_FIL_MAX: acc = x > acc ? x : acc; break;
    case WEFT_FIL_LAND: acc = (acc != T(0) && x != T(0)) ? T(1) : T(0); break;
    case WEFT_FIL_LOR: acc = (acc != T(0) || x != T(0)) ? T(1) : T(0); break;
    default: break;
    }
}

template <class T> void reduce_as(weft_fil_red_s* r, int op, void* out) {
    T acc;
    std::memcpy(&acc, r->at(0), sizeof acc);
    if (op == WEFT_FIL_LAND || op == WEFT_FIL_LOR) acc = acc != T(0) ? T(1) : T(0);
    for (int k = 1; k < r->n; ++k) {
        T x;
        std::memcpy(&x, r->at(k), sizeof x);
        fold(op, acc, x);
    }
    std::memcpy(out, &acc, sizeof acc);
}

}  // namespace

using namespace weft::detail;

extern "C" {

WEFT_API int weft_fil_red_create(weft_fil_red_t* r, int type, size_t size, const void* init) {
    if (r == nullptr) return EINVAL;
    if (type == WEFT_FIL_INT64) size = sizeof(std::int64_t);
    else if (type == WEFT_FIL_DOUBLE) size = sizeof(double);
    else if (type != WEFT_FIL_BYTES || size == 0 || size > WEFT_FIL_RED_SIZE_MAX) return EINVAL;
    if (int rc = weft_fil_init(); rc != 0) return rc;
    auto* v = new (std::nothrow) weft_fil_red_s;
    if (v == nullptr) return ENOMEM;
    v->type = type;
    v->size = size;
    v->n = g_rt->nworkers;
    v->mem = static_cast<unsigned char*>(std::aligned_alloc(64, static_cast<std::size_t>(v->n) * 64));
    if (v->mem == nullptr) {
        delete v;
        return ENOMEM;
    }
    (void)weft_fil_red_set(v, init);
    *r = v;
    return 0;
}

WEFT_API int weft_fil_red_destroy(weft_fil_red_t r) {
    if (r == nullptr) return EINVAL;
    std::free(r->mem);
    delete r;
    return 0;
}

WEFT_API void* weft_fil_local(weft_fil_red_t r) {
    int k;
    if (weft_fil_self_t_* s = weft_fil_current_()) k = s->index;
    else if (worker* w = current_worker()) k = w->index;
    else k = 0;
    return r->at(k % r->n);
}

WEFT_API int weft_fil_reduce(weft_fil_red_t r, int op, void* out) {
    if (r == nullptr || out == nullptr || op < WEFT_FIL_SUM || op > WEFT_FIL_LOR) return EINVAL;
    if (r->type == WEFT_FIL_INT64) reduce_as<std::int64_t>(r, op, out);
    else if (r->type == WEFT_FIL_DOUBLE) reduce_as<double>(r, op, out);
    else return EINVAL;
    return 0;
}

WEFT_API int weft_fil_reduce_user(weft_fil_red_t r, void (*combine)(void* acc, const void* x, void* ctx), void* ctx,
                                  void* out) {
    if (r == nullptr || combine == nullptr || out == nullptr) return EINVAL;
    unsigned char acc[WEFT_FIL_RED_SIZE_MAX];
    std::memcpy(acc, r->at(0), r->size);
    for (int k = 1; k < r->n; ++k) combine(acc, r->at(k), ctx);
    std::memcpy(out, acc, r->size);
    return 0;
}

WEFT_API int weft_fil_red_set(weft_fil_red_t r, const void* value) {
    if (r == nullptr) return EINVAL;
    for (int k = 0; k < r->n; ++k) {
        if (value != nullptr) std::memcpy(r->at(k), value, r->size);
        else std::memset(r->at(k), 0, r->size);
    }
    return 0;
}

}  // extern "C"
