// Bodies of weft threads whose one frame is larger than their stack, compiled
// twice: with weft's stack probes (overflow_frames.cpp, built like every test)
// and without (overflow_frames_unprobed.cpp, -fno-stack-clash-protection, as
// code compiled without weft's flags would be). The scenario "overflow_frame"
// runs one of them on a 64 KiB stack above other live threads' stacks.
#pragma once

#include <cstddef>

namespace weft_it {

// What the frame is, by WEFT_TEST_FRAME:
//   array256k  a 256 KiB local array, written from its lowest byte up
//   array1m    a 1 MiB local array, written from its lowest byte up
//   alloca     alloca(WEFT_TEST_ALLOCA bytes, default 300,000), written from its lowest byte up
//   yield256k  a 256 KiB local array of which only the top byte is written
//              (inside the stack), then weft_thread_yield while the frame is live
struct frame_bodies {
    void* (*array256k)(void*);
    void* (*array1m)(void*);
    void* (*alloca_)(void*);
    void* (*yield256k)(void*);
};
extern const frame_bodies probed_frames;
extern const frame_bodies unprobed_frames;

// The scenario (registered in scenarios.cpp). WEFT_TEST_PROBES=0 picks the
// unprobed bodies.
int overflow_frame();

}  // namespace weft_it
