// retain_until_done (include/streamlike/retain_until_done.hpp): objects whose release waits for
// the GPU, and the thread that destroys them.
//
// CUDA calls host functions and user-object destructors on a thread of its own, which must make
// no CUDA call; an object's destructor may make one (a shared_stream destroys its stream, a
// buffer frees device memory). So those callbacks only link the object into a queue (no
// allocation, no CUDA call), and a streamlike thread destroys it.
#include "capture_checks.hpp"
#include "error_messages.hpp"

#include <streamlike/error.hpp>
#include <streamlike/retain_until_done.hpp>

#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <thread>

namespace streamlike::detail {
namespace {

// One retained object and its link in the queue, allocated when retained, so that the callback
// that queues it allocates nothing.
struct release_node {
  std::unique_ptr<retained_object> object;
  release_node* next = nullptr;
};

class release_queue {
public:
  // Never destroyed: callbacks may still arrive while statics are being destroyed at exit.
  static release_queue& get() {
    static release_queue* const queue = new release_queue;
    return *queue;
  }

  // Called on CUDA's callback thread: a lock and a notification, no CUDA call.
  void push(release_node* node) noexcept {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      node->next = due_;
      due_ = node;
    }
    due_cv_.notify_one();
  }

  void flush_due() {
    std::unique_lock<std::mutex> lock(mutex_);
    idle_cv_.wait(lock, [this] { return due_ == nullptr && destroying_ == 0; });
  }

private:
  release_queue() {
    std::thread([this] { run(); }).detach();
  }

  [[noreturn]] void run() noexcept {
    for (;;) {
      release_node* batch = nullptr;
      std::size_t count = 0;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        due_cv_.wait(lock, [this] { return due_ != nullptr; });
        batch = std::exchange(due_, nullptr);
        for (const release_node* n = batch; n != nullptr; n = n->next) ++count;
        destroying_ += count;
      }
      while (batch != nullptr) delete std::exchange(batch, batch->next); // the object's destructor runs here
      {
        const std::lock_guard<std::mutex> lock(mutex_);
        destroying_ -= count;
      }
      idle_cv_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable due_cv_;
  std::condition_variable idle_cv_;
  release_node* due_ = nullptr;
  std::size_t destroying_ = 0;
};

void CUDART_CB release_when_called(void* node) { release_queue::get().push(static_cast<release_node*>(node)); }

} // namespace

void retain_until_done(stream_view stream, std::unique_ptr<retained_object> object) {
  auto node = std::make_unique<release_node>();
  node->object = std::move(object);
  (void)release_queue::get(); // the release thread exists before any callback can queue to it

  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  cudaGraph_t graph = nullptr;
  throw_if_error(cudaStreamGetCaptureInfo(stream.get(), &status, nullptr, &graph),
                 "retain_until_done: cudaStreamGetCaptureInfo");
  if (status == cudaStreamCaptureStatusInvalidated) {
    capture::throw_capturing("streamlike", "retain_until_done",
                             "its capture is already invalidated (end it), so retaining an object in it");
  }
  if (status == cudaStreamCaptureStatusActive) {
    // The graph being built holds the only reference (moved to it): the object lives as long as the
    // graph and every executable graph instantiated from it, and their launches.
    cudaUserObject_t user_object = nullptr;
    const cudaError_t created =
        cudaUserObjectCreate(&user_object, node.get(), release_when_called, 1, cudaUserObjectNoDestructorSync);
    throw_if_error(created, "retain_until_done: cudaUserObjectCreate");
    (void)node.release(); // the user object's destructor queues it
    const cudaError_t retained = cudaGraphRetainUserObject(graph, user_object, 1, cudaGraphUserObjectMove);
    if (retained != cudaSuccess) {
      (void)cudaGetLastError();
      (void)cudaUserObjectRelease(user_object, 1); // its destructor queues the object now
      throw_error(retained, "retain_until_done: cudaGraphRetainUserObject");
    }
    return;
  }
  const cudaError_t launched = cudaLaunchHostFunc(stream.get(), release_when_called, node.get());
  throw_if_error(launched, "retain_until_done: cudaLaunchHostFunc");
  (void)node.release(); // the host function queues it
}

void flush_released_objects() { release_queue::get().flush_due(); }

} // namespace streamlike::detail
