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
// Registration runs during static initialization (libweft.a is one
// prelinked object, so no registering file is dropped: CMakeLists.txt). The
// list heads are constant-initialized, so a registration finds its list ready
// whatever order the files' initializers run in. Lookups come later, from
// weft_init and weft_net_init, and only read. A registration that breaks the
// contract, or takes a name twice, is a bug in weft found at start-up: it
// stops the program with a message naming the part and what is wrong.
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

// One registration: a static object beside the definition (WEFT_REGISTER),
// or a test's scoped one, which unregisters when it goes out of scope.
template <class Def>
class registrar {
public:
    explicit registrar(const Def* def) : def_(def) { registry<Def>::add(this); }
    ~registrar() { registry<Def>::remove(this); }
    registrar(const registrar&) = delete;
    registrar& operator=(const registrar&) = delete;

private:
    friend class registry<Def>;
    const Def* def_;
    registrar* next_ = nullptr;
};

// The registered definitions of one kind, in alphabetical order of name (the
// order of static initialization, which the language leaves open, never
// shows in a message).
template <class Def>
class registry {
public:
    // The definition registered as `name`, in any case; nullptr if none is.
    static const Def* find(std::string_view name) {
        for (const registrar<Def>* r = head_; r != nullptr; r = r->next_)
            if (iequals(name, r->def_->name)) return r->def_;
        return nullptr;
    }

    // "a, b, c": every registered name, for error messages and listings.
    static std::string names() {
        std::string out;
        for (const registrar<Def>* r = head_; r != nullptr; r = r->next_) {
            if (!out.empty()) out += ", ";
            out += r->def_->name;
        }
        return out;
    }

    // f(const Def&) for each definition, in order.
    template <class F>
    static void for_each(F&& f) {
        for (const registrar<Def>* r = head_; r != nullptr; r = r->next_) f(*r->def_);
    }

private:
    friend class registrar<Def>;

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

    static void add(registrar<Def>* r) {
        const Def* def = r->def_;
        if (!well_formed_name(def->name)) refuse(def, "a name is required: lowercase letters, digits, '_' or '-'");
        if (def->description == nullptr) refuse(def, "a description is required");
        if (const char* what = contract_violation(*def); what != nullptr) refuse(def, what);
        if (find(def->name) != nullptr) refuse(def, "its name is registered already");
        registrar<Def>** at = &head_;
        while (*at != nullptr && std::string_view((*at)->def_->name) < def->name) at = &(*at)->next_;
        r->next_ = *at;
        *at = r;
    }

    static void remove(registrar<Def>* r) {
        for (registrar<Def>** at = &head_; *at != nullptr; at = &(*at)->next_)
            if (*at == r) {
                *at = r->next_;
                return;
            }
    }

    static inline constinit registrar<Def>* head_ = nullptr;
};

}  // namespace weft::detail

// Registers `def`, a `const Def` of namespace scope defined in the same file,
// at static initialization. Use it at namespace scope, once per definition.
#define WEFT_REGISTER(def) \
    static ::weft::detail::registrar<std::remove_cvref_t<decltype(def)>> weft_registrar_##def { &def }
