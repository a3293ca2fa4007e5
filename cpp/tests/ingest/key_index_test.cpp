// KeyIndex (ingest/key_index.h): every key of a set is found at its position with one probe,
// and a string that is none of them (same length and ends, a prefix, a case change) is not.
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
constexpr KeyIndex kArgIndex(kArgs);
constexpr std::array kShort{kineto::kPhase, kineto::kCat, kineto::kName, kineto::kPid, kineto::kTid,
                            kineto::kTs, kineto::kDur, kineto::kFlowId, kineto::kArgs};
constexpr KeyIndex kShortIndex(kShort);

TEST(KeyIndex, EveryKeyIsFoundAtItsPosition) {
  for (size_t i = 0; i < kArgs.size(); ++i) EXPECT_EQ(kArgIndex.find(std::string(kArgs[i])), i) << kArgs[i];
  for (size_t i = 0; i < kShort.size(); ++i) EXPECT_EQ(kShortIndex.find(std::string(kShort[i])), i) << kShort[i];
}

TEST(KeyIndex, LookalikesAreUnknown) {
  for (const char* other : {"", "E", "External iD", "External ie", "Externa", "External id ", "Python pxrent id",
                            "Total Reservee", "bytes", "Record function id", "Ev Idx", "Device  Id"})
    EXPECT_EQ(kArgIndex.find(other), kArgIndex.kUnknown) << other;
  for (const char* other : {"p", "pH", "tx", "ts ", "cas", "ca", "nam", "argz", "s", "dir"})
    EXPECT_EQ(kShortIndex.find(other), kShortIndex.kUnknown) << other;
}

}  // namespace
}  // namespace attnprof::ingest
