#include "report_log.hpp"

#include <algorithm>
#include <cstdio>
#include <string_view>
#include <utility>

namespace streamlike::check {
namespace {

// Whether the Python file of `location` ("path/file.py:12") lies inside `module` ("torch.nn"):
// in the package's folder (".../torch/nn/...") or in the module's own file (".../torch/nn.py"),
// by whole path components, so that "torch" takes neither "torchvision/" nor "torch_utils.py".
bool inside_module(std::string_view location, std::string_view module) {
  const auto colon = location.rfind(':');
  const std::string_view file = colon == std::string_view::npos ? location : location.substr(0, colon);
  std::string path(module);
  std::replace(path.begin(), path.end(), '.', '/');
  const auto starts_component = [file](std::size_t at) { return at == 0 || file[at - 1] == '/'; };
  const std::string folder = path + "/";
  for (auto at = file.find(folder); at != std::string_view::npos; at = file.find(folder, at + 1))
    if (starts_component(at)) return true;
  const std::string own_file = path + ".py";
  return file.ends_with(own_file) && starts_component(file.size() - own_file.size());
}

// A symbolized frame's parts: "library: symbol+0xoffset", or "library: +0xoffset" with no symbol.
std::string_view frame_library(std::string_view frame) { return frame.substr(0, frame.find(": ")); }

std::string_view frame_symbol(std::string_view frame) {
  const auto colon = frame.find(": ");
  if (colon == std::string_view::npos) return {};
  std::string_view symbol = frame.substr(colon + 2);
  // The offset only, not a '+' of the name (operator+).
  if (const auto plus = symbol.rfind("+0x"); plus != std::string_view::npos) symbol = symbol.substr(0, plus);
  return symbol;
}

} // namespace

std::size_t report_log::addresses_hash::operator()(std::span<void* const> addresses) const noexcept {
  std::size_t h = addresses.size();
  for (void* a : addresses) h = (h ^ reinterpret_cast<std::uintptr_t>(a)) * 0x100000001b3ULL + (h >> 29);
  return h;
}

std::size_t report_log::repeat_hash::operator()(const repeat_probe& p) const noexcept {
  std::size_t h = std::hash<std::string_view>{}(p.api) ^ (static_cast<std::size_t>(p.what) << 1) ^
                  (reinterpret_cast<std::uintptr_t>(p.native) * 0x9e3779b97f4a7c15ULL);
  for (std::uintptr_t v : p.python) h = (h ^ v) * 0x100000001b3ULL + (h >> 29);
  return h;
}

namespace {

verdict count(report& seen) {
  ++seen.count;
  return seen.allowed ? verdict::allowed : verdict::repeated;
}

} // namespace

verdict report_log::record(report r, explanation why) {
  if (world_.take_native_site != nullptr) world_.take_native_site(world_.context, r.site);
  std::unique_lock lock(mutex_);
  const auto native = natives_.find(std::span<void* const>(r.site.addresses));
  if (native == natives_.end()) {
    lock.unlock();
    return record_new(std::move(r), why);
  }
  const native_site* site = &native->second;
  std::vector<std::uintptr_t> python;
  if (site->needs_python() && world_.take_python_site != nullptr) {
    lock.unlock(); // it may wait for the GIL: never while holding the log
    world_.take_python_site(world_.context, python, nullptr);
    lock.lock();
  }
  if (const auto seen = by_repeat_.find(repeat_probe{r.what, r.api, site, python}); seen != by_repeat_.end())
    return count(reports_[seen->second]);
  lock.unlock();
  return record_new(std::move(r), why);
}

verdict report_log::record_new(report r, explanation why) {
  if (why.write != nullptr) why.write(why.context, r);
  std::vector<std::uintptr_t> python;
  std::string location;
  if (world_.take_python_site != nullptr) world_.take_python_site(world_.context, python, &location);
  r.site.python = location;
  std::unique_lock lock(mutex_);
  auto native = natives_.find(std::span<void* const>(r.site.addresses));
  if (native == natives_.end()) {
    lock.unlock();
    // A native site seen the first time: symbolized (slow, outside the lock) and judged by its
    // frames, once.
    native_site fresh;
    if (world_.symbolize != nullptr) {
      call_site symbolized;
      symbolized.addresses = r.site.addresses;
      world_.symbolize(world_.context, symbolized);
      fresh.frames = std::move(symbolized.frames);
    }
    fresh.allowed = allowed_natively(fresh.frames);
    fresh.has_python = !location.empty();
    lock.lock();
    native = natives_.try_emplace(r.site.addresses, std::move(fresh)).first; // or another thread's
  }
  const native_site* site = &native->second;
  r.site.frames = site->frames;
  if (!site->needs_python()) python.clear();
  std::string where = report_kind_name(r.what);
  where += '|';
  where += r.api;
  where += '|';
  where += hex(reinterpret_cast<std::uintptr_t>(site));
  where += '|';
  if (site->needs_python()) where += location;
  if (const auto seen = by_location_.find(where); seen != by_location_.end()) {
    // Another identity of a line already reported, or another thread was first.
    by_repeat_.try_emplace(repeat_key{r.what, r.api, site, std::move(python)}, seen->second);
    return count(reports_[seen->second]);
  }
  r.allowed = site->allowed || allowed_by_python(location);
  const std::size_t index = reports_.size();
  by_location_.emplace(std::move(where), index);
  by_repeat_.try_emplace(repeat_key{r.what, r.api, site, std::move(python)}, index);
  reports_.push_back(r);
  lock.unlock();
  if (r.allowed) return verdict::allowed;
  if (sink_ != nullptr) sink_(sink_context_, r);
  return verdict::reported;
}

bool report_log::allowed_natively(const std::vector<std::string>& frames) const {
  for (const allow_entry& a : allow_) {
    if (a.what == allow_entry::by::python_module) continue;
    for (const std::string& frame : frames) {
      const std::string_view part = a.what == allow_entry::by::library ? frame_library(frame) : frame_symbol(frame);
      if (part.find(a.text) != std::string_view::npos) return true;
    }
  }
  return false;
}

bool report_log::allowed_by_python(const std::string& location) const {
  if (location.empty()) return false;
  return std::any_of(allow_.begin(), allow_.end(), [&location](const allow_entry& a) {
    return a.what == allow_entry::by::python_module && inside_module(location, a.text);
  });
}

std::vector<report> report_log::reports() const {
  const std::lock_guard lock(mutex_);
  return {reports_.begin(), reports_.end()};
}

std::size_t report_log::reported() const {
  const std::lock_guard lock(mutex_);
  return static_cast<std::size_t>(
      std::count_if(reports_.begin(), reports_.end(), [](const report& r) { return !r.allowed; }));
}

std::string report_log::summary() const {
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

std::string report_log::json() const {
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
        "\n  {\"kind\": " + json_quoted(r.what == report::kind::wrong_stream ? "wrong-stream" : "capture-breaker") +
        ", \"api\": " + json_quoted(r.api) + ", \"call\": " + json_quoted(kind_name(r.call)) +
        ", \"stream\": " + json_quoted(hex(r.stream)) + ", \"current\": " + json_quoted(hex(r.current)) +
        ", \"device\": " + std::to_string(r.device) + ", \"thread\": " + std::to_string(r.thread) +
        ", \"count\": " + std::to_string(r.count) + ", \"allowed\": " + (r.allowed ? "true" : "false") +
        ", \"python\": " + json_quoted(r.site.python) + ", \"why\": " + json_quoted(r.why) +
        ", \"fix\": " + json_quoted(fix_for(r)) + ", \"frames\": [";
    for (std::size_t i = 0; i < r.site.frames.size(); ++i) items += (i ? ", " : "") + json_quoted(r.site.frames[i]);
    items += "]}";
  }
  return "{\"wrong_stream\": " + std::to_string(wrong) + ", \"capture_breaker\": " + std::to_string(breakers) +
         ", \"allowed\": " + std::to_string(allowed_count) + ", \"reports\": [" + items + "\n]}\n";
}

} // namespace streamlike::check
