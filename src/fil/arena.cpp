// weft::detail::fil — the participant's arena for C fork descriptors.
#include "fil/arena.hpp"

#include <cstdlib>

#include "core/tunables.hpp"

namespace weft::detail::fil {

void* arena::alloc(std::size_t n) {
    n = (n + 15) & ~std::size_t(15);
    if (cur == nullptr || cur->used + n > cur->cap) {
        chunk* next = cur != nullptr ? cur->next : first;
        if (next == nullptr || next->cap < n) {
            // A new chunk after cur; a too-small spare one follows it.
            std::size_t cap = n > tun::fil_arena_chunk ? n : tun::fil_arena_chunk;
            auto* c = static_cast<chunk*>(std::malloc(sizeof(chunk) + cap));
            if (c == nullptr) return nullptr;
            c->cap = cap;
            c->next = next;
            if (cur != nullptr)
                cur->next = c;
            else
                first = c;
            next = c;
        }
        cur = next;
        cur->used = 0;
    }
    void* p = cur->bytes + cur->used;
    cur->used += n;
    return p;
}

void arena::rewind(mark_t m) {
    // LIFO use: everything allocated after the mark is dead; the chunks after
    // m.c stay chained as spares.
    cur = m.c;
    if (cur != nullptr) cur->used = m.used;
}

void arena::release_all() {
    for (chunk* c = first; c != nullptr;) {
        chunk* n = c->next;
        std::free(c);
        c = n;
    }
    first = cur = nullptr;
}

}  // namespace weft::detail::fil
