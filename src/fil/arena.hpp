// weft::detail::fil — the participant's arena for C fork descriptors.
#pragma once

#include <cstddef>

namespace weft::detail::fil {

// Bump allocator for C fork descriptors, used in LIFO order: a frame takes a
// mark when it starts and rewinds to it when its children have joined
// (fork_join.cpp, join_frame).
struct arena {
    struct chunk {
        chunk* next;
        std::size_t used;
        std::size_t cap;
        alignas(16) unsigned char bytes[1];
    };
    chunk* first = nullptr;  // chunks in the order they are filled, through next
    chunk* cur = nullptr;    // the chunk being filled; those after it are spare

    struct mark_t {
        chunk* c;
        std::size_t used;
    };
    mark_t mark() const { return {cur, cur != nullptr ? cur->used : 0}; }
    void* alloc(std::size_t n);  // null: out of memory
    void rewind(mark_t m);
    void release_all();
};

}  // namespace weft::detail::fil
