// The machine-wide core budget: segment creation and checks, the slot protocol, liveness, division.
// docs/design/budget.md explains each step; the comments here name the step and its memory order.
#include "adapt/budget.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "base/primitives.hpp"
#include "core/clock.hpp"
#include "core/tunables.hpp"

namespace weft::detail::adapt {

static_assert(atomic_ref<std::uint64_t>::is_always_lock_free, "slots are shared between processes");
static_assert(sizeof(budget_slot) == 16 && sizeof(budget_header) == 64, "the layout of version 1");

namespace {

atomic_ref<std::uint64_t> word(std::uint64_t& w) { return atomic_ref<std::uint64_t>(w); }

std::string errno_text(int e) { return std::strerror(e); }

// What /proc/<pid>/stat says of a process: whether it exists and has not exited, and its start time.
struct proc_identity {
    bool running = false;     // exists and is not a zombie
    std::uint64_t start = 0;  // field 22, clock ticks since boot
};

enum class proc_read {
    ok,       // *out is filled
    gone,     // no such process (ENOENT, ESRCH: it exited between a kill(pid, 0) and the read)
    unknown,  // anything else (out of file descriptors, an unreadable or unexpected file): no verdict
};

// Reads /proc/<pid>/stat ("self" for pid 0). The command name (field 2) may hold spaces and
// parentheses, so the fields after it are counted from the last ')'.
proc_read read_proc_stat(std::uint32_t pid, proc_identity* out) {
    char path[40];
    if (pid == 0) std::snprintf(path, sizeof path, "/proc/self/stat");
    else std::snprintf(path, sizeof path, "/proc/%u/stat", pid);
    int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno == ENOENT || errno == ESRCH ? proc_read::gone : proc_read::unknown;
    char buf[512];
    ssize_t n = ::read(fd, buf, sizeof buf - 1);
    int e = errno;
    ::close(fd);
    if (n < 0) return e == ESRCH ? proc_read::gone : proc_read::unknown;
    buf[n] = '\0';
    char* p = std::strrchr(buf, ')');
    if (p == nullptr || p[1] != ' ') return proc_read::unknown;
    char state = p[2];  // field 3
    p += 2;
    for (int field = 3; field < 22; ++field) {  // skip to field 22
        p = std::strchr(p, ' ');
        if (p == nullptr) return proc_read::unknown;
        ++p;
    }
    char* end = nullptr;
    unsigned long long start = std::strtoull(p, &end, 10);
    if (end == p) return proc_read::unknown;
    out->running = state != 'Z' && state != 'X' && state != 'x';
    out->start = start;
    return proc_read::ok;
}

// Whether the member named by `owner` is alive: its pid exists and (when `full`) is not a zombie and
// started at the recorded time. kill(pid, 0) is one cheap syscall; ESRCH means the pid is gone. EPERM
// means the pid exists but is another user's process: for a per-user segment that can only be a
// recycled pid, which the start-time read settles. A read that gives no verdict keeps the member:
// wrongly taking a live member's slot is worse than keeping a dead one until the next check.
bool member_alive(std::uint64_t owner, bool full) {
    auto pid = static_cast<std::uint32_t>(owner & 0xffffffffu);
    if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) return false;
    if (!full) return true;
    proc_identity id;
    switch (read_proc_stat(pid, &id)) {
    case proc_read::gone: return false;
    case proc_read::unknown: return true;
    case proc_read::ok: break;
    }
    return id.running && (id.start & 0xffffffffu) == owner >> 32;
}

bool pid_namespace(std::uint64_t* inode, std::uint64_t* dev) {
    struct stat st;
    if (::stat("/proc/self/ns/pid", &st) != 0) return false;
    *inode = st.st_ino;
    *dev = st.st_dev;
    return true;
}

void pause_briefly() {
    timespec ts = timespec_of(tun::budget_init_poll_ns);
    ::nanosleep(&ts, nullptr);
}

bool valid_name(const std::string& name) {
    return name.size() >= 2 && name.size() <= 251 && name[0] == '/' && name.find('/', 1) == std::string::npos;
}

// Opens (or creates and initialises) the segment and checks it. Returns the mapping or null with *why.
budget_segment* open_segment(const std::string& name, std::string* why) {
    const std::string shm_path = "/dev/shm" + name;
    std::uint64_t ns_inode = 0, ns_dev = 0;
    bool ns_known = pid_namespace(&ns_inode, &ns_dev);

    // Step 1, create: O_EXCL makes exactly one process the creator. It sizes the segment (zero-filled,
    // so every slot is free), fills the header and publishes the magic last, with release.
    int fd = ::shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd >= 0) {
        if (::ftruncate(fd, sizeof(budget_segment)) != 0) {
            int e = errno;
            ::close(fd);
            ::shm_unlink(name.c_str());
            *why = "core budget " + name + ": cannot size the new shared memory segment: " + errno_text(e);
            return nullptr;
        }
        void* p = ::mmap(nullptr, sizeof(budget_segment), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        int e = errno;
        ::close(fd);
        if (p == MAP_FAILED) {
            ::shm_unlink(name.c_str());
            *why = "core budget " + name + ": cannot map the new shared memory segment: " + errno_text(e);
            return nullptr;
        }
        auto* seg = static_cast<budget_segment*>(p);
        seg->header.version = budget_layout_version;
        seg->header.slot_count = budget_slot_count;
        seg->header.pid_ns_inode = ns_known ? ns_inode : 0;
        seg->header.pid_ns_dev = ns_known ? ns_dev : 0;
        word(seg->header.magic).store(budget_magic, memory_order_release);
        return seg;
    }
    if (errno != EEXIST) {
        int e = errno;
        *why = "core budget " + name + ": cannot create the shared memory segment: " + errno_text(e) +
               (e == ENOENT || e == ENOSYS ? " (is /dev/shm mounted?)" : "");
        return nullptr;
    }

    // Step 2, join: open the existing segment; it must be this user's and, once its creator has sized
    // it, exactly one budget_segment long.
    fd = ::shm_open(name.c_str(), O_RDWR | O_CLOEXEC, 0);
    if (fd < 0) {
        int e = errno;
        *why = "core budget " + name + ": cannot open the existing shared memory segment " + shm_path + ": " +
               errno_text(e) + (e == EACCES ? " (the budget is per user; it belongs to another user)" : "");
        return nullptr;
    }
    struct stat st;
    const std::int64_t t0 = monotonic_ns();
    auto waited_ns = [t0] { return monotonic_ns() - t0; };
    for (;;) {
        if (::fstat(fd, &st) != 0) {
            int e = errno;
            ::close(fd);
            *why = "core budget " + name + ": cannot stat " + shm_path + ": " + errno_text(e);
            return nullptr;
        }
        if (st.st_size != 0 || waited_ns() > tun::budget_init_wait_ns) break;
        pause_briefly();  // the creator is between its O_EXCL open and its ftruncate
    }
    if (st.st_uid != ::geteuid()) {
        ::close(fd);
        *why = "core budget " + name + ": " + shm_path + " belongs to uid " + std::to_string(st.st_uid) +
               ", not to this process's uid " + std::to_string(::geteuid()) + "; the budget is per user";
        return nullptr;
    }
    if (st.st_size != static_cast<off_t>(sizeof(budget_segment))) {
        ::close(fd);
        *why = "core budget " + name + ": " + shm_path + " is " + std::to_string(st.st_size) +
               " bytes, this weft's layout (version " + std::to_string(budget_layout_version) + ") is " +
               std::to_string(sizeof(budget_segment)) +
               (st.st_size == 0 ? " (its creator never sized it: it died or was stopped while creating it)"
                                : " (another weft version, or not a weft budget)") +
               "; remove " + shm_path + " when no weft process uses it";
        return nullptr;
    }
    void* p = ::mmap(nullptr, sizeof(budget_segment), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int e = errno;
    ::close(fd);
    if (p == MAP_FAILED) {
        *why = "core budget " + name + ": cannot map " + shm_path + ": " + errno_text(e);
        return nullptr;
    }
    auto* seg = static_cast<budget_segment*>(p);
    // Step 3, wait for the magic (acquire: the header fields written before it are visible after it).
    std::uint64_t magic;
    while ((magic = word(seg->header.magic).load(memory_order_acquire)) == 0 && waited_ns() <= tun::budget_init_wait_ns)
        pause_briefly();
    std::string bad;
    if (magic == 0)
        bad = "its creator never finished initialising it (it died or was stopped while creating it)";
    else if (magic != budget_magic)
        bad = "it is not a weft core budget (wrong magic number)";
    else if (seg->header.version != budget_layout_version || seg->header.slot_count != budget_slot_count)
        bad = "it has layout version " + std::to_string(seg->header.version) + " with " +
              std::to_string(seg->header.slot_count) + " slots, this weft reads version " +
              std::to_string(budget_layout_version) + " with " + std::to_string(budget_slot_count);
    else if (ns_known && seg->header.pid_ns_inode != 0 &&
             (seg->header.pid_ns_inode != ns_inode || seg->header.pid_ns_dev != ns_dev))
        bad = "it was created in another pid namespace, where this process cannot tell live members from "
              "dead ones";
    if (!bad.empty()) {
        ::munmap(p, sizeof(budget_segment));
        *why = "core budget " + name + ": " + shm_path + " cannot be used: " + bad + "; remove " + shm_path +
               " when no weft process uses it";
        return nullptr;
    }
    return seg;
}

}  // namespace

void divide_cores(std::span<const int> want, int cpus, std::span<int> share) {
    const int n = static_cast<int>(want.size());
    long total = 0;
    int most = 1;
    for (int w : want) {
        total += w;
        most = std::max(most, w);
    }
    if (n >= cpus || total <= cpus) {  // one each, or everyone's whole want
        for (int i = 0; i < n; ++i) share[i] = n >= cpus ? 1 : want[i];
        return;
    }
    // The highest level L with sum(min(want, L)) <= cpus: L = 1 fits (n < cpus), L = most does not
    // (total > cpus). Binary search keeps fits(lo) and !fits(hi).
    auto filled = [&](int level) {
        long s = 0;
        for (int w : want) s += std::min(w, level);
        return s;
    };
    int lo = 1, hi = most;
    while (hi - lo > 1) {
        int mid = lo + (hi - lo) / 2;
        (filled(mid) <= cpus ? lo : hi) = mid;
    }
    long left = cpus - filled(lo);  // fewer than the members wanting more than lo, as lo + 1 does not fit
    for (int i = 0; i < n; ++i) {
        share[i] = std::min(want[i], lo);
        if (want[i] > lo && left > 0) {
            ++share[i];
            --left;
        }
    }
}

std::unique_ptr<core_budget> core_budget::join(const std::string& name, int want, int cpus, std::string* why) {
    if (!valid_name(name)) {
        *why = "core budget '" + name + "': invalid name: expected '/' followed by 1 to 250 characters "
               "without another '/'";
        return nullptr;
    }
    if (want < 1 || cpus < 1) {
        *why = "core budget " + name + ": want=" + std::to_string(want) + " and cpus=" + std::to_string(cpus) +
               " are invalid: both must be at least 1";
        return nullptr;
    }
    budget_segment* seg = open_segment(name, why);
    if (seg == nullptr) return nullptr;
    std::unique_ptr<core_budget> b(new core_budget(name, seg, want, cpus));
    if (!b->claim_slot() && b->slot_ == -1) {
        // Every slot is held. Reclaim the dead (surveys until every member had its start-time check; the
        // first survey that frees a slot claims it) and try once more.
        for (int i = 0; i < int(budget_slot_count) && b->slot_ < 0; i += tun::budget_stat_checks)
            b->survey(nullptr, true);
        if (b->slot_ == -1) b->claim_slot();
    }
    if (b->slot_ == -2) {
        *why = "core budget " + name + ": cannot read /proc/self/stat, which the budget needs to tell a live "
               "member from a recycled pid";
        return nullptr;
    }
    if (b->slot_ < 0) {
        *why = "core budget " + name + ": all " + std::to_string(budget_slot_count) +
               " slots are held by live processes";
        return nullptr;
    }
    return b;
}

core_budget::core_budget(std::string name, budget_segment* seg, int want, int cpus)
    : name_(std::move(name)), seg_(seg), want_(std::min(want, budget_max_want)), cpus_(std::min(cpus, 0xffff)) {}

core_budget::~core_budget() {
    // Leave: only the process that claimed the slot frees it (a fork child's copy of this object does not).
    // The CAS fails only if a survivor already reclaimed the slot, wrongly thinking us dead.
    if (slot_ >= 0 && static_cast<std::uint32_t>(::getpid()) == pid_) {
        std::uint64_t mine = owner_;
        word(seg_->slots[slot_].owner).compare_exchange_strong(mine, 0, memory_order_release, memory_order_relaxed);
    }
    ::munmap(seg_, sizeof(budget_segment));
}

// Claims the lowest free slot for this process: a CAS from 0 to our identity word (acq_rel: the
// acquire orders our later demand store after the previous owner's last writes; the release publishes
// the claim). Then the demand, then the slot bound. Sets slot_ = -2 if /proc/self/stat is unreadable.
bool core_budget::claim_slot() {
    proc_identity self;
    if (read_proc_stat(0, &self) != proc_read::ok) {
        slot_ = -2;
        return false;
    }
    pid_ = static_cast<std::uint32_t>(::getpid());
    owner_ = budget_owner_word(pid_, self.start);
    for (std::uint32_t i = 0; i < budget_slot_count; ++i) {
        std::uint64_t expected = 0;
        if (word(seg_->slots[i].owner).load(memory_order_relaxed) != 0) continue;
        if (!word(seg_->slots[i].owner).compare_exchange_strong(expected, owner_, memory_order_acq_rel,
                                                                 memory_order_relaxed))
            continue;
        slot_ = static_cast<int>(i);
        publish_demand();
        auto bound = word(seg_->header.slot_bound);
        std::uint64_t b = bound.load(memory_order_relaxed);
        while (b < i + 1 && !bound.compare_exchange_weak(b, i + 1, memory_order_release, memory_order_relaxed)) {
        }
        return true;
    }
    slot_ = -1;
    return false;
}

// The demand word carries the tag of our identity, so a reader that pairs it with another owner of the
// slot (a claim or reclaim between its two loads) sees a mismatch and counts that member as wanting 1.
// Release: pairs with the reader's acquire load of the demand.
void core_budget::publish_demand() {
    word(seg_->slots[slot_].demand).store(budget_demand_word(owner_, want_, cpus_), memory_order_release);
}

void core_budget::set_want(int want) {
    if (want < 1) {
        std::fprintf(stderr, "weft: core budget %s: set_want(%d): a want must be at least 1 (a bug in weft)\n",
                     name_.c_str(), want);
        std::abort();
    }
    want_ = std::min(want, budget_max_want);
    if (slot_ >= 0) publish_demand();
}

// Reads the slots below the bound, reclaims dead members (kill(pid, 0) for all, and with `stat_checks`
// the /proc checks for the next ones in the round robin), and lists the live ones in slot order (into
// `out`, when given). Ours is re-claimed first if we lost it (a fork child, or a survivor that
// reclaimed it wrongly). Returns the number of live members.
int core_budget::survey(member* out, bool stat_checks) {
    bool forked = static_cast<std::uint32_t>(::getpid()) != pid_;
    if (forked || slot_ < 0 || word(seg_->slots[slot_].owner).load(memory_order_acquire) != owner_) {
        bool lost = !forked && slot_ >= 0;
        if (!claim_slot() && lost)
            std::fprintf(stderr,
                         "weft: core budget %s: this process's slot was reclaimed by another member and no slot "
                         "is free: it counts as one worker until one is\n",
                         name_.c_str());
    }
    std::uint64_t bound = std::min<std::uint64_t>(word(seg_->header.slot_bound).load(memory_order_acquire),
                                                  budget_slot_count);
    member live[budget_slot_count];
    int n = 0;
    for (std::uint32_t i = 0; i < bound; ++i) {
        std::uint64_t o = word(seg_->slots[i].owner).load(memory_order_acquire);
        if (o == 0) continue;
        if (static_cast<int>(i) != slot_ && !member_alive(o, false)) {
            // Reclaim: only the word we judged; a CAS that fails means the slot changed hands meanwhile.
            word(seg_->slots[i].owner).compare_exchange_strong(o, 0, memory_order_acq_rel, memory_order_relaxed);
            continue;
        }
        std::uint64_t d = word(seg_->slots[i].demand).load(memory_order_acquire);
        bool tagged = d >> 32 == budget_demand_tag(o);
        live[n++] = member{static_cast<int>(i), tagged ? std::max(1, int(d & 0xffff)) : 1,
                           tagged ? int(d >> 16 & 0xffff) : 0};
    }
    // Start-time checks (pid reuse, zombies) for up to tun::budget_stat_checks other members, round robin from
    // check_cursor_ in slot order.
    if (stat_checks && n > 0) {
        int checked = 0, first = 0;
        while (first < n && live[first].slot < check_cursor_) ++first;
        int last_checked = -1;
        for (int k = 0; k < n && checked < tun::budget_stat_checks; ++k) {
            int j = (first + k) % n;
            if (live[j].slot == slot_) continue;
            std::uint32_t i = static_cast<std::uint32_t>(live[j].slot);
            std::uint64_t o = word(seg_->slots[i].owner).load(memory_order_acquire);
            ++checked;
            last_checked = live[j].slot;
            if (o != 0 && !member_alive(o, true)) {
                word(seg_->slots[i].owner).compare_exchange_strong(o, 0, memory_order_acq_rel,
                                                                   memory_order_relaxed);
                live[j].slot = -1;  // dropped below
            }
        }
        if (last_checked >= 0) check_cursor_ = last_checked + 1;
        int kept = 0;
        for (int j = 0; j < n; ++j)
            if (live[j].slot >= 0) live[kept++] = live[j];
        n = kept;
    }
    if (out != nullptr) std::copy(live, live + n, out);
    return n;
}

int core_budget::share() {
    member live[budget_slot_count];
    int n = survey(live, true);
    if (slot_ < 0) return 1;
    int cpus = cpus_, own = -1;
    int want[budget_slot_count], shares[budget_slot_count];
    for (int j = 0; j < n; ++j) {
        cpus = std::max(cpus, live[j].cpus);
        want[j] = live[j].want;
        if (live[j].slot == slot_) {
            own = j;
            want[j] = want_;  // our own demand as we know it, not as we last published it
        }
    }
    if (own < 0) return 1;  // unreachable while we hold slot_: survey lists it
    divide_cores(std::span<const int>(want, n), cpus, std::span<int>(shares, n));
    return shares[own];
}

int core_budget::members() { return survey(nullptr, false); }

std::string default_budget_name() { return "/weft-budget-" + std::to_string(::geteuid()); }

}  // namespace weft::detail::adapt
