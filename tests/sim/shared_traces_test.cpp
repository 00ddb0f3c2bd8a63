// End-to-end on the paper's own traces (../shared/traces), against the
// authors' simulator's numbers (../shared/reference). Skips when absent.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "dtr/report/fidelity.h"
#include "dtr/sim/parallel.h"
#include "dtr/trace/trace_reader.h"

namespace dtr::sim {
namespace {

const std::string kShared = DTR_SHARED_DIR;
const std::string kReference = kShared + "/reference/simrd-sweep.csv";
const std::string kTraces = kShared + "/traces";

bool have_shared_data() {
  return std::filesystem::exists(kReference) &&
         std::filesystem::exists(kTraces);
}

#define SKIP_WITHOUT_SHARED_DATA()                                      \
  if (!have_shared_data()) {                                            \
    GTEST_SKIP() << "the paper's traces are not at " << kShared         \
                 << " (third-party data, not part of this repository)"; \
  }

TEST(SharedTracesTest, BaselinesMatchTheReference) {
  SKIP_WITHOUT_SHARED_DATA();
  std::map<std::string, report::ReferenceRow> first;
  for (const auto& r : report::read_reference_csv(kReference))
    first.emplace(r.trace, r);
  ASSERT_EQ(first.size(), 5u);
  for (const auto& [trace, ref] : first) {
    SCOPED_TRACE(trace);
    trace::Program p = trace::read_trace_file(kTraces + "/" + trace);
    EXPECT_EQ(static_cast<std::int64_t>(p.trace_ops()), ref.trace_ops);
    Baseline b = compute_baseline(p);
    EXPECT_EQ(b.peak_bytes, ref.baseline_peak_bytes);
    EXPECT_EQ(b.compute_ns, p.total_cost_ns);
    EXPECT_EQ(budget_for_ratio(ref.budget_ratio, b.peak_bytes),
              ref.budget_bytes);
  }
}

// The fidelity criterion of the simulator: the same outcome as the
// reference and the overhead within 2% in at least 90% of the cells.
TEST(SharedTracesTest, AgreesWithTheAuthorsSimulator) {
  SKIP_WITHOUT_SHARED_DATA();
  auto rows = report::read_reference_csv(kReference);
  ASSERT_EQ(rows.size(), 300u);
  auto cells = report::run_fidelity(rows, kTraces, 0.02, default_threads());
  std::size_t agree = 0, identical_remat = 0;
  for (const auto& c : cells) {
    agree += c.agrees;
    identical_remat += c.ours.remat_compute_ns == c.reference.remat_compute_ns;
    EXPECT_TRUE(c.same_budget)
        << c.reference.trace << " " << c.reference.budget_ratio;
  }
  EXPECT_GE(agree, cells.size() * 9 / 10);
  // What we measured when this test was written: every cell agrees and all
  // but one have the reference's exact rematerialization cost.
  EXPECT_EQ(agree, cells.size());
  EXPECT_GE(identical_remat, cells.size() - 1);
}

}  // namespace
}  // namespace dtr::sim
