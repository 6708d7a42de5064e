// The performance model of Felten & McNamee ("Improving the performance of
// message-passing applications by multithreading", §5), equations (1)-(3),
// in seconds per sweep, for the PDE solver's weft versions on one node's
// block (docs/design/pde.md maps every symbol of the paper to these).
//
//   T_b   (1) = f t n + k_R (alpha_R + beta_R lambda_R)                       blocking1
//   T_T   (2) = T max{ c + f t n / T + m_L (alpha_L + beta_L lambda_L),
//                      k_RT (alpha_R + beta_R lambda_RT) / (T - 1) }          threads2 (T = 2: eq. 2), threads4
//   T_opt (3) = max{ f t (n - e), k_R (alpha_R + beta_R lambda_R) } + f t e   handcoded
//
// t is a point's seconds on a node computing alone, f the nodes that share
// one CPU (max(1, nodes / CPUs); f t n is calc(n) measured with every node
// sweeping at once), k_R the block's remote neighbours and lambda_R the bytes of its
// longest edge; for T strips, k_RT and lambda_RT are the remote messages and
// longest remote edge of the busiest strip and m_L its same-node messages of
// lambda_L bytes. The paper models two threads only; for T threads the same
// argument (one thread computes while the others communicate, so a thread's
// remote latency is hidden behind the other T - 1 subphases) gives the
// division by T - 1, which is 1 in eq. 2. The thread switch c is measured
// inside alpha_L (a same-node message is a copy and a switch), so c = 0 here.
//
// Beside them, weft's model: the same equations as this machine's networks
// behave (the `_overlap` forms, reported as model_overlap_s; the paper's as
// printed are model_s; docs/design/pde.md, "weft's model"), in three ways:
// - the paper adds a node's k_R latencies, as messages that leave one
//   interface one after the other, and eq. (2) has the two threads
//   communicate one after the other. Where every message travels from its own
//   send, an exchange costs one latency, L = alpha_R + beta_R lambda_R, and T
//   threads take max{T cpu, cpu + L}: each thread's sweep is its computation
//   and then its wait, and the CPU does all T threads' computation;
// - the paper takes a remote message's whole latency as overlappable with
//   computation. A message that arrives while its receiver computes costs the
//   receiver's CPU, when it takes it, more than a message it was waiting for:
//   o + o_beta lambda per message and end (the overhead o of Culler et al.'s
//   LogP), measured as what an exchange adds to a computation that covers its
//   latency. The programs that compute between a send and its receive
//   (handcoded, and the threads, whose siblings compute) pay it on the CPU;
//   blocking1 waits for its messages and pays the latency. Over the injected
//   latency o is a few hundred ns against 50 us; over shared memory it is
//   most of a message's cost;
// - the f nodes that share a CPU run in phase, not staggered: every node's
//   sweep waits for its neighbours' previous sweep, so the nodes' messages
//   arrive together and the CPU then runs the f nodes' computations one
//   after the other; a node whose neighbour ran last on its CPU waits for
//   that neighbour's send. So each node's path carries the f - 1 other
//   nodes' computation of the same phase, and the CPU-bound branch is f times
//   one node's work:
//     T_b'   = f t n + L
//     T_T'   = max{ f T cpu,  f cpu + L },  cpu = c + t n / T + m_L (alpha_L + beta_L lambda_L) + k_RT o_T(n)
//     T_opt' = max{ f s,  (f - 1) s + max{ t (n - e) + k_R o_1(n), L } + t e },  s = t n + k_R o_1(n)
//   (o_T(n) is o + o_beta lambda for the raw MPI rows, whose o is the one
//   measured after 20 us; below for weft's rows.)
//   With f = 1 they are the first two ways alone.
//
// o is measured at the solver's own grain, for every block size and thread
// count (overhead_at_grain): a message's CPU cost is not one constant. Over
// shared memory, an exchange with 20 us of computation between send and
// receive took 2.0 us beyond the computation, more than a whole step of the
// exchange without it (1.2 us; raw MPI alike, 1.25 against 0.71 us), so that
// figure is not the message's handling alone; and a thread whose receive
// blocks while a sibling runs pays a switch and a wake-up that a lone thread
// polling in its receive does not. So o is what an exchange of T threads per
// node (thread i of one node with thread i of the other, per step as many
// messages each way as the version's busiest thread has remote edges, each
// of its longest edge's bytes) with the version's computation between send
// and receive (the relaxation of a strip of n / T points for T threads, of
// the n - e interior points for handcoded, T = 1; c its measured time) takes
// beyond what the overlap form charges with o = 0, per message.
#pragma once

#include <algorithm>

namespace weft::bench::pde {

struct model_params {
    double t_point_s = 0;                // t
    double share = 1;                    // f
    double alpha_r_s = 0, beta_r_s = 0;  // remote message: alpha_R s, beta_R s per byte
    double alpha_l_s = 0, beta_l_s = 0;  // same-node message: alpha_L s, beta_L s per byte
    double switch_s = 0;                 // c
    double o_r_s = 0, o_beta_r_s = 0;    // remote message's CPU at each end, taken while computing (LogP's o)
};

// One node's work and messages for a version with T threads per node.
struct model_shape {
    double n = 0;             // points of the node's block
    double e = 0;             // of them, next to a neighbour's edge (handcoded's second part)
    int threads = 1;          // T
    int remote = 0;           // remote messages of the busiest thread (k_R, or k_RT for T > 1)
    double remote_bytes = 0;  // its longest remote message (lambda_R, lambda_RT)
    int local = 0;            // its same-node messages (m_L; 0 for T = 1)
    double local_bytes = 0;   // lambda_L
};

inline double comm_remote(model_params const& m, model_shape const& s) {
    return s.remote * (m.alpha_r_s + m.beta_r_s * s.remote_bytes);
}

// Eq. (1): one blocking thread per node.
inline double t_blocking(model_params const& m, model_shape const& s) {
    return m.share * m.t_point_s * s.n + comm_remote(m, s);
}

// Eq. (2) for T = s.threads >= 2 threads per node.
inline double t_threads(model_params const& m, model_shape const& s) {
    double const cpu =
        m.switch_s + m.share * m.t_point_s * s.n / s.threads + s.local * (m.alpha_l_s + m.beta_l_s * s.local_bytes);
    return s.threads * std::max(cpu, comm_remote(m, s) / (s.threads - 1));
}

// Eq. (3): the hand-coded nonblocking single thread.
inline double t_handcoded(model_params const& m, model_shape const& s) {
    return std::max(m.share * m.t_point_s * (s.n - s.e), comm_remote(m, s)) + m.share * m.t_point_s * s.e;
}

// --- The overlap forms -------------------------------------------------------------
inline double latency_remote(model_params const& m, model_shape const& s) {
    return s.remote > 0 ? m.alpha_r_s + m.beta_r_s * s.remote_bytes : 0.0;
}

// The CPU of the busiest thread's remote messages when they arrive while it
// (or a sibling) computes.
inline double overhead_remote(model_params const& m, model_shape const& s) {
    return s.remote * (m.o_r_s + m.o_beta_r_s * s.remote_bytes);
}

// o from a grain exchange: `step_s`, the exchange's measured time per step,
// each of its `threads` threads per node sending k = `messages` messages
// (the version's busiest thread's remote messages), computing `compute_s`
// and receiving as many; `latency_s` the model's L at its message size. The
// exchange is the overlap form's program with no local messages and f = 1:
//   T = 1 (handcoded's):  step = max{c + k o, L}
//   T >= 2 (the threads'): step = max{T (c + k o), c + k o + L}
// o is the step's excess over that form with o = 0, per message charged:
//   T = 1:  o = (step - max{c, L}) / k; where c >= L, the form's inverse. Where
//           c < L, the step is the latency and o is not in it: any o up to
//           (L - c) / k gives the same time, and step - c would be the
//           latency's noise charged k times per node in the CPU branch.
//   T >= 2: o = the smaller of (step / T - c) / k and (step - c - L) / k, the
//           form's inverse (each branch grows with o: the one that reaches
//           step first).
// Never below 0 (a disturbed measurement).
inline double overhead_at_grain(double step_s, double compute_s, double latency_s, int threads, int messages = 1) {
    double const k = std::max(1, messages);
    double const ko = threads <= 1 ? step_s - std::max(compute_s, latency_s)
                                   : std::min(step_s / threads - compute_s, step_s - compute_s - latency_s);
    return std::max(0.0, ko / k);
}

// The f nodes on a CPU run in phase (above): a thread's path is its own
// computation and its wait, behind the same computation of the f - 1 others.
inline double t_blocking_overlap(model_params const& m, model_shape const& s) {
    return m.share * m.t_point_s * s.n + latency_remote(m, s);
}

inline double t_threads_overlap(model_params const& m, model_shape const& s) {
    double const cpu = m.switch_s + m.t_point_s * s.n / s.threads +
                       s.local * (m.alpha_l_s + m.beta_l_s * s.local_bytes) + overhead_remote(m, s);
    return std::max(m.share * s.threads * cpu, m.share * cpu + latency_remote(m, s));
}

inline double t_handcoded_overlap(model_params const& m, model_shape const& s) {
    double const o = overhead_remote(m, s);
    double const sweep = m.t_point_s * s.n + o;  // one node's CPU per sweep
    double const path =
        (m.share - 1) * sweep + std::max(m.t_point_s * (s.n - s.e) + o, latency_remote(m, s)) + m.t_point_s * s.e;
    return std::max(m.share * sweep, path);
}

}  // namespace weft::bench::pde
