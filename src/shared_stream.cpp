#include <streamlike/error.hpp>
#include <streamlike/shared_stream.hpp>

namespace streamlike {

void shared_stream::throw_empty(const char* what) {
  throw error(cudaErrorInvalidResourceHandle, std::string("shared_stream::") + what,
              "the shared_stream is empty (default-constructed or moved-from); expected one that holds a stream");
}

const detail::stream_facts& shared_stream::cached_facts(const char* what) const {
  if (block_ == nullptr) throw_empty(what);
  return block_->facts();
}

int shared_stream::device() const {
  const auto& facts = cached_facts("device");
  return facts.cached ? facts.device : view().device();
}

unsigned long long shared_stream::id() const {
  const auto& facts = cached_facts("id");
  return facts.cached ? facts.id : view().id();
}

unsigned int shared_stream::flags() const {
  const auto& facts = cached_facts("flags");
  return facts.cached ? facts.flags : view().flags();
}

int shared_stream::priority() const {
  const auto& facts = cached_facts("priority");
  return facts.cached ? facts.priority : view().priority();
}

} // namespace streamlike
