#include "checker.hpp"

#include "../capture_checks.hpp"

#include <algorithm>
#include <cstdio>
#include <utility>

namespace streamlike::check {
namespace {

const char* mode_name(cudaStreamCaptureMode mode) noexcept {
  switch (mode) {
    case cudaStreamCaptureModeGlobal: return "global";
    case cudaStreamCaptureModeThreadLocal: return "thread-local";
    case cudaStreamCaptureModeRelaxed: return "relaxed";
  }
  return "unknown";
}

std::string hex(std::uintptr_t value) {
  char text[2 + 2 * sizeof(value) + 1];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

std::string json_string(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
          out += escaped;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

// "torch.nn" -> "torch/nn/": matched against the Python file's path.
std::string module_path(std::string_view module) {
  std::string path(module);
  std::replace(path.begin(), path.end(), '.', '/');
  return "/" + path;
}

std::string capture_words(std::uintptr_t stream, cudaStreamCaptureMode mode, std::uint64_t thread, bool own) {
  return std::string("a capture of stream ") + stream_name(stream) + " in " + mode_name(mode) + " mode begun by " +
         (own ? "this thread" : "thread " + std::to_string(thread));
}

} // namespace

const char* report_kind_name(report::kind kind) noexcept {
  return kind == report::kind::wrong_stream ? "wrong stream" : "capture breaker";
}

std::string stream_name(std::uintptr_t canonical) {
  if (canonical == legacy_stream) return "0x1 (the legacy default stream)";
  if (canonical == per_thread_stream) return "0x2 (the per-thread default stream)";
  return hex(canonical);
}

std::string format(const report& r) {
  std::string text = "streamcheck: " + std::string(report_kind_name(r.what)) + ": " + r.api + " (" + kind_name(r.call) +
                     ") on device " + std::to_string(r.device) + ", thread " + std::to_string(r.thread) + ": " + r.why +
                     "\n";
  text += "  at " + (r.site.python.empty() ? std::string("(no Python frame)") : r.site.python) + "\n";
  for (const std::string& frame : r.site.frames) text += "    " + frame + "\n";
  return text;
}

checker::checker(options opts, world w) : options_(std::move(opts)), world_(w) {}

checker::verdict checker::on_call(const call_event& e) {
  switch (e.kind) {
    case call_kind::capture_begin:
    case call_kind::capture_end:
    case call_kind::capture_mode: note_capture(e); return verdict::fine;
    case call_kind::other: return verdict::fine;
    default: break;
  }
  if (options_.capture) {
    const verdict v = check_capture(e);
    if (v != verdict::fine) return v;
  }
  if (options_.wrong_stream && e.has_stream && works_on_stream(e.kind)) return check_stream(e);
  return verdict::fine;
}

checker::verdict checker::check_stream(const call_event& e) {
  std::uintptr_t current = 0;
  if (e.device < 0 || world_.current_stream == nullptr || !world_.current_stream(world_.context, e.device, &current))
    return verdict::fine;
  current = canonical_stream(current);
  // A default current stream is every framework's "nothing set": launching elsewhere is a choice.
  if (is_default_stream(current) || e.stream == current) [[likely]]
    return verdict::fine;
  report r;
  r.what = report::kind::wrong_stream;
  r.api = e.api;
  r.call = e.kind;
  r.stream = e.stream;
  r.current = current;
  r.device = e.device;
  r.thread = e.thread;
  r.why = "given stream " + stream_name(e.stream) + ", but the calling thread's current stream on device " +
          std::to_string(e.device) + " is " + stream_name(current) + " (streamlike::current_stream())";
  const std::string answers = world_.current_stream_answers != nullptr
                                  ? world_.current_stream_answers(world_.context, e.device)
                                  : std::string();
  if (!answers.empty()) r.why += "; " + answers;
  return record(std::move(r));
}

checker::verdict checker::check_capture(const call_event& e) {
  if (capture_count_.load(std::memory_order_acquire) == 0) [[likely]]
    return verdict::fine;
  // While captures run, a launch or copy can break one only from the legacy default stream.
  const bool punished = e.kind == call_kind::capture_punished;
  if (!punished && !(e.has_stream && e.stream == legacy_stream)) return verdict::fine;
  std::string why;
  {
    const std::lock_guard lock(mutex_);
    if (punished) {
      // A synchronization or query of the capturing stream itself: illegal in every mode.
      const auto itself = std::find_if(captures_.begin(), captures_.end(),
                                       [&](const capture& c) { return e.has_stream && c.stream == e.stream; });
      if (itself != captures_.end()) {
        why = e.api.empty() ? std::string("the call") : std::string(e.api);
        why += " waits on or asks about " +
               capture_words(itself->stream, itself->mode, itself->thread, itself->thread == e.thread) +
               ", which a capture never allows: the capture would be invalidated";
      } else {
        // CUDA's rule for potentially unsafe calls, the one streamlike's own refusals follow.
        const capture* own = nullptr;
        const capture* other = nullptr;
        for (const capture& c : captures_) {
          if (c.mode == cudaStreamCaptureModeRelaxed) continue;
          if (c.thread == e.thread && own == nullptr) own = &c;
          if (c.thread != e.thread && c.mode == cudaStreamCaptureModeGlobal && other == nullptr) other = &c;
        }
        const cudaStreamCaptureMode thread_mode = mode_of(e.thread);
        const auto by = detail::capture::unsafe_call_prohibited_by(thread_mode, own != nullptr, other != nullptr);
        const capture* c = by == detail::capture::prohibited_by::own_capture            ? own
                           : by == detail::capture::prohibited_by::other_thread_capture ? other
                                                                                        : nullptr;
        if (c != nullptr)
          why = "while " + capture_words(c->stream, c->mode, c->thread, c->thread == e.thread) +
                " is active, CUDA prohibits this call on a thread in " + mode_name(thread_mode) +
                " capture interaction mode: it would invalidate the capture. Make it before the capture begins "
                "or after it ends, or from a thread in relaxed mode (cudaThreadExchangeStreamCaptureMode)";
      }
    } else if (e.has_stream && e.stream == legacy_stream) {
      // The legacy default stream synchronizes with every blocking stream, the capturing one too.
      const auto blocking =
          std::find_if(captures_.begin(), captures_.end(), [](const capture& c) { return c.blocking; });
      if (blocking != captures_.end())
        why = "work on the legacy default stream synchronizes with every blocking stream, and " +
              capture_words(blocking->stream, blocking->mode, blocking->thread, blocking->thread == e.thread) +
              " is active on a blocking stream: the capture would be invalidated (cudaErrorStreamCaptureImplicit). "
              "Use the capturing stream, or create it non-blocking";
    }
  }
  if (why.empty()) return verdict::fine;
  report r;
  r.what = report::kind::capture_breaker;
  r.api = e.api;
  r.call = e.kind;
  r.stream = e.has_stream ? e.stream : 0;
  r.device = e.device;
  r.thread = e.thread;
  r.why = std::move(why);
  return record(std::move(r));
}

void checker::note_capture(const call_event& e) {
  if (!e.succeeded) return;
  const std::lock_guard lock(mutex_);
  if (e.kind == call_kind::capture_mode) {
    thread_modes_[e.thread] = e.mode;
  } else if (e.kind == call_kind::capture_begin) {
    captures_.push_back({e.stream, e.mode, e.thread, e.blocking});
  } else {
    const auto found =
        std::find_if(captures_.begin(), captures_.end(), [&](const capture& c) { return c.stream == e.stream; });
    if (found != captures_.end()) captures_.erase(found);
  }
  capture_count_.store(captures_.size(), std::memory_order_release);
}

cudaStreamCaptureMode checker::mode_of(std::uint64_t thread) const {
  const auto found = thread_modes_.find(thread);
  return found == thread_modes_.end() ? cudaStreamCaptureModeGlobal : found->second; // CUDA's default
}

checker::verdict checker::record(report r) {
  if (world_.take_call_site != nullptr) world_.take_call_site(world_.context, r.site);
  std::string key = report_kind_name(r.what);
  key += '|';
  key += r.api;
  key += '|';
  key += r.site.python;
  for (void* address : r.site.addresses) key += '|' + hex(reinterpret_cast<std::uintptr_t>(address));
  std::unique_lock lock(mutex_);
  if (const auto found = by_site_.find(key); found != by_site_.end()) {
    report& seen = reports_[found->second];
    ++seen.count;
    return seen.allowed ? verdict::allowed : verdict::repeated;
  }
  lock.unlock();
  // First time here: symbolize (slow, outside the lock) and judge against the allow-list.
  if (world_.symbolize != nullptr) world_.symbolize(world_.context, r.site);
  r.allowed = allowed(r.site);
  lock.lock();
  if (const auto found = by_site_.find(key); found != by_site_.end()) { // another thread was first
    ++reports_[found->second].count;
    return reports_[found->second].allowed ? verdict::allowed : verdict::repeated;
  }
  by_site_.emplace(std::move(key), reports_.size());
  reports_.push_back(r);
  const bool is_allowed = r.allowed;
  lock.unlock();
  if (is_allowed) return verdict::allowed;
  if (sink_ != nullptr) sink_(sink_context_, r);
  return verdict::reported;
}

bool checker::allowed(const call_site& site) const {
  for (const allow_entry& a : options_.allow) {
    switch (a.what) {
      case allow_entry::by::python_module:
        if (site.python.find(module_path(a.text)) != std::string::npos) return true;
        break;
      case allow_entry::by::library:
      case allow_entry::by::symbol:
        for (const std::string& frame : site.frames) {
          // "library: symbol+0xoffset"
          const auto colon = frame.find(": ");
          const std::string_view part =
              a.what == allow_entry::by::library
                  ? std::string_view(frame).substr(0, colon)
                  : (colon == std::string::npos ? std::string_view{} : std::string_view(frame).substr(colon + 2));
          if (part.find(a.text) != std::string_view::npos) return true;
        }
        break;
    }
  }
  return false;
}

std::vector<report> checker::reports() const {
  const std::lock_guard lock(mutex_);
  return {reports_.begin(), reports_.end()};
}

std::size_t checker::reported() const {
  const std::lock_guard lock(mutex_);
  return static_cast<std::size_t>(
      std::count_if(reports_.begin(), reports_.end(), [](const report& r) { return !r.allowed; }));
}

std::string checker::summary() const {
  const std::vector<report> all = reports();
  std::size_t wrong = 0, breakers = 0, allowed_count = 0;
  std::string lines;
  for (const report& r : all) {
    if (r.allowed) {
      ++allowed_count;
      continue;
    }
    (r.what == report::kind::wrong_stream ? wrong : breakers) += 1;
    lines +=
        "  " + std::to_string(r.count) + "x " + report_kind_name(r.what) + ": " + r.api + " at " +
        (r.site.python.empty() ? (r.site.frames.empty() ? std::string("?") : r.site.frames.front()) : r.site.python) +
        "\n";
  }
  return "streamcheck: " + std::to_string(wrong) + " wrong-stream and " + std::to_string(breakers) +
         " capture-breaker call sites reported, " + std::to_string(allowed_count) + " allowed\n" + lines;
}

std::string checker::json() const {
  const std::vector<report> all = reports();
  std::size_t wrong = 0, breakers = 0, allowed_count = 0;
  std::string items;
  for (const report& r : all) {
    if (r.allowed)
      ++allowed_count;
    else
      (r.what == report::kind::wrong_stream ? wrong : breakers) += 1;
    if (!items.empty()) items += ",";
    items +=
        "\n  {\"kind\": " + json_string(r.what == report::kind::wrong_stream ? "wrong-stream" : "capture-breaker") +
        ", \"api\": " + json_string(r.api) + ", \"call\": " + json_string(kind_name(r.call)) +
        ", \"stream\": " + json_string(hex(r.stream)) + ", \"current\": " + json_string(hex(r.current)) +
        ", \"device\": " + std::to_string(r.device) + ", \"thread\": " + std::to_string(r.thread) +
        ", \"count\": " + std::to_string(r.count) + ", \"allowed\": " + (r.allowed ? "true" : "false") +
        ", \"python\": " + json_string(r.site.python) + ", \"why\": " + json_string(r.why) + ", \"frames\": [";
    for (std::size_t i = 0; i < r.site.frames.size(); ++i) items += (i ? ", " : "") + json_string(r.site.frames[i]);
    items += "]}";
  }
  return "{\"wrong_stream\": " + std::to_string(wrong) + ", \"capture_breaker\": " + std::to_string(breakers) +
         ", \"allowed\": " + std::to_string(allowed_count) + ", \"reports\": [" + items + "\n]}\n";
}

} // namespace streamlike::check
