#include "process_record.hpp"

#include "report.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

namespace streamlike::check {

process_facts this_process() {
  process_facts p;
  p.pid = static_cast<long>(getpid());
  p.ppid = static_cast<long>(getppid());
  std::ifstream cmdline("/proc/self/cmdline", std::ios::binary);
  const std::string all((std::istreambuf_iterator<char>(cmdline)), std::istreambuf_iterator<char>());
  std::size_t begin = 0;
  while (begin < all.size()) {
    std::size_t end = all.find('\0', begin);
    if (end == std::string::npos) end = all.size();
    p.argv.emplace_back(all, begin, end - begin);
    begin = end + 1;
  }
  return p;
}

std::string process_record(const process_facts& p, bool checked, std::string_view why_unchecked, bool summarized,
                           std::string_view log_json) {
  std::string out = "{\"schema\": " + json_quoted(process_record_schema) + ", \"pid\": " + std::to_string(p.pid) +
                    ", \"ppid\": " + std::to_string(p.ppid) + ", \"argv\": [";
  for (std::size_t i = 0; i < p.argv.size(); ++i) out += (i ? ", " : "") + json_quoted(p.argv[i]);
  out += "], \"checked\": ";
  out += checked ? "true" : "false";
  out += ", \"why_unchecked\": " + (why_unchecked.empty() ? std::string("null") : json_quoted(why_unchecked));
  out += ", \"summarized\": ";
  out += summarized ? "true" : "false";
  // The log's object, {"wrong_stream": ..., "reports": [...]}, continues this one.
  if (log_json.size() > 1 && log_json.front() == '{') {
    out += ", ";
    out += log_json.substr(1);
  } else {
    out += ", \"wrong_stream\": 0, \"capture_breaker\": 0, \"allowed\": 0, \"reports\": []}\n";
  }
  return out;
}

bool write_process_record(const std::string& dir, long pid, std::string_view text, std::string& error) {
  const std::string name = dir + "/streamcheck-" + std::to_string(pid) + ".json";
  std::string temporary = dir + "/.streamcheck-" + std::to_string(pid) + ".json.XXXXXX";
  const int fd = mkostemp(temporary.data(), O_CLOEXEC);
  if (fd < 0) {
    error = "cannot write in STREAMLIKE_CHECK_RECORDS=" + dir + ": " + std::strerror(errno);
    return false;
  }
  std::size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    written += static_cast<std::size_t>(n);
  }
  const bool complete = written == text.size();
  const int saved = errno;
  close(fd);
  if (!complete || std::rename(temporary.c_str(), name.c_str()) != 0) {
    error = "cannot write " + name + ": " + std::strerror(complete ? errno : saved);
    std::remove(temporary.c_str());
    return false;
  }
  return true;
}

} // namespace streamlike::check
