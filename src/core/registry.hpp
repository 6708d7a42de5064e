// weft::detail — the one way a part plugs into weft: scheduling policies
// (sched/policy.hpp), transports (net/transport.hpp) and load probes
// (adapt/probe.hpp) all register through it (docs/design/registry.md).
//
// A kind of part is a definition type Def: a plain struct with
//   static constexpr plug_kind kind{NOUN, CONTRACT};  // for messages
//   const char* name;          // as its variable spells it: lowercase letters,
//                              // digits, '_' and '-'; unique within the kind
//   const char* description;   // one line, for listings
// and whatever the kind needs (callbacks, a factory), plus a free function
//   const char* contract_violation(const Def&);
// found by argument-dependent lookup, that returns what the definition gets
// wrong against the kind's contract, or nullptr.
//
// A part is one file that defines one `const Def` and registers it with one
// line, as an Open MPI component declares itself to its framework:
//     WEFT_REGISTER(fifo_policy);
// Nothing else in the tree names it: the variable that chooses the part
// (WEFT_SCHED, WEFT_NET, WEFT_ADAPT), the list of valid values in its error
// message and the listings are read from the registry.
//
// Registration is a table the linker builds, not code that runs at start-up:
// WEFT_REGISTER puts a pointer to the part's linking function in the section
// `weft_registrations`, and the first lookup of any kind runs every entry of
// that section once (link_static_registrations, core/registry.cpp). Another
// library's constructor may reach weft before weft's own static initializers
// run (under libweft-pthread, GLib's constructor calls pthread_setspecific,
// which starts the runtime, which looks up WEFT_SCHED): the registry is whole
// at the first lookup whatever order the loader initializes libraries and
// files in. The nodes are constant-initialized, so linking them allocates
// nothing. A registration that breaks the contract, or takes a name twice, is
// a bug in weft found at the first lookup: it stops the program with a
// message naming the part and what is wrong.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <type_traits>

#include "core/env.hpp"

namespace weft::detail {

// How the registry's messages name a kind of part, and where its contract is.
struct plug_kind {
    const char* noun;      // "scheduling policy"
    const char* contract;  // "src/sched/policy.hpp"
};

template <class Def>
class registry;

// One entry of the section weft_registrations: links one node.
using registration_fn = void (*)();

// Runs every WEFT_REGISTER entry of the program (or shared library) once;
// every lookup and registration calls it first. Thread-safe.
void link_static_registrations();

// A definition's place in its kind's list. Constant-initialized (WEFT_REGISTER
// makes it constinit): another file's registration reads it while static
// initialization runs, which is well-defined only for an object that needs no
// initializer of its own (and is what ASan's strict init-order check asks).
template <class Def>
class registry_node {
public:
    constexpr explicit registry_node(const Def* def) : def_(def) {}
    registry_node(const registry_node&) = delete;
    registry_node& operator=(const registry_node&) = delete;

private:
    friend class registry<Def>;
    const Def* def_;
    registry_node* next_ = nullptr;
};

// A scoped registration, for tests: registered from construction to
// destruction.
template <class Def>
class registrar {
public:
    explicit registrar(const Def* def) : node_(def) {
        link_static_registrations();
        registry<Def>::add(&node_);
    }
    ~registrar() { registry<Def>::remove(&node_); }
    registrar(const registrar&) = delete;
    registrar& operator=(const registrar&) = delete;

private:
    registry_node<Def> node_;
};

// The registered definitions of one kind, in alphabetical order of name (the
// order of static initialization, which the language leaves open, never
// shows in a message).
template <class Def>
class registry {
public:
    // The definition registered as `name`, in any case; nullptr if none is.
    static const Def* find(std::string_view name) {
        link_static_registrations();
        for (const registry_node<Def>* n = head_; n != nullptr; n = n->next_)
            if (iequals(name, n->def_->name)) return n->def_;
        return nullptr;
    }

    // "a, b, c": every registered name, for error messages and listings.
    static std::string names() {
        link_static_registrations();
        std::string out;
        for (const registry_node<Def>* n = head_; n != nullptr; n = n->next_) {
            if (!out.empty()) out += ", ";
            out += n->def_->name;
        }
        return out;
    }

    // f(const Def&) for each definition, in order.
    template <class F>
    static void for_each(F&& f) {
        link_static_registrations();
        for (const registry_node<Def>* n = head_; n != nullptr; n = n->next_) f(*n->def_);
    }

    // Links n into the list (a WEFT_REGISTER entry, a registrar). Aborts if
    // its definition breaks the contract or takes a registered name.
    static void add(registry_node<Def>* n) {
        const Def* def = n->def_;
        if (!well_formed_name(def->name)) refuse(def, "a name is required: lowercase letters, digits, '_' or '-'");
        if (def->description == nullptr) refuse(def, "a description is required");
        if (const char* what = contract_violation(*def); what != nullptr) refuse(def, what);
        for (const registry_node<Def>* m = head_; m != nullptr; m = m->next_)
            if (iequals(def->name, m->def_->name)) refuse(def, "its name is registered already");
        registry_node<Def>** at = &head_;
        while (*at != nullptr && std::string_view((*at)->def_->name) < def->name) at = &(*at)->next_;
        n->next_ = *at;
        *at = n;
    }

    // Unlinks n (a registrar going out of scope).
    static void remove(registry_node<Def>* n) {
        for (registry_node<Def>** at = &head_; *at != nullptr; at = &(*at)->next_)
            if (*at == n) {
                *at = n->next_;
                return;
            }
    }

private:
    [[noreturn]] static void refuse(const Def* def, const char* what) {
        std::fprintf(stderr, "weft: %s '%s' is malformed: %s (see %s)\n", Def::kind.noun,
                     def->name != nullptr ? def->name : "(unnamed)", what, Def::kind.contract);
        std::abort();
    }

    static bool well_formed_name(const char* name) {
        if (name == nullptr || *name == '\0') return false;
        for (const char* c = name; *c != '\0'; ++c)
            if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_' || *c == '-')) return false;
        return true;
    }

    static inline constinit registry_node<Def>* head_ = nullptr;
};

}  // namespace weft::detail

// Registers `def`, a `const Def` of namespace scope defined in the same file:
// an entry of the section weft_registrations, run at the first lookup. Use it
// at namespace scope, once per definition.
#if defined(__has_attribute) && __has_attribute(retain)
#define WEFT_REGISTRATION_ENTRY [[gnu::used, gnu::retain, gnu::section("weft_registrations")]]
#else
#define WEFT_REGISTRATION_ENTRY [[gnu::used, gnu::section("weft_registrations")]]
#endif
#define WEFT_REGISTER(def)                                                                                    \
    static constinit ::weft::detail::registry_node<std::remove_cvref_t<decltype(def)>> weft_node_##def{&def}; \
    static void weft_link_##def() {                                                                           \
        ::weft::detail::registry<std::remove_cvref_t<decltype(def)>>::add(&weft_node_##def);                  \
    }                                                                                                         \
    WEFT_REGISTRATION_ENTRY static ::weft::detail::registration_fn weft_registration_##def = &weft_link_##def
