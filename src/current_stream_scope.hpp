// What a scoped_current_stream keeps while it is open (src/scoped_current_stream.cpp), and what the
// rule inside scopes reads of it (src/current_stream.cpp): per provider, what the scope expects it
// to answer and what it put back on exit; the chain of a thread's open scopes.
#ifndef STREAMLIKE_SRC_CURRENT_STREAM_SCOPE_HPP
#define STREAMLIKE_SRC_CURRENT_STREAM_SCOPE_HPP

#include "current_stream_own.hpp"
#include "current_stream_registry.hpp"

#include <array>
#include <cstddef>
#include <span>
#include <vector>

namespace streamlike::detail::current {

/// What a scope expects a provider to answer while nothing inside it changed that provider:
/// the scope's stream where the scope set it, the provider's answer when the scope began where it
/// could not (read-only), nothing where the provider gave no answer then (unavailable on the
/// thread, failed) or is streamlike's own slot.
struct expectation {
  void* stream = nullptr;
  bool known = false;
};

/// What a scope did to one provider of its list: what it expects of it, and, where it set it, the
/// provider's previous stream (get + set) or the token its enter gave.
struct scope_entry {
  expectation expected;
  void* previous_or_token = nullptr;
  bool set = false;   // restored when the scope ends
  bool token = false; // previous_or_token is enter's token
};

/// What scoped_current_stream saved: the list it set, one entry per provider of it, and the stream
/// it set, for the rule inside it. Linked into the entering thread's chain of open scopes. The
/// entries of the first few providers live inside it, so a scope allocates this object alone.
struct saved_streams {
  explicit saved_streams(const provider_list& of) : list(&of) {
    const std::size_t n = of.entries.size();
    if (n > inline_entries.size()) more_entries.resize(n);
    entries = n > inline_entries.size() ? std::span<scope_entry>(more_entries) : std::span(inline_entries).first(n);
  }
  saved_streams(const saved_streams&) = delete;
  saved_streams& operator=(const saved_streams&) = delete;

  const provider_list* list;
  std::span<scope_entry> entries; // one per entry of `list`, in its order
  void* stream = nullptr;         // the scope's stream
  int device = -1;
  std::ptrdiff_t own = -1;                 // streamlike's own provider in `list`
  saved_streams* outer = nullptr;          // the scope opened before it on this thread
  saved_streams* next_abandoned = nullptr; // in abandoned_scopes, once ended on another thread

private:
  std::array<scope_entry, 6> inline_entries{};
  std::vector<scope_entry> more_entries; // where the list is longer
};

/// The innermost open scope on `device` in `mine` (the calling thread's state), or nullptr.
inline const saved_streams* scope_on(const thread_streams& mine, int device) noexcept {
  for (const saved_streams* s = mine.innermost_scope; s != nullptr; s = s->outer)
    if (s->device == device) return s;
  return nullptr;
}

/// Keeps `saved`, a scope ended on another thread than the one that began it: not restored, not
/// freed (src/scoped_current_stream.cpp); says so on stderr and sets scope_ended_elsewhere.
void abandon(saved_streams* saved) noexcept;

/// Set on the calling thread when a scope it ended was begun on another thread, and so left open
/// there (never restored here, never freed: the other thread's chain still holds it); read by the C
/// entries that end scopes (streamlike_current_stream_restore, the registry's leave), which return
/// FAILED then. Cleared by whoever reads it.
inline thread_local bool scope_ended_elsewhere = false;

} // namespace streamlike::detail::current

#endif // STREAMLIKE_SRC_CURRENT_STREAM_SCOPE_HPP
