// weft::detail::adapt — the machine-wide core budget: several weft processes of one user share the
// machine's CPUs through one small POSIX shared-memory segment, so that together they run about one
// active worker per core (the process control of Tucker & Gupta that Arora, Blumofe & Plaxton,
// "Thread scheduling for multiprogrammed multiprocessors", pair with work stealing; the whole-machine
// balance of Severance & Enbody, "Automatic Self-Allocating Threads (ASAT) on an SGI Challenge").
//
// Each member holds one slot naming it (pid and process start time) and its demand (want, cpus);
// every member divides the CPUs among the live members by the same max-min fair rule, and reclaims
// the slots of members that died. No lock, no daemon: a killed member holds nothing that anyone waits
// for. The design note is docs/design/budget.md (segment layout, slot protocol, division rule, crash
// and pid-reuse detection, costs, rejected designs).
//
// Assumptions: the members share one pid namespace (checked at join) and one user (the segment is
// created 0600 and its owner is checked at join).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace weft::detail::adapt {

// --- The segment layout, shared by every process that maps it -------------------------------------
// A process of another layout must refuse the segment, never misread it: any change here bumps
// budget_layout_version. Fields are plain integers accessed through atomic_ref (base/primitives.hpp),
// which is address-free for 64-bit words on every ISA weft supports.

inline constexpr std::uint64_t budget_magic = 0x31'67'64'62'74'66'65'77ull;  // "weftbdg1", little-endian
inline constexpr std::uint32_t budget_layout_version = 1;
// Slots per segment: the most processes of one user that can hold a share at once. 64 is a guess:
// far more weft jobs than one user runs at once on one machine, and still only 1 KiB of slots.
inline constexpr std::uint32_t budget_slot_count = 64;
// want and cpus are 16-bit fields of a slot's demand word; a larger want is stored as this.
inline constexpr int budget_max_want = 0xffff;

struct alignas(64) budget_header {
    std::uint64_t magic;         // budget_magic, stored last (release) by the creator; 0 before
    std::uint32_t version;       // budget_layout_version
    std::uint32_t slot_count;    // budget_slot_count
    std::uint64_t pid_ns_inode;  // the creator's /proc/self/ns/pid (st_ino); 0 if unknown
    std::uint64_t pid_ns_dev;    // ... and its st_dev
    std::uint64_t slot_bound;    // atomic: no slot at or above this index was ever claimed (only grows)
};

// One member. owner and demand are each one atomic word, written only as described in
// docs/design/budget.md, "The slot protocol".
struct budget_slot {
    std::uint64_t owner;   // 0 = free; else budget_owner_word(pid, start time)
    std::uint64_t demand;  // budget_demand_word(owner, want, cpus); valid only while its tag matches owner
};

struct budget_segment {
    budget_header header;
    budget_slot slots[budget_slot_count];  // 16 bytes each: 4 per cache line
};

// A member's identity: its pid (low 32 bits) and the low 32 bits of its start time (field 22 of
// /proc/<pid>/stat, clock ticks since boot). Never 0, since a pid is never 0.
constexpr std::uint64_t budget_owner_word(std::uint32_t pid, std::uint64_t start_ticks) {
    return (start_ticks & 0xffffffffull) << 32 | pid;
}
constexpr std::uint32_t budget_demand_tag(std::uint64_t owner) {
    return static_cast<std::uint32_t>(owner ^ (owner >> 32));
}
constexpr std::uint64_t budget_demand_word(std::uint64_t owner, int want, int cpus) {
    return std::uint64_t{budget_demand_tag(owner)} << 32 | std::uint64_t(cpus & 0xffff) << 16 |
           std::uint64_t(want & 0xffff);
}

// --- The division rule -----------------------------------------------------------------------------
// Max-min fair ("water-filling") division of `cpus` CPUs among members wanting want[i] (>= 1 each),
// given in slot order: share[i] = min(want[i], L), plus one for the first r members (in slot order)
// whose want exceeds L, where L is the highest level with sum(min(want, L)) <= cpus and r what that
// leaves over. Every share is at least 1, even when the members outnumber the CPUs. The shares sum to
// min(cpus, sum(want)) when there are at most cpus members, otherwise to the number of members.
// share.size() must equal want.size(); cpus >= 1.
void divide_cores(std::span<const int> want, int cpus, std::span<int> share);

// --- The budget --------------------------------------------------------------------------------------
// One membership of this process in a budget. Several objects in one process are several members (the
// tests use that). It belongs to the process that joined: in a child made by fork() the object does
// nothing on destruction, and share() there claims a slot of the child's own.
//
// Thread safety: one thread at a time per object (the adaptive controller's); any number of objects
// and processes at once.
class core_budget {
public:
    // Joins the machine-wide budget `name` (a POSIX shm name: "/" then up to 250 characters, no other
    // "/"), asking for `want` workers (>= 1; above budget_max_want counts as that) of `cpus` CPUs
    // (>= 1; the caller passes usable_cpus()). Creates the segment (mode 0600) if it does not exist.
    // Errors: returns null and sets *why to one sentence naming the segment and what is wrong (bad
    // argument, no /dev/shm, another user's or another pid namespace's segment, a segment of another
    // layout or size, one whose creator never finished it, no free slot); the caller then adapts
    // without a budget.
    static std::unique_ptr<core_budget> join(const std::string& name, int want, int cpus, std::string* why);
    ~core_budget();  // leaves: frees the slot at once

    core_budget(const core_budget&) = delete;
    core_budget& operator=(const core_budget&) = delete;

    // This process's share now, 1..want, by divide_cores over the live members (the CPUs being the
    // largest `cpus` any of them joined with). Reclaims the slots of dead members on the way: a member
    // whose pid is gone at once; one whose pid now names another process (start time differs), or a
    // zombie, within ceil((members - 1) / tun::budget_stat_checks) calls (core/tunables.hpp).
    int share();
    // Changes the demand (>= 1; above budget_max_want counts as that); others see it on their next
    // share(). A want below 1 is a bug in the caller: one stderr line, then abort.
    void set_want(int want);
    // The live members now, this one included. Reclaims the members whose pid is gone, as share() does,
    // but leaves the /proc checks to share(), so that a caller of both pays for them once.
    int members();

private:
    struct member {
        int slot;
        int want;
        int cpus;
    };
    core_budget(std::string name, budget_segment* seg, int want, int cpus);
    bool claim_slot();
    int survey(member* out, bool stat_checks);
    void publish_demand();

    std::string name_;
    budget_segment* seg_;
    int want_;
    int cpus_;
    std::uint32_t pid_ = 0;      // the process that claimed slot_
    std::uint64_t owner_ = 0;    // our identity word in slot_
    int slot_ = -1;              // our slot; -1 while we hold none, -2 if /proc/self/stat is unreadable
    int check_cursor_ = 0;       // where the next /proc start-time checks begin (slot index)
};

// "/weft-budget-<euid>": one budget per user.
std::string default_budget_name();

}  // namespace weft::detail::adapt
