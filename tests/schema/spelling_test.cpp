// The edit distance and the likely-name rule behind the did-you-mean hints.
#include <gtest/gtest.h>

#include "schema/spelling.h"

namespace trainsim {
namespace {

using schema::edit_distance;
using schema::likely_name;

TEST(EditDistanceTest, CountsInsertionsDeletionsSubstitutionsAndSwaps) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("abc", ""), 3u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("sequence", "seqeunce"), 1u);  // one swap of neighbours
  EXPECT_EQ(edit_distance("ca", "abc"), 3u);             // optimal string alignment, not full Damerau (2)
  EXPECT_EQ(edit_distance("layers", "layer"), 1u);
}

TEST(LikelyNameTest, ProposesTheNearestNameWithinALengthRelativeBudget) {
  const std::vector<std::string> flags = {"--num-layers", "--micro-batch-size", "--global-batch-size", "--seed"};
  EXPECT_EQ(likely_name("--num-layer", flags), "--num-layers");
  EXPECT_EQ(likely_name("--micro_batch_size", flags), "--micro-batch-size");  // '_' for '-' is free
  EXPECT_EQ(likely_name("--Micro-Batch-Sise", flags), "--micro-batch-size");  // case too
  EXPECT_EQ(likely_name("--mcro-bach-sise", flags), "--micro-batch-size");   // 3 edits in 16 characters
  EXPECT_EQ(likely_name("--mcr-bach-sise", flags), "");                      // 4 are too many
  EXPECT_EQ(likely_name("--sed", flags), "--seed");                          // 1 edit in a short word
  EXPECT_EQ(likely_name("--sd", flags), "");                                 // 2 are too many there
  EXPECT_EQ(likely_name("--frobnicate", flags), "");
  EXPECT_EQ(likely_name("--", flags), "");
  EXPECT_EQ(likely_name(std::string(81, 'a'), {std::string(81, 'a')}), "");  // too long to measure
}

TEST(LikelyNameTest, TiesGoToTheFirstCandidate) {
  EXPECT_EQ(likely_name("tp-size", {"tp-sizes", "pp-size"}), "tp-sizes");
  EXPECT_EQ(likely_name("tp-size", {"pp-size", "tp-sizes"}), "pp-size");
}

}  // namespace
}  // namespace trainsim
