#include "report_log.hpp"

#include <algorithm>
#include <cstdio>
#include <string_view>
#include <utility>

namespace streamlike::check {
namespace {

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

verdict report_log::record(report r) {
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

bool report_log::allowed(const call_site& site) const {
  for (const allow_entry& a : allow_) {
    switch (a.what) {
      case allow_entry::by::python_module:
        if (!site.python.empty() && inside_module(site.python, a.text)) return true;
        break;
      case allow_entry::by::library:
      case allow_entry::by::symbol:
        for (const std::string& frame : site.frames) {
          const std::string_view part = a.what == allow_entry::by::library ? frame_library(frame) : frame_symbol(frame);
          if (part.find(a.text) != std::string_view::npos) return true;
        }
        break;
    }
  }
  return false;
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
