// examples/tour.cu: a tour of streamlike.
//
// One generic function, `run_on`, accepts any stream-like argument. It converts the argument
// once, at the API edge, with streamlike::get_stream, and passes a plain stream_view inward, as
// cuda::launch does. The tour calls it with every kind of stream that streamlike knows about and
// prints what each one became.
//
// With a GPU, run_on also does real work: a kernel writes a value per route into device memory on
// the stream that route produced; the host synchronizes each stream and checks every value.
// Without a GPU there are no streams to create, so every route wraps one of the default streams
// (named handles that need no device) and only the conversions run.
//
// Section 4 turns from views to owners: the ways into a shared_stream (create, a copy, adopt,
// export_stream of a moved unique_stream or of a std::shared_ptr, the default streams), a
// stream_pool, and streamlike::wait ordering real work on one stream after another. Those need
// a device; without one the tour shows the error streamlike reports instead.
//
// Exit status: 0 when every check passed (or there is no device), 1 otherwise.

#include <streamlike/streamlike.hpp>

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

// ------------------------------------------------------------------------------------------------
// 1. Stream types from three imaginary libraries, each opting in to streamlike in its own way.
//    None of them includes anything from streamlike except, for the first, the tag type.

namespace vendor_a {
// Opts in with tag_invoke, written as a hidden friend: found only by argument-dependent lookup,
// invisible to everything else. This route is tried first.
class work_queue {
public:
  explicit work_queue(cudaStream_t stream) noexcept : stream_(stream) {}

private:
  friend streamlike::stream_view tag_invoke(streamlike::get_stream_t, const work_queue& queue) noexcept {
    return queue.stream_;
  }
  cudaStream_t stream_;
};
} // namespace vendor_a

namespace vendor_b {
// CCCL style: a member get_stream(), the form cuda::get_stream (CCCL 3.1+) accepts. A type written
// for CCCL works with streamlike unchanged.
struct launch_env {
  [[nodiscard]] cuda::stream_ref get_stream() const noexcept { return stream; }
  cuda::stream_ref stream;
};
} // namespace vendor_b

namespace vendor_c {
// A member stream(), as rmm::device_buffer::stream() and many home-grown types have.
class device_buffer {
public:
  explicit device_buffer(cudaStream_t stream) noexcept : stream_(stream) {}
  [[nodiscard]] cudaStream_t stream() const noexcept { return stream_; }

private:
  cudaStream_t stream_;
};
} // namespace vendor_c

// Each of them is stream_like; an int is not (it needs a named decoder that says what 0 means).
static_assert(streamlike::stream_like<vendor_a::work_queue&>);
static_assert(streamlike::stream_like<vendor_b::launch_env&>);
static_assert(streamlike::stream_like<vendor_c::device_buffer&>);
static_assert(!streamlike::stream_like<int>);

// ------------------------------------------------------------------------------------------------
// 2. A library function: generic at the edge, one concrete type inside.

namespace mylib {

__global__ void fill(int* out, int n, int value) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) out[i] = value;
}

// The inside takes a stream_view: no templates, so it can live in a compiled library.
inline void fill_async(streamlike::stream_view stream, int* out, int n, int value) {
  fill<<<(n + 255) / 256, 256, 0, stream.get()>>>(out, n, value);
  if (const cudaError_t code = cudaGetLastError(); code != cudaSuccess) throw streamlike::error(code, "fill<<<>>>");
}

// The API edge: any stream-like argument, converted exactly once. resolve_default turns the
// ambiguous handle 0 into this translation unit's own default stream (cudaStreamLegacy, or
// cudaStreamPerThread under --default-stream per-thread), so code further in never has to guess.
// `out == nullptr` means there is no device: only the conversion runs.
template <streamlike::stream_like S>
streamlike::stream_view run_on(S&& s, int* out, int n, int value) {
  const streamlike::stream_view stream = streamlike::resolve_default(streamlike::get_stream(std::forward<S>(s)));
  if (out != nullptr) fill_async(stream, out, n, value);
  return stream;
}

} // namespace mylib

// ------------------------------------------------------------------------------------------------
// 3. The tour itself.

namespace {

constexpr int elements_per_route = 1024;
constexpr int max_routes = 32;    // slots in device memory
constexpr int streams_needed = 7; // handles the routes wrap

// What a handle is, in words.
struct named_stream {
  cudaStream_t handle;
  std::string name;
};

std::string describe(streamlike::stream_view view, const std::vector<named_stream>& created) {
  if (view == streamlike::stream_view::legacy_default()) return "cudaStreamLegacy: the legacy default stream";
  if (view == streamlike::stream_view::per_thread_default()) return "cudaStreamPerThread: this thread's default stream";
  for (const named_stream& s : created) {
    if (view == s.handle) return s.name;
  }
  return "an unknown stream";
}

struct route_result {
  std::string route;
  streamlike::stream_view view;
  streamlike::stream_view expected; // the stream this route must have produced
  int value;                        // what its kernel wrote
};

class tour {
public:
  // `streams`: the handles the routes wrap (created streams with a GPU, default streams without).
  // `device_out`: room for one slot per route, or nullptr without a GPU.
  tour(std::vector<named_stream> streams, int* device_out) : streams_(std::move(streams)), out_(device_out) {}

  // Runs one route: calls the generic function and records what the argument became.
  template <class S>
  void route(std::string name, S&& s, streamlike::stream_view expected) {
    const int index = static_cast<int>(results_.size());
    if (index >= max_routes) throw std::logic_error("tour: more routes than max_routes");
    const int value = 1000 + index;
    int* slot = out_ == nullptr ? nullptr : out_ + index * elements_per_route;
    const streamlike::stream_view view = mylib::run_on(std::forward<S>(s), slot, elements_per_route, value);
    std::printf("  %-44s -> stream_view %-16p (%s)\n", name.c_str(), static_cast<void*>(view.get()),
                describe(view, streams_).c_str());
    results_.push_back({std::move(name), view, expected, value});
  }

  // A decoder may say "no synchronization": then there is no stream and nothing to run.
  void no_stream(const std::string& name) {
    std::printf("  %-44s -> no stream (the producer asked for no synchronization)\n", name.c_str());
  }

  void fail(const std::string& what) {
    std::printf("FAIL: %s\n", what.c_str());
    ++failures_;
  }

  cudaStream_t stream(std::size_t i) const { return streams_.at(i).handle; }

  // Every route must have produced the stream it wraps.
  int check_conversions() const {
    int failures = failures_;
    for (const route_result& r : results_) {
      if (r.view != r.expected) {
        std::printf("FAIL: %s became %p, expected %p\n", r.route.c_str(), static_cast<void*>(r.view.get()),
                    static_cast<void*>(r.expected.get()));
        ++failures;
      }
    }
    return failures;
  }

  // Synchronizes the stream of every route, then checks that each kernel wrote its value.
  int check_gpu_work() const {
    int failures = 0;
    for (const route_result& r : results_) {
      if (const cudaError_t code = cudaStreamSynchronize(r.view); code != cudaSuccess) {
        std::printf("FAIL: cudaStreamSynchronize(%s): %s\n", r.route.c_str(), cudaGetErrorName(code));
        ++failures;
      }
    }
    std::vector<int> host(results_.size() * elements_per_route);
    // The streams are synchronized, so a plain copy sees everything they wrote.
    if (const cudaError_t code = cudaMemcpy(host.data(), out_, host.size() * sizeof(int), cudaMemcpyDeviceToHost);
        code != cudaSuccess) {
      std::printf("FAIL: cudaMemcpy: %s\n", cudaGetErrorName(code));
      return failures + 1;
    }
    for (std::size_t i = 0; i < results_.size(); ++i) {
      int wrong = 0;
      for (int j = 0; j < elements_per_route; ++j) wrong += host[i * elements_per_route + j] != results_[i].value;
      if (wrong != 0) {
        std::printf("FAIL: %s: %d of %d elements are not %d\n", results_[i].route.c_str(), wrong, elements_per_route,
                    results_[i].value);
        ++failures;
      }
    }
    return failures;
  }

  std::size_t size() const { return results_.size(); }

private:
  std::vector<named_stream> streams_;
  int* out_;
  std::vector<route_result> results_;
  int failures_ = 0;
};

std::string hex_of(std::int64_t value) {
  char text[32];
  std::snprintf(text, sizeof text, "%#llx", static_cast<unsigned long long>(value));
  return text;
}

// Every route of get_stream, and every named decoder, once.
void visit_every_route(tour& t) {
  using streamlike::stream_view;

  std::printf("handles (route 2 of get_stream):\n");
  t.route("raw cudaStream_t", t.stream(0), t.stream(0));
  t.route("cuda::stream_ref", cuda::stream_ref{t.stream(1)}, t.stream(1));
  t.route("stream_view", stream_view{t.stream(2)}, t.stream(2));
  t.route("raw cudaStream_t 0 (resolved in this TU)", cudaStream_t{}, streamlike::default_stream());

  std::printf("types that opt in:\n");
  vendor_a::work_queue queue{t.stream(3)};
  t.route("tag_invoke type (route 1)", queue, t.stream(3));
  vendor_b::launch_env env{t.stream(4)};
  t.route("member get_stream(), CCCL style (route 3)", env, t.stream(4));
  vendor_c::device_buffer buffer{t.stream(5)};
  t.route("member stream() (route 3)", buffer, t.stream(5));

  std::printf("default streams, by name:\n");
  t.route("stream_view::legacy_default()", stream_view::legacy_default(), stream_view::legacy_default());
  t.route("stream_view::per_thread_default()", stream_view::per_thread_default(), stream_view::per_thread_default());
  t.route("streamlike::default_stream() (this TU)", streamlike::default_stream(), streamlike::default_stream());

  std::printf("integers, through the decoder that names their convention:\n");
  // What a Python producer hands over: the stream's address as a plain integer.
  const auto address = static_cast<std::int64_t>(reinterpret_cast<std::intptr_t>(t.stream(6)));
  const std::string hex = hex_of(address);
  t.route("from_cuda_stream_protocol(0, " + hex + ")", streamlike::from_cuda_stream_protocol(0, address), t.stream(6));
  t.route("from_cuda_stream_protocol(0, 0) (CuPy null)", streamlike::from_cuda_stream_protocol(0, 0),
          stream_view::legacy_default());
  // The DLPack and __cuda_array_interface__ decoders return an optional: "no synchronization"
  // is not a stream. An optional is not stream_like, so unwrap it once it is known to hold one.
  if (const std::optional<stream_view> s = streamlike::from_dlpack_stream(address)) {
    t.route("from_dlpack_stream(" + hex + ")", *s, t.stream(6));
  }
  if (const std::optional<stream_view> s = streamlike::from_dlpack_stream(2)) {
    t.route("from_dlpack_stream(2)", *s, stream_view::per_thread_default());
  }
  // -1 asks for no synchronization: an empty optional, not a stream.
  if (streamlike::from_dlpack_stream(-1).has_value()) {
    t.fail("from_dlpack_stream(-1) returned a stream; expected none");
  } else {
    t.no_stream("from_dlpack_stream(-1)");
  }
}

} // namespace

// ------------------------------------------------------------------------------------------------
// 4. Owning streams. A view borrows a stream; these own one. shared_stream is the vocabulary type
//    for "keep this stream alive" (a copy is one atomic increment, the last reference destroys the
//    stream), unique_stream the move-only owner, stream_pool a round-robin set of shared_streams,
//    and streamlike::wait orders one stream after another (no event is created per call).

namespace mylib {

__global__ void count_mismatches(const int* in, int n, int expected, int* wrong) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    if (in[i] != expected) atomicAdd(wrong, 1);
  }
}

// A library object that keeps a stream for later takes shared ownership of whatever the caller
// hands in: anything export_stream accepts (a shared_stream, a moved-in owner, a std::shared_ptr
// to a stream) stays alive for as long as the object does.
class pipeline {
public:
  template <class S>
    requires streamlike::stream_exporter<S>
  explicit pipeline(S&& s) : stream_(streamlike::export_stream(std::forward<S>(s))) {}
  [[nodiscard]] const streamlike::shared_stream& stream() const noexcept { return stream_; }

private:
  streamlike::shared_stream stream_;
};

} // namespace mylib

namespace {

void check_cuda(cudaError_t code, const char* what) {
  if (code != cudaSuccess) throw streamlike::error(code, what);
}

void show(const char* what, const streamlike::shared_stream& s, const char* note = "") {
  std::printf("  %-44s -> %-16p use_count %ld%s\n", what, static_cast<void*>(s.get()), s.use_count(), note);
}

// Returns the number of failed checks.
int tour_ownership() {
  using streamlike::shared_stream;
  int failures = 0;
  const auto expect = [&failures](bool ok, const char* what) {
    if (!ok) {
      std::printf("FAIL: %s\n", what);
      ++failures;
    }
  };
  std::printf("\nowning streams:\n");

  // A new stream on the current device, destroyed with its last reference.
  const shared_stream created = shared_stream::create();
  show("shared_stream::create()", created);
  {
    const shared_stream copy = created; // one atomic increment: the same stream, shared
    show("  a copy of it", copy);
    expect(copy == created && created.use_count() == 2, "a copy shares the stream");
  }
  show("  the copy dropped", created);

  // A raw handle made elsewhere; the shared_stream destroys it with the last reference.
  cudaStream_t raw{};
  check_cuda(cudaStreamCreateWithFlags(&raw, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  show("shared_stream::adopt(cudaStream_t)", shared_stream::adopt(raw));

  // A move-only owner moved into a library object that keeps it: export_stream(std::move(owner))
  // inside. The same stream, now shared; no stream is created.
  streamlike::unique_stream owner = streamlike::unique_stream::create();
  const cudaStream_t owned = owner.get();
  const mylib::pipeline producer{std::move(owner)};
  show("export_stream(std::move(unique_stream))", producer.stream());
  expect(producer.stream().get() == owned && !owner, "export_stream moves the unique_stream's own stream in");

  // A stream held by a std::shared_ptr: the shared_stream keeps the pointer, so the stream lives
  // on after the caller's pointer is gone.
  auto pointer = std::make_shared<streamlike::unique_stream>(streamlike::unique_stream::create());
  const mylib::pipeline kept{pointer};
  pointer.reset();
  show("export_stream(std::shared_ptr<unique_stream>)", kept.stream());

  // The default streams: never destroyed, whoever drops the last reference.
  show("shared_stream::legacy_default()", shared_stream::legacy_default(), " (immortal: never destroyed)");

  // A pool: a fixed set of streams handed out round-robin, each a shared_stream that outlives
  // the pool if need be.
  streamlike::stream_pool pool{3};
  std::printf("  %-44s ->", "stream_pool{3}.get(), four times");
  for (int i = 0; i < 4; ++i) std::printf(" %p", static_cast<void*>(pool.get().get()));
  std::printf(" (round-robin)\n");
  const shared_stream consumer = pool.get();

  // Ordering: the producer fills a buffer; the consumer, a different stream, waits for the
  // producer and checks every element. Without the wait it could run before the fill ends.
  constexpr int n = 1 << 22;
  int* data = nullptr;
  int* wrong = nullptr;
  check_cuda(cudaMalloc(&data, n * sizeof(int)), "cudaMalloc");
  check_cuda(cudaMalloc(&wrong, sizeof(int)), "cudaMalloc");
  check_cuda(cudaMemset(wrong, 0, sizeof(int)), "cudaMemset");
  check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");

  mylib::run_on(producer.stream(), data, n, 7);  // the generic edge takes a shared_stream too
  streamlike::wait(consumer, producer.stream()); // consumer waits for the work queued on producer
  mylib::count_mismatches<<<256, 256, 0, consumer.get()>>>(data, n, 7, wrong);
  check_cuda(cudaGetLastError(), "count_mismatches<<<>>>");
  consumer.sync(); // an owner has its stream's operations: sync, is_done, wait, record
  int host_wrong = -1;
  check_cuda(cudaMemcpy(&host_wrong, wrong, sizeof(int), cudaMemcpyDeviceToHost), "cudaMemcpy");
  std::printf("  %-44s -> %d of %d elements wrong\n", "wait(consumer, producer), then check on GPU", host_wrong, n);
  expect(host_wrong == 0, "the consumer saw every element the producer wrote");

  cudaFree(data);
  cudaFree(wrong);
  return failures;
}

// Without a device there is nothing to own: create says why, in an exception that names the
// CUDA error and the operation.
void tour_ownership_without_device() {
  std::printf("\nowning streams: shared_stream, unique_stream, stream_pool and wait need a device.\n");
  try {
    const streamlike::shared_stream s = streamlike::shared_stream::create();
    std::printf("  unexpected: shared_stream::create() succeeded without a device\n");
  } catch (const streamlike::error& e) {
    std::printf("  shared_stream::create() threw streamlike::error:\n    %s\n", e.what());
  }
  (void)cudaGetLastError(); // leave no error behind
}

} // namespace

// ------------------------------------------------------------------------------------------------
// 5. Running the tour, with a device or without one.

namespace {

int run_without_device(cudaError_t why) {
  // streamlike's wording of what is missing (the driver, or a device), not CUDA's: without a driver
  // CUDA says "driver version is insufficient", which sends a user to upgrade a driver that is not
  // there.
  std::printf("no GPU to run on: %s; skipping the GPU work\n", streamlike::cuda_error_text(why).c_str());
  std::printf("Without a device no stream can be created, so every route below wraps a default\n"
              "stream (a named handle that needs no device) and only the conversions run.\n\n");
  std::vector<named_stream> streams;
  for (int i = 0; i < streams_needed; ++i) {
    streams.push_back({i % 2 == 0 ? cudaStreamLegacy : cudaStreamPerThread, ""});
  }
  tour t{std::move(streams), nullptr};
  visit_every_route(t);
  const int failures = t.check_conversions();
  tour_ownership_without_device();
  std::printf("\n%s: %zu routes converted%s\n", failures == 0 ? "PASS" : "FAIL", t.size(),
              failures == 0 ? " to the expected stream" : " (see above)");
  return failures == 0 ? 0 : 1;
}

int run_with_device() {
  cudaDeviceProp prop{};
  if (const cudaError_t code = cudaGetDeviceProperties(&prop, 0); code != cudaSuccess) {
    throw streamlike::error(code, "cudaGetDeviceProperties");
  }
  std::printf("CUDA device 0: %s (sm_%d%d)\n\n", prop.name, prop.major, prop.minor);

  // Non-blocking streams: they do not synchronize with the legacy default stream, so each
  // route's result is visible only if the host synchronized that route's own stream.
  std::vector<named_stream> streams;
  for (int i = 0; i < streams_needed; ++i) {
    cudaStream_t s{};
    if (const cudaError_t code = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking); code != cudaSuccess) {
      throw streamlike::error(code, "cudaStreamCreateWithFlags");
    }
    streams.push_back({s, "created stream #" + std::to_string(i)});
  }
  int* out = nullptr;
  if (const cudaError_t code = cudaMalloc(&out, max_routes * elements_per_route * sizeof(int)); code != cudaSuccess) {
    throw streamlike::error(code, "cudaMalloc");
  }
  // Zeros, finished before any route starts (the routes' streams do not wait for this one).
  if (const cudaError_t code = cudaMemset(out, 0, max_routes * elements_per_route * sizeof(int)); code != cudaSuccess) {
    throw streamlike::error(code, "cudaMemset");
  }
  if (const cudaError_t code = cudaDeviceSynchronize(); code != cudaSuccess) {
    throw streamlike::error(code, "cudaDeviceSynchronize");
  }

  tour t{streams, out};
  visit_every_route(t);
  const int failures = t.check_conversions() + t.check_gpu_work() + tour_ownership();
  std::printf("\n%s: %zu routes, each converted to the expected stream and a kernel on it wrote its value; "
              "owning streams created, shared, pooled and ordered%s\n",
              failures == 0 ? "PASS" : "FAIL", t.size(), failures == 0 ? "" : " (see above)");

  cudaFree(out);
  for (const named_stream& s : streams) cudaStreamDestroy(s.handle);
  return failures == 0 ? 0 : 1;
}

} // namespace

int main() {
  std::printf("streamlike tour: mylib::run_on(S&& stream, ...) called with every kind of stream\n");
  std::printf("(this translation unit reads the handle 0 as the %s default stream)\n\n",
              streamlike::default_stream_is_per_thread ? "per-thread" : "legacy");
  try {
    int devices = 0;
    const cudaError_t code = cudaGetDeviceCount(&devices);
    if (code != cudaSuccess || devices == 0) {
      (void)cudaGetLastError(); // clear the error, so nothing later trips over it
      return run_without_device(code != cudaSuccess ? code : cudaErrorNoDevice);
    }
    return run_with_device();
  } catch (const std::exception& e) {
    std::printf("FAIL: %s\n", e.what());
    return 1;
  }
}
