// Implementation of tests/support/weft_test.hpp.
#include "support/weft_test.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

extern char** environ;

namespace wt {

double stress_scale() {
    if (const char* e = std::getenv("WEFT_STRESS_SCALE"); e != nullptr && *e != '\0') {
        char* end = nullptr;
        double v = std::strtod(e, &end);
        if (end != e && v > 0 && v <= 1) return v;
    }
    if (tsan) return 0.02;
    if (asan) return 0.3;
    return 1.0;
}

std::int64_t scaled(std::int64_t n, std::int64_t min) {
    auto v = static_cast<std::int64_t>(static_cast<double>(n) * stress_scale());
    return v < min ? min : v;
}

std::int64_t now_ns(clockid_t clock) {
    timespec ts;
    clock_gettime(clock, &ts);
    return std::int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

timespec deadline_in(std::chrono::nanoseconds d, clockid_t clock) {
    std::int64_t t = now_ns(clock) + d.count();
    return timespec{static_cast<time_t>(t / 1'000'000'000), static_cast<long>(t % 1'000'000'000)};
}

timespec realtime_past() { return deadline_in(-std::chrono::seconds(1), CLOCK_REALTIME); }

// --- watchdog ---------------------------------------------------------------------

struct watchdog::state {
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
    std::thread t;
};

watchdog::watchdog(std::chrono::seconds limit, std::string what) : s_(new state) {
    s_->t = std::thread([s = s_, limit, what = std::move(what)] {
        std::unique_lock<std::mutex> lk(s->m);
        if (!s->cv.wait_for(lk, limit, [s] { return s->done; })) {
            std::fprintf(stderr, "\n%s: still running after %lld s (hung?); aborting\n", what.c_str(),
                         static_cast<long long>(limit.count()));
            std::fflush(stderr);
            std::abort();
        }
    });
}

watchdog::~watchdog() {
    {
        std::lock_guard<std::mutex> g(s_->m);
        s_->done = true;
    }
    s_->cv.notify_all();
    s_->t.join();
    delete s_;
}

std::chrono::seconds default_test_limit() { return std::chrono::seconds(sanitized ? 90 : 60); }

namespace {
std::string current_test_name() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    if (info == nullptr) return "test";
    return std::string(info->test_suite_name()) + "." + info->name();
}
}  // namespace

// --- fixtures ----------------------------------------------------------------------

std::string rt_param_name(const ::testing::TestParamInfo<rt_param>& info) {
    return std::string(info.param.sched) + "_" + std::to_string(info.param.workers) + "w";
}

std::vector<rt_param> rt_params(std::vector<int> workers) {
    std::vector<rt_param> out;
    for (const char* s : {"fifo", "lifo", "dfs", "ws"})
        for (int w : workers) out.push_back(rt_param{s, w});
    return out;
}

void runtime_fixture::SetUp() {
    dog_ = new watchdog(default_test_limit(), current_test_name());
    ASSERT_EQ(weft_is_initialized(), 0) << "a previous test left the runtime running";
    weft_config_t cfg = config(GetParam().workers, GetParam().sched);
    ASSERT_EQ(weft_init(&cfg), 0);
}

void runtime_fixture::TearDown() {
    if (weft_is_initialized() != 0) {
        EXPECT_EQ(weft_finalize(), 0);
    }
    delete dog_;
    dog_ = nullptr;
}

void single_runtime_fixture::SetUp() {
    dog_ = new watchdog(default_test_limit(), current_test_name());
    ASSERT_EQ(weft_is_initialized(), 0) << "a previous test left the runtime running";
    ASSERT_EQ(weft_init(&cfg_), 0);
}

void single_runtime_fixture::TearDown() {
    if (weft_is_initialized() != 0) {
        EXPECT_EQ(weft_finalize(), 0);
    }
    delete dog_;
    dog_ = nullptr;
}

// --- environment ---------------------------------------------------------------------

scoped_env::scoped_env(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    if (value != nullptr)
        ::setenv(name, value, 1);
    else
        ::unsetenv(name);
}

scoped_env::~scoped_env() {
    if (had_)
        ::setenv(name_.c_str(), old_.c_str(), 1);
    else
        ::unsetenv(name_.c_str());
}

// --- child processes ---------------------------------------------------------------------

std::string self_exe() {
    char buf[4096];
    ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) return "/proc/self/exe";
    buf[n] = '\0';
    return buf;
}

child_result run_child(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                       std::chrono::milliseconds limit) {
    child_result r;
    // Build the environment before forking (no allocation in the child).
    std::vector<std::string> envs;
    for (char** e = environ; *e != nullptr; ++e) {
        std::string kv(*e);
        std::string name = kv.substr(0, kv.find('='));
        bool overridden = false;
        for (const auto& x : env)
            if (x.substr(0, x.find('=')) == name) overridden = true;
        if (!overridden) envs.push_back(kv);
    }
    for (const auto& x : env)
        if (x.find('=') != std::string::npos) envs.push_back(x);
    std::vector<char*> cenv, cargv;
    for (auto& s : envs) cenv.push_back(s.data());
    cenv.push_back(nullptr);
    std::vector<std::string> args = argv;
    for (auto& s : args) cargv.push_back(s.data());
    cargv.push_back(nullptr);

    int out_pipe[2], err_pipe[2];
    if (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0) {
        r.err = "pipe failed";
        return r;
    }
    std::int64_t start = now_ns();
    pid_t pid = ::fork();
    if (pid == 0) {
        ::dup2(out_pipe[1], 1);
        ::dup2(err_pipe[1], 2);
        ::execve(cargv[0], cargv.data(), cenv.data());
        ::_exit(127);
    }
    ::close(out_pipe[1]);
    ::close(err_pipe[1]);
    if (pid < 0) {
        ::close(out_pipe[0]);
        ::close(err_pipe[0]);
        r.err = "fork failed";
        return r;
    }
    std::int64_t deadline = start + std::chrono::duration_cast<std::chrono::nanoseconds>(limit).count();
    bool out_open = true, err_open = true, killed = false;
    char buf[4096];
    while (out_open || err_open) {
        std::int64_t left_ms = (deadline - now_ns()) / 1'000'000;
        if (left_ms <= 0 && !killed) {
            ::kill(pid, SIGKILL);
            killed = true;
            r.timed_out = true;
            r.seconds = static_cast<double>(now_ns() - start) / 1e9;
        }
        pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
        if (!out_open) fds[0].fd = -1;
        if (!err_open) fds[1].fd = -1;
        int n = ::poll(fds, 2, killed ? 1000 : static_cast<int>(left_ms > 100 ? 100 : left_ms + 1));
        if (n < 0 && errno != EINTR) break;
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || fds[i].revents == 0) continue;
            ssize_t k = ::read(fds[i].fd, buf, sizeof buf);
            if (k > 0)
                (i == 0 ? r.out : r.err).append(buf, static_cast<std::size_t>(k));
            else if (k == 0 || (k < 0 && errno != EINTR && errno != EAGAIN))
                (i == 0 ? out_open : err_open) = false;
        }
    }
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!killed) r.seconds = static_cast<double>(now_ns() - start) / 1e9;
    if (WIFEXITED(status)) {
        r.exited = true;
        r.exit_code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status) && !killed) {
        r.term_signal = WTERMSIG(status);
    }
    return r;
}

}  // namespace wt
