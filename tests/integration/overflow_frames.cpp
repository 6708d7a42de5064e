// The scenario "overflow_frame" (see overflow_frames.hpp) and the frame bodies
// built with weft's stack probes, like every test source.
//
// The child: six "neighbour" threads start first, each with a pattern on its
// stack, and wait on a semaphore; their stacks share a slab with the next
// one. Then the thread "big" (64 KiB stack) runs the frame the parent chose and
// is joined.
// weft must end the process with its overflow report, naming "big" and 65536
// bytes, before main gets past the join; if it does get past, the neighbours
// check their patterns and main prints "not reached" (and whether a neighbour
// was corrupted) and exits 0, which the parent test rejects.
#include "integration/overflow_frames.hpp"

#include <alloca.h>

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "weft/weft.h"

namespace weft_it {

#include "integration/overflow_frames_body.inc"

const frame_bodies probed_frames = {&array256k, &array1m, &alloca_frame, &yield256k};

namespace {

constexpr int kNeighbours = 6;
weft_sem_t g_release;
weft_sem_t g_ready;
int g_corrupted = 0;  // written by neighbours, read by main after joining them

// Runs on "big": announces itself, then enters the frame (whose prologue may
// already overflow, so the announcement comes first).
void* announce_then(void* body) {
    std::printf("id big %" PRIu64 "\n", weft_thread_id(weft_thread_self()));
    std::fflush(stdout);
    return reinterpret_cast<void* (*)(void*)>(body)(nullptr);
}

void* neighbour(void*) {
    char pattern[2048];
    for (std::size_t i = 0; i < sizeof pattern; ++i) pattern[i] = static_cast<char>(i * 7 + 1);
    weft_sem_post(&g_ready);
    weft_sem_wait(&g_release);
    for (std::size_t i = 0; i < sizeof pattern; ++i)
        if (pattern[i] != static_cast<char>(i * 7 + 1)) return reinterpret_cast<void*>(1);
    return nullptr;
}

}  // namespace

int overflow_frame() {
    const char* probes = std::getenv("WEFT_TEST_PROBES");
    const frame_bodies& b = probes != nullptr && std::strcmp(probes, "0") == 0 ? unprobed_frames : probed_frames;
    const char* frame = std::getenv("WEFT_TEST_FRAME");
    void* (*body)(void*) = nullptr;
    if (frame == nullptr) return 5;
    if (std::strcmp(frame, "array256k") == 0) body = b.array256k;
    if (std::strcmp(frame, "array1m") == 0) body = b.array1m;
    if (std::strcmp(frame, "alloca") == 0) body = b.alloca_;
    if (std::strcmp(frame, "yield256k") == 0) body = b.yield256k;
    if (body == nullptr) return 5;

    weft_sem_init(&g_release, 0);
    weft_sem_init(&g_ready, 0);
    weft_thread_t n[kNeighbours];
    for (auto& t : n)
        if (weft_thread_create(&t, nullptr, &neighbour, nullptr) != 0) return 4;
    for (int i = 0; i < kNeighbours; ++i) weft_sem_wait(&g_ready);

    weft_attr_t attr;
    weft_attr_init(&attr);
    weft_attr_setstacksize(&attr, 64 * 1024);
    weft_attr_setname(&attr, "big");
    weft_thread_t t;
    if (weft_thread_create(&t, &attr, &announce_then, reinterpret_cast<void*>(body)) != 0) return 4;
    weft_thread_join(t, nullptr);

    for (int i = 0; i < kNeighbours; ++i) weft_sem_post(&g_release);
    for (auto& x : n) {
        void* r = nullptr;
        weft_thread_join(x, &r);
        if (r != nullptr) ++g_corrupted;
    }
    std::printf("not reached: the big frame returned; %d of %d neighbours corrupted\n", g_corrupted, kNeighbours);
    return 0;
}

}  // namespace weft_it
