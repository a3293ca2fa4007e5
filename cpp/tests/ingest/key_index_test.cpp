// find_key (ingest/key_index.h): every key of a set is found at its position, and a string
// that is none of them (same length, a prefix, a case change, a space more) is not.
#include "ingest/key_index.h"

#include <gtest/gtest.h>

#include <array>
#include <string>

#include "attnprof/kineto_keys.h"

namespace attnprof::ingest {
namespace {

constexpr std::array kArgs{kineto::kExternalId, kineto::kCorrelation, kineto::kInputDims, kineto::kInputType,
                           kineto::kConcreteInputs, kineto::kSequenceNumber, kineto::kPythonId,
                           kineto::kPythonParentId, kineto::kPythonModuleId, kineto::kDevice, kineto::kStream,
                           kineto::kDeviceType, kineto::kDeviceId, kineto::kAddr, kineto::kMemoryBytes,
                           kineto::kTotalAllocated, kineto::kTotalReserved};
constexpr std::array kShort{kineto::kPhase, kineto::kCat, kineto::kName, kineto::kPid, kineto::kTid,
                            kineto::kTs, kineto::kDur, kineto::kFlowId, kineto::kArgs};

TEST(FindKey, EveryKeyIsFoundAtItsPosition) {
  for (size_t i = 0; i < kArgs.size(); ++i) EXPECT_EQ(find_key<kArgs>(std::string(kArgs[i])), i) << kArgs[i];
  for (size_t i = 0; i < kShort.size(); ++i) EXPECT_EQ(find_key<kShort>(std::string(kShort[i])), i) << kShort[i];
}

TEST(FindKey, LookalikesAreUnknown) {
  for (const char* other : {"", "E", "External iD", "External ie", "Externa", "External id ", "Python pxrent id",
                            "Total Reservee", "bytes", "Record function id", "Ev Idx", "Device  Id"})
    EXPECT_EQ(find_key<kArgs>(other), kArgs.size()) << other;
  for (const char* other : {"p", "pH", "tx", "ts ", "cas", "ca", "nam", "argz", "s", "dir"})
    EXPECT_EQ(find_key<kShort>(other), kShort.size()) << other;
}

}  // namespace
}  // namespace attnprof::ingest
