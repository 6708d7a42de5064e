// The frame bodies of overflow_frames.hpp built WITHOUT stack probes
// (tests/CMakeLists.txt adds -fno-stack-clash-protection to *_unprobed.cpp):
// code compiled without weft's flags.
#include <alloca.h>

#include <cstdint>
#include <cstdlib>

#include "integration/overflow_frames.hpp"
#include "weft/weft.h"

namespace weft_it {

#include "integration/overflow_frames_body.inc"

const frame_bodies unprobed_frames = {&array256k, &array1m, &alloca_frame, &yield256k};

}  // namespace weft_it
