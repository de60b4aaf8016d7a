// Two shared libraries, each with its own hidden copy of streamlike (library.cpp; one built with
// -D_GLIBCXX_USE_CXX11_ABI=0), pass owning streams both ways through the C struct. The stream is
// destroyed exactly once, when the last reference drops in either library, also on a thread of
// its own. This program interposes the CUDA runtime calls streamlike makes on a stream (the
// libraries link the shared cudart, and a definition in the program comes first in the symbol
// lookup), so the streams are fake handles whose destructions are counted: no GPU needed. It
// makes no other CUDA call: the interposed functions are every call streamlike makes when it
// adopts, queries and destroys a stream (a real runtime must never see a fake handle: with a GPU
// present it could crash). Exit status 0 or 1, each failure printed.
#include <streamlike/c/owned_stream.h>

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>

// --- the interposed CUDA runtime --------------------------------------------------------------------

namespace {

constexpr int fake_count = 8;
char fake_streams[fake_count];          // the fake handles: addresses of these bytes
std::atomic<int> destroyed[fake_count]; // cudaStreamDestroy calls per fake handle
thread_local int current_device = 0;

int fake_index(cudaStream_t s) {
  const auto* p = reinterpret_cast<const char*>(s);
  return p >= fake_streams && p < fake_streams + fake_count ? static_cast<int>(p - fake_streams) : -1;
}

cudaStream_t fake(int i) { return reinterpret_cast<cudaStream_t>(fake_streams + i); }

} // namespace

extern "C" {
cudaError_t cudaStreamGetDevice(cudaStream_t s, int* device) {
  if (fake_index(s) < 0) return cudaErrorInvalidResourceHandle;
  *device = 1;
  return cudaSuccess;
}
cudaError_t cudaStreamGetId(cudaStream_t s, unsigned long long* id) {
  if (fake_index(s) < 0) return cudaErrorInvalidResourceHandle;
  *id = 1000 + static_cast<unsigned long long>(fake_index(s));
  return cudaSuccess;
}
cudaError_t cudaStreamGetFlags(cudaStream_t s, unsigned int* flags) {
  if (fake_index(s) < 0) return cudaErrorInvalidResourceHandle;
  *flags = cudaStreamNonBlocking;
  return cudaSuccess;
}
cudaError_t cudaStreamGetPriority(cudaStream_t s, int* priority) {
  if (fake_index(s) < 0) return cudaErrorInvalidResourceHandle;
  *priority = 0;
  return cudaSuccess;
}
// Asked before the stream's queries, which a capture would not survive: a fake stream never captures.
cudaError_t cudaStreamIsCapturing(cudaStream_t s, cudaStreamCaptureStatus* status) {
  if (fake_index(s) < 0) return cudaErrorInvalidResourceHandle;
  *status = cudaStreamCaptureStatusNone;
  return cudaSuccess;
}
cudaError_t cudaStreamDestroy(cudaStream_t s) {
  const int i = fake_index(s);
  if (i < 0) return cudaErrorInvalidResourceHandle;
  destroyed[i].fetch_add(1);
  return cudaSuccess;
}
cudaError_t cudaGetDevice(int* device) {
  *device = current_device;
  return cudaSuccess;
}
cudaError_t cudaSetDevice(int device) {
  current_device = device;
  return cudaSuccess;
}
// No driver entry points: streamlike then records no context id (and checks none).
cudaError_t cudaGetDriverEntryPointByVersion(const char*, void** address, unsigned int, unsigned long long,
                                             cudaDriverEntryPointQueryResult* status) {
  *address = nullptr;
  if (status != nullptr) *status = cudaDriverEntryPointSymbolNotFound;
  return cudaErrorSymbolNotFound;
}
}

// --- the two libraries ------------------------------------------------------------------------------

#define ABI_DECLARE(prefix)                                           \
  extern "C" streamlike_owned_stream* prefix##create(std::uintptr_t); \
  extern "C" void prefix##drop_created();                             \
  extern "C" int prefix##hold(streamlike_owned_stream*);              \
  extern "C" streamlike_owned_stream* prefix##export_held();          \
  extern "C" long prefix##held_use_count();                           \
  extern "C" int prefix##held_device();                               \
  extern "C" void prefix##release_held();                             \
  extern "C" void prefix##release_held_on_thread();                   \
  extern "C" const char* prefix##last_error();
ABI_DECLARE(abi_new_)
ABI_DECLARE(abi_old_)

namespace {

int failures = 0;

void check(bool ok, const char* what) {
  if (!ok) {
    std::printf("FAIL: %s\n", what);
    ++failures;
  }
}

void check_destroyed(int i, int times, const char* when) {
  if (destroyed[i].load() != times) {
    std::printf("FAIL: %s: fake stream %d destroyed %d times, expected %d\n", when, i, destroyed[i].load(), times);
    ++failures;
  }
}

} // namespace

int main() {
  // new -> old: the creator drops first, the receiver's drop destroys it.
  {
    streamlike_owned_stream* s = abi_new_create(std::uintptr_t(fake(0)));
    check(s != nullptr && s->major_version == STREAMLIKE_OWNED_STREAM_MAJOR_VERSION, "new library exports");
    check(s != nullptr && s->handle == fake(0) && s->device == 1, "the struct carries the handle and facts");
    check(abi_old_hold(s) == 0, "old library takes it");
    check(abi_old_held_device() == 1, "old library reads the device from the struct");
    abi_new_drop_created();
    check_destroyed(0, 0, "after the creator dropped its reference");
    abi_old_release_held();
    check_destroyed(0, 1, "after the receiver dropped the last reference");
  }
  // old -> new -> old: a round trip; the last drop happens in the other library, on a thread.
  {
    check(abi_old_hold(abi_old_create(std::uintptr_t(fake(1)))) == 0, "old library holds its own");
    abi_old_drop_created();
    check(abi_new_hold(abi_old_export_held()) == 0, "new library takes old's");
    check(abi_old_hold(abi_new_export_held()) == 0, "old library takes it back, wrapped by new's reference");
    check(abi_new_held_use_count() == 2, "new library's block: held, and the struct old library holds");
    abi_new_release_held();
    check_destroyed(1, 0, "while the old library still holds it");
    abi_old_release_held_on_thread();
    check_destroyed(1, 1, "after the last drop on a thread of the old library");
  }
  // Both libraries hold it, the creator drops last, from a thread.
  {
    streamlike_owned_stream* s = abi_new_create(std::uintptr_t(fake(2)));
    check(abi_new_hold(abi_new_create(std::uintptr_t(fake(3)))) == 0, "new library holds a second stream");
    abi_new_drop_created();
    check(abi_old_hold(s) == 0, "old library takes the first");
    abi_old_release_held_on_thread();
    check_destroyed(2, 1, "the first, dropped by the old library");
    check(abi_old_hold(abi_new_export_held()) == 0, "old library takes the second");
    abi_old_release_held();
    check_destroyed(3, 0, "the second, still held by the new library");
    abi_new_release_held_on_thread();
    check_destroyed(3, 1, "the second, dropped by the new library on a thread");
  }
  // A refusal in the other library releases the struct: an unknown major version.
  {
    streamlike_owned_stream* s = abi_new_create(std::uintptr_t(fake(4)));
    abi_new_drop_created();
    s->major_version = 2; // as a producer of a later major would write it
    check(abi_old_hold(s) == 1, "old library refuses major version 2");
    check(std::strstr(abi_old_last_error(), "unknown major version 2") != nullptr, abi_old_last_error());
    check_destroyed(4, 1, "the refused struct was released");
  }
  if (failures != 0) return 1;
  std::printf("ok: streams passed both ways, each destroyed exactly once\n");
  return 0;
}
