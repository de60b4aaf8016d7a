#include "options.hpp"

#include <cctype>
#include <cstdlib>
#include <stdexcept>

namespace streamlike::check {
namespace {

std::vector<std::string_view> split(std::string_view text) {
  std::vector<std::string_view> parts;
  while (!text.empty()) {
    const auto comma = text.find(',');
    std::string_view part = text.substr(0, comma);
    while (!part.empty() && part.front() == ' ') part.remove_prefix(1);
    while (!part.empty() && part.back() == ' ') part.remove_suffix(1);
    if (!part.empty()) parts.push_back(part);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return parts;
}

// "torch.nn": names separated by single dots (a name's characters: letters, digits, '_', and the
// bytes of non-ASCII letters, which Python allows).
bool is_module_name(std::string_view text) {
  bool name_begun = false;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '.') {
      if (!name_begun) return false;
      name_begun = false;
    } else if (std::isalnum(u) != 0 || c == '_' || u >= 0x80) {
      name_begun = true;
    } else {
      return false;
    }
  }
  return name_begun;
}

[[noreturn]] void bad(std::string_view variable, std::string_view value, std::string_view expected) {
  throw std::invalid_argument("streamcheck: " + std::string(variable) + "='" + std::string(value) + "': expected " +
                              std::string(expected));
}

} // namespace

options parse_options(const char* check, const char* output, const char* json, const char* fail, const char* allow) {
  options o;
  if (check != nullptr) {
    for (std::string_view item : split(check)) {
      if (item == "wrong-stream")
        o.wrong_stream = true;
      else if (item == "wrong-stream=strict")
        o.wrong_stream = o.strict_stream = true;
      else if (item == "capture")
        o.capture = true;
      else if (item == "all" || item == "1")
        o.wrong_stream = o.capture = true;
      else if (item == "0" || item == "off") {
      } else
        bad("STREAMLIKE_CHECK", check,
            "a comma-separated list of wrong-stream (or wrong-stream=strict), capture, all (or off)");
    }
  }
  if (output != nullptr) o.output = output;
  if (json != nullptr) o.json = json;
  if (fail != nullptr) {
    const std::string_view f(fail);
    if (f == "1")
      o.fail = true;
    else if (!f.empty() && f != "0")
      bad("STREAMLIKE_CHECK_FAIL", fail, "1 (exit with status 1 when anything was reported) or 0");
  }
  if (allow != nullptr) {
    for (std::string_view item : split(allow)) {
      const auto colon = item.find(':');
      const std::string_view kind = item.substr(0, colon);
      const std::string_view text = colon == std::string_view::npos ? std::string_view{} : item.substr(colon + 1);
      allow_entry e;
      if (kind == "lib")
        e.what = allow_entry::by::library;
      else if (kind == "sym")
        e.what = allow_entry::by::symbol;
      else if (kind == "py")
        e.what = allow_entry::by::python_module;
      else
        bad("STREAMLIKE_CHECK_ALLOW", allow, "comma-separated lib:TEXT, sym:TEXT or py:MODULE entries");
      if (text.empty()) bad("STREAMLIKE_CHECK_ALLOW", allow, "a non-empty TEXT after each lib:, sym: or py:");
      if (e.what == allow_entry::by::python_module && !is_module_name(text))
        bad("STREAMLIKE_CHECK_ALLOW", allow, "py:MODULE to name a module, dotted (py:torch.nn), not a path");
      e.text = text;
      o.allow.push_back(std::move(e));
    }
  }
  return o;
}

std::string with_pid(std::string_view path, long pid) {
  std::string out;
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (path[i] == '%' && i + 1 < path.size() && path[i + 1] == 'p') {
      out += std::to_string(pid);
      ++i;
    } else {
      out += path[i];
    }
  }
  return out;
}

options options_from_environment() {
  return parse_options(std::getenv("STREAMLIKE_CHECK"), std::getenv("STREAMLIKE_CHECK_OUTPUT"),
                       std::getenv("STREAMLIKE_CHECK_JSON"), std::getenv("STREAMLIKE_CHECK_FAIL"),
                       std::getenv("STREAMLIKE_CHECK_ALLOW"));
}

} // namespace streamlike::check
