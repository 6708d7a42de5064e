// The arithmetic of weft-bench pde's model (bench/pde_model.hpp): equations
// (1)-(3) of Felten & McNamee in the paper's own units (t = 1 per point), the
// three predictions the paper draws from them (§5), the four-thread
// generalisation reducing to eq. (2) at T = 2, and the overlap forms (one
// latency per exchange, and a message's CPU overhead o where it arrives while
// the node computes).
#include <gtest/gtest.h>

#include <cmath>

#include "../../bench/pde_model.hpp"

namespace {

using namespace weft::bench::pde;

// The paper's setting: 4 remote neighbours, edges of sqrt(n) values of one
// unit each, t = 1.
model_params paper(double alpha_r, double beta_r, double alpha_l, double beta_l, double c) {
    model_params m;
    m.t_point_s = 1;
    m.alpha_r_s = alpha_r;
    m.beta_r_s = beta_r;
    m.alpha_l_s = alpha_l;
    m.beta_l_s = beta_l;
    m.switch_s = c;
    return m;
}

model_shape one_thread(double n) {
    model_shape s;
    s.n = n;
    s.e = 4 * std::sqrt(n);
    s.remote = 4;
    s.remote_bytes = std::sqrt(n);
    return s;
}

model_shape two_threads(double n) {
    model_shape s;
    s.n = n;
    s.threads = 2;
    s.remote = 3;
    s.remote_bytes = std::sqrt(n / 2);
    s.local = 1;
    s.local_bytes = std::sqrt(n / 2);
    return s;
}

TEST(PdeModel, equations_as_printed) {
    model_params const m = paper(100, 2, 5, 0.5, 1);
    for (double n : {16.0, 400.0, 10000.0}) {
        double const r = std::sqrt(n), h = std::sqrt(n / 2);
        EXPECT_DOUBLE_EQ(t_blocking(m, one_thread(n)), n + 4 * 100 + 4 * 2 * r) << n;
        EXPECT_DOUBLE_EQ(t_threads(m, two_threads(n)), 2 * std::max(1 + n / 2 + 5 + 0.5 * h, 3 * 100 + 3 * 2 * h)) << n;
        EXPECT_DOUBLE_EQ(t_handcoded(m, one_thread(n)), std::max(n - 4 * r, 4 * 100 + 4 * 2 * r) + 4 * r) << n;
    }
}

// §5: "For small values of n the constant terms dominate, so the blocking
// program is better. For very large values of n, both methods tend toward n
// operations per update ... For intermediate values of n, though, the
// multithreaded program is faster".
TEST(PdeModel, the_papers_three_predictions) {
    model_params const m = paper(100, 1, 2, 0.1, 1);
    EXPECT_LT(t_blocking(m, one_thread(4)), t_threads(m, two_threads(4)));
    EXPECT_LT(t_threads(m, two_threads(1000)), t_blocking(m, one_thread(1000)));
    double const big = 1e8;
    EXPECT_NEAR(t_threads(m, two_threads(big)) / big, 1.0, 1e-3);
    EXPECT_NEAR(t_blocking(m, one_thread(big)) / big, 1.0, 1e-3);
    // The hand-coded program is never slower than the blocking one (where its
    // 4 sqrt(n) edge points are at most n: n >= 16).
    for (double n : {16.0, 100.0, 1000.0, 1e6}) EXPECT_LE(t_handcoded(m, one_thread(n)), t_blocking(m, one_thread(n)));
}

TEST(PdeModel, cpu_share_scales_the_computation_only) {
    model_params m = paper(100, 1, 2, 0.1, 0);
    double const alone = t_blocking(m, one_thread(1e4));
    m.share = 2;
    EXPECT_DOUBLE_EQ(t_blocking(m, one_thread(1e4)), alone + 1e4);
}

TEST(PdeModel, four_threads_hide_latency_behind_three_subphases) {
    model_params const m = paper(300, 0, 0, 0, 0);
    model_shape s;
    s.n = 400;
    s.threads = 4;
    s.remote = 2;
    // Latency-bound: 4 subphases of 2 * 300 / 3 each.
    EXPECT_DOUBLE_EQ(t_threads(m, s), 4 * (2 * 300.0 / 3));
    s.n = 4000;  // compute-bound: 4 subphases of n / 4
    EXPECT_DOUBLE_EQ(t_threads(m, s), 4000);
}

TEST(PdeModel, overlap_forms_charge_one_latency_per_exchange) {
    model_params const m = paper(300, 1, 0, 0, 0);
    model_shape const b = one_thread(10000);  // 4 messages of 100 units: latency 400 each
    EXPECT_DOUBLE_EQ(t_blocking(m, b), 10000 + 4 * 400);
    EXPECT_DOUBLE_EQ(t_blocking_overlap(m, b), 10000 + 400);
    EXPECT_DOUBLE_EQ(t_handcoded_overlap(m, b), 10000);  // the interior, 9600, covers the 400
    model_shape small = one_thread(100);                 // latency-bound: 310 in flight, then the 40 edge points
    EXPECT_DOUBLE_EQ(t_handcoded_overlap(m, small), 310 + 40);
    // Two threads: each computes n/2 and then waits one latency; the CPU does both halves.
    model_shape t = two_threads(200);  // remote messages of 10 units: latency 310; local ones free
    EXPECT_DOUBLE_EQ(t_threads_overlap(m, t), 100 + 310);
    t = two_threads(2000);
    EXPECT_DOUBLE_EQ(t_threads_overlap(m, t), 2000);
}

TEST(PdeModel, overhead_is_charged_where_messages_arrive_during_computation) {
    model_params m = paper(300, 0, 0, 0, 0);
    m.o_r_s = 50;
    m.o_beta_r_s = 1;  // a message of 100 units costs its receiver 150 of CPU
    model_shape const b = one_thread(10000);
    // blocking1 waits for its messages: their cost is the latency, o is not added.
    EXPECT_DOUBLE_EQ(t_blocking_overlap(m, b), 10000 + 300);
    // handcoded: compute-bound, the 4 messages' overhead on the CPU with the interior ...
    EXPECT_DOUBLE_EQ(t_handcoded_overlap(m, b), 9600 + 4 * 150 + 400);
    // ... latency-bound, the wait covers it.
    model_shape small = one_thread(100);
    small.remote_bytes = 0;
    EXPECT_DOUBLE_EQ(t_handcoded_overlap(m, small), 300 + 40);
    // The threads: the overhead of the busiest thread's remote messages is in each thread's CPU.
    model_shape t = two_threads(2000);
    t.remote_bytes = 0;
    EXPECT_DOUBLE_EQ(t_threads_overlap(m, t), 2 * (1000 + 3 * 50));
    // The paper's equations as printed have no overhead term.
    EXPECT_DOUBLE_EQ(t_handcoded(m, b), t_handcoded(paper(300, 0, 0, 0, 0), b));
}

// Nodes that share a CPU run in phase: their messages arrive together, the
// CPU runs their computations one after the other, and a node whose neighbour
// ran last waits for that neighbour's send. So a node's path carries the
// other f - 1 nodes' computation of the same phase.
TEST(PdeModel, nodes_sharing_a_cpu_run_in_phase_in_the_overlap_forms) {
    model_params m = paper(300, 0, 0, 0, 0);
    m.share = 2;  // two nodes per CPU: calc(n) = 2 t n
    model_shape b = one_thread(100);
    b.remote_bytes = 0;
    // Latency-bound: both nodes' computation, then the wait.
    EXPECT_DOUBLE_EQ(t_blocking_overlap(m, b), 2 * 100 + 300);
    EXPECT_DOUBLE_EQ(t_blocking(m, b), 2 * 100 + 4 * 300);  // as printed: f t n, and the 4 latencies added
    // handcoded: the other node's sweep, then this one's interior hidden in the wait, then its edge points.
    EXPECT_DOUBLE_EQ(t_handcoded_overlap(m, b), 100 + 300 + 40);
    model_shape t = two_threads(100);
    t.remote_bytes = t.local_bytes = 0;
    EXPECT_DOUBLE_EQ(t_threads_overlap(m, t), 2 * 50 + 300);  // each strip behind the other node's strip
    // Compute-bound: blocking1 still waits a latency after both nodes'
    // computation (nothing runs between its sends and its receives); the
    // others are the CPU doing both nodes' computation.
    b = one_thread(1000);
    b.remote_bytes = 0;
    EXPECT_DOUBLE_EQ(t_blocking_overlap(m, b), 2 * 1000 + 300);
    EXPECT_DOUBLE_EQ(t_handcoded_overlap(m, b), 2 * 1000);
    t = two_threads(1000);
    t.remote_bytes = t.local_bytes = 0;
    EXPECT_DOUBLE_EQ(t_threads_overlap(m, t), 2 * 2 * 500);
    // One node per CPU: the forms of a node alone.
    m.share = 1;
    EXPECT_DOUBLE_EQ(t_blocking_overlap(m, b), 1000 + 300);
    EXPECT_DOUBLE_EQ(t_handcoded_overlap(m, b), 1000);
    EXPECT_DOUBLE_EQ(t_threads_overlap(m, two_threads(100)), 50 + 300);
}

// The grain exchange (one message per thread each way per step, no local
// messages, f = 1) is the overlap form's program: o recovered from the step
// that form gives is the o it was given, in both branches.
TEST(PdeModel, overhead_at_grain_inverts_the_overlap_form_of_its_exchange) {
    for (int threads : {2, 4})
        for (double c : {10.0, 100.0, 1000.0})
            for (double o : {0.0, 7.0, 60.0}) {
                model_params m = paper(300, 0, 0, 0, 0);
                m.o_r_s = o;
                model_shape x;
                x.n = threads * c;  // t = 1: c per thread
                x.threads = threads;
                x.remote = 1;
                double const step = t_threads_overlap(m, x);
                EXPECT_NEAR(overhead_at_grain(step, c, 300, threads), o, 1e-9)
                    << threads << " threads, c " << c << ", o " << o << ", step " << step;
            }
    // One thread (handcoded's grain): step = max{c + o, L}.
    EXPECT_DOUBLE_EQ(overhead_at_grain(1000 + 40, 1000, 300, 1), 40);  // computation covers the latency
    // Computation below the latency: o is not in the step; only its excess
    // over the latency is charged, not the latency's noise over c.
    EXPECT_DOUBLE_EQ(overhead_at_grain(300, 100, 300, 1), 0);
    EXPECT_DOUBLE_EQ(overhead_at_grain(330, 100, 300, 1), 30);
    EXPECT_DOUBLE_EQ(overhead_at_grain(330, 100, 300, 1, 3), 10);
    // Worked figures, two threads: CPU-bound, step = 2 (c + o) = 2 (1000 + 25);
    // latency-bound, step = c + o + L = 10 + 5 + 300.
    EXPECT_DOUBLE_EQ(overhead_at_grain(2050, 1000, 300, 2), 25);
    EXPECT_DOUBLE_EQ(overhead_at_grain(315, 10, 300, 2), 5);
    // k messages per thread and step: o per message, in both branches and for one thread.
    for (int threads : {1, 2, 4})
        for (double c : {10.0, 1000.0}) {
            model_params m = paper(300, 0, 0, 0, 0);
            m.o_r_s = 20;
            model_shape x;
            x.n = threads * c;
            x.threads = threads;
            x.remote = 3;
            double const step = threads == 1 ? t_handcoded_overlap(m, x) : t_threads_overlap(m, x);
            double const want = threads == 1 && c + 3 * 20 <= 300 ? 0 : 20;  // latency-bound: unidentified, 0
            EXPECT_NEAR(overhead_at_grain(step, c, 300, threads, 3), want, 1e-9) << threads << " threads, c " << c;
        }
    // A disturbed measurement, a step shorter than its computation: 0, not below.
    EXPECT_DOUBLE_EQ(overhead_at_grain(900, 1000, 300, 2), 0);
    EXPECT_DOUBLE_EQ(overhead_at_grain(900, 1000, 300, 1), 0);
}

}  // namespace
