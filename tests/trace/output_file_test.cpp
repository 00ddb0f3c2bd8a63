// Tests of checked, atomic output (dtr/trace/output_file.h) and of the
// UTF-8 repair used before writing JSON (dtr/trace/utf8.h): a result file
// is the previous complete file or the new complete one, never a mix or a
// truncated one, and no temporary file is left behind.
#include "dtr/trace/output_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "dtr/core/error.h"
#include "dtr/trace/utf8.h"
#include "tests/support/temp_dir.h"

namespace dtr::trace {
namespace {

namespace fs = std::filesystem;

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

class OutputFileTest : public ::testing::Test {
 protected:
  void SetUp() override { write_output(target_, "old complete\n"); }

  // Everything in the folder besides the destination.
  std::size_t strays() const {
    std::size_t n = 0;
    for (const auto& e : fs::directory_iterator(dir_.path())) {
      n += e.path() != fs::path(target_);
    }
    return n;
  }

  dtr::testing::TempDir dir_;
  std::string target_ = (dir_ / "results.csv").string();
};

TEST_F(OutputFileTest, CommitReplacesTheFileWhole) {
  AtomicOutput out(target_);
  out.stream() << "new ";
  EXPECT_EQ(read_all(target_), "old complete\n");  // not yet in place
  out.stream() << "complete\n";
  out.commit();
  EXPECT_EQ(read_all(target_), "new complete\n");
  EXPECT_EQ(strays(), 0u);
}

TEST_F(OutputFileTest, AnAbandonedWriteLeavesThePreviousFile) {
  {
    AtomicOutput out(target_);
    out.stream() << "half of a new fi";
  }  // an exception on the way: no commit
  EXPECT_EQ(read_all(target_), "old complete\n");
  EXPECT_EQ(strays(), 0u);
}

TEST_F(OutputFileTest, AFailedWriteIsAnErrorAndKeepsThePreviousFile) {
  AtomicOutput out(target_);
  out.stream() << "partial";
  out.stream().setstate(std::ios::badbit);  // as a full disk leaves it
  try {
    out.commit();
    FAIL() << "commit of a failed stream succeeded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(target_), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(read_all(target_), "old complete\n");
}

TEST_F(OutputFileTest, TwoWritersEachLeaveAWholeFile) {
  AtomicOutput a(target_);
  AtomicOutput b(target_);
  a.stream() << "from a\n";
  b.stream() << "from b\n";
  b.commit();
  a.commit();
  EXPECT_EQ(read_all(target_), "from a\n");
  EXPECT_EQ(strays(), 0u);
}

TEST_F(OutputFileTest, ADeviceIsWrittenInPlaceNotReplaced) {
  // Renaming onto /dev/null would replace the device with a regular file.
  AtomicOutput out("/dev/null");
  out.stream() << "discarded";
  out.commit();
  struct stat st {};
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST_F(OutputFileTest, AMissingFolderIsAnErrorNamingThePath) {
  std::string path = (dir_ / "no" / "such" / "file.csv").string();
  AtomicOutput out(path);
  out.stream() << "x";
  try {
    out.commit();
    FAIL() << "wrote into a missing folder";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos);
  }
}

TEST_F(OutputFileTest, AnOutputThatIsAnInputIsRefused) {
  std::string other = (dir_ / "other.log").string();
  write_output(other, "x");
  EXPECT_THROW(refuse_overwriting_inputs(target_, {other, target_}, "--out"),
               Error);
  // The same file by another spelling.
  std::string spelled = (dir_ / "." / "results.csv").string();
  EXPECT_THROW(refuse_overwriting_inputs(spelled, {target_}, "--out"), Error);
  EXPECT_NO_THROW(refuse_overwriting_inputs(target_, {other}, "--out"));
  // An output that does not exist yet is nobody's input.
  EXPECT_NO_THROW(
      refuse_overwriting_inputs((dir_ / "new").string(), {target_}, "--out"));
}

TEST(ValidUtf8Test, KeepsWellFormedTextAndReplacesTheRest) {
  EXPECT_EQ(valid_utf8("plain"), "plain");
  EXPECT_EQ(valid_utf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"),
            "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80");
  const std::string fffd = "\xEF\xBF\xBD";
  EXPECT_EQ(valid_utf8("caf\xE9"), "caf" + fffd);             // Latin-1
  EXPECT_EQ(valid_utf8("\xC0\xAF"), fffd + fffd);             // overlong
  EXPECT_EQ(valid_utf8("\xED\xA0\x80"), fffd + fffd + fffd);  // surrogate
  EXPECT_EQ(valid_utf8("\xF4\x90\x80\x80"), fffd + fffd + fffd + fffd);
  EXPECT_EQ(valid_utf8("\xE2\x82"), fffd + fffd);  // cut short
}

TEST(ValidUtf8Test, EveryByteStringBecomesJsonThatParses) {
  std::string all;
  for (int i = 0; i < 256; ++i) all += static_cast<char>(i);
  nlohmann::json j = valid_utf8(all + all.substr(128) + "\xF0\x9F");
  std::string text = j.dump();  // throws on invalid UTF-8
  EXPECT_FALSE(nlohmann::json::parse(text).get<std::string>().empty());
}

}  // namespace
}  // namespace dtr::trace
