#include "dtr/trace/chrome_trace.h"

#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdio>

#include "dtr/core/error.h"
#include "dtr/trace/output_file.h"
#include "dtr/trace/utf8.h"

namespace dtr::trace {

namespace {
// JSON string escaping: quotes, backslashes and control characters; bytes
// that are not UTF-8 (a trace named in Latin-1) become U+FFFD, since JSON
// parsers reject them.
void write_string(std::ofstream& out, std::string_view raw) {
  const std::string s = valid_utf8(raw);
  out << '"';
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out << '\\' << c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
      out << buf;
    } else {
      out << c;
    }
  }
  out << '"';
}

// Nanoseconds as exact microseconds: 12345 -> 12.345.
void write_us(std::ofstream& out, std::int64_t ns) {
  char buf[32];
  const char* sign = ns < 0 ? "-" : "";
  const std::uint64_t mag = ns < 0 ? 0 - static_cast<std::uint64_t>(ns)
                                   : static_cast<std::uint64_t>(ns);
  std::snprintf(buf, sizeof buf, "%s%" PRIu64 ".%03" PRIu64, sign, mag / 1000,
                mag % 1000);
  out << buf;
}

void write_arg(std::ofstream& out, const TraceArg& a) {
  write_string(out, a.key);
  out << ':';
  switch (a.kind) {
    case TraceArg::Kind::kInteger:
      out << a.integer;
      break;
    case TraceArg::Kind::kString:
      write_string(out, a.text);
      break;
    case TraceArg::Kind::kReal:
      if (std::isfinite(a.real)) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.17g", a.real);
        out << buf;
      } else {
        write_string(out, std::isnan(a.real) ? "nan"
                          : a.real > 0       ? "inf"
                                             : "-inf");
      }
      break;
  }
}
}  // namespace

ChromeTraceWriter::ChromeTraceWriter(std::string path)
    : path_(std::move(path)), file_(path_), out_(file_.stream()) {
  if (!out_.is_open()) close_output(out_, path_);  // throws, naming path_
  out_ << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
}

// A run that stops on an exception still leaves its profile, which shows
// where it stopped; a write error here has nowhere to go.
ChromeTraceWriter::~ChromeTraceWriter() {
  if (closed_) return;
  try {
    close();
  } catch (const Error&) {
  }
}

void ChromeTraceWriter::close() {
  if (closed_) return;
  closed_ = true;
  out_ << "\n]}\n";
  file_.commit();
}

void ChromeTraceWriter::begin_event(std::string_view name,
                                    std::string_view phase, std::int64_t ts_ns,
                                    int pid) {
  out_ << (first_ ? "{\"name\":" : ",\n{\"name\":");
  first_ = false;
  write_string(out_, name);
  out_ << ",\"ph\":\"" << phase << "\",\"ts\":";
  write_us(out_, ts_ns);
  out_ << ",\"pid\":" << pid;
}

void ChromeTraceWriter::end_event(TraceArgs args) {
  if (args.size() != 0) {
    out_ << ",\"args\":{";
    bool first = true;
    for (const TraceArg& a : args) {
      if (!first) out_ << ',';
      first = false;
      write_arg(out_, a);
    }
    out_ << '}';
  }
  out_ << '}';
}

void ChromeTraceWriter::process_name(int pid, std::string_view name) {
  begin_event("process_name", "M", 0, pid);
  end_event({{"name", name}});
}

void ChromeTraceWriter::thread_name(int pid, int tid, std::string_view name) {
  begin_event("thread_name", "M", 0, pid);
  out_ << ",\"tid\":" << tid;
  end_event({{"name", name}});
}

void ChromeTraceWriter::complete(std::string_view name,
                                 std::string_view category, std::int64_t ts_ns,
                                 std::int64_t dur_ns, int pid, int tid,
                                 TraceArgs args) {
  begin_event(name, "X", ts_ns, pid);
  out_ << ",\"tid\":" << tid << ",\"cat\":";
  write_string(out_, category);
  out_ << ",\"dur\":";
  write_us(out_, dur_ns);
  end_event(args);
}

void ChromeTraceWriter::instant(std::string_view name,
                                std::string_view category, std::int64_t ts_ns,
                                int pid, int tid, TraceArgs args) {
  begin_event(name, "i", ts_ns, pid);
  out_ << ",\"tid\":" << tid << ",\"s\":\"t\",\"cat\":";
  write_string(out_, category);
  end_event(args);
}

void ChromeTraceWriter::counter(std::string_view name, std::int64_t ts_ns,
                                int pid, TraceArgs args) {
  begin_event(name, "C", ts_ns, pid);
  end_event(args);
}

}  // namespace dtr::trace
