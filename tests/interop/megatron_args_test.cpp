// Shell splitting of Megatron-LM launch commands: what bash would pass to
// argparse, without running anything.
#include <gtest/gtest.h>

#include <map>

#include "interop/megatron/megatron_args.h"

namespace trainsim::interop {
namespace {

FlagArity test_arity(const std::string& name) {
  if (name == "--on" || name == "--standalone") return FlagArity::kNone;
  if (name == "--list") return FlagArity::kList;
  if (name.rfind("--one", 0) == 0) return FlagArity::kOne;
  return FlagArity::kUnknown;
}

std::vector<CommandFlag> split(const std::string& text) {
  std::vector<CommandFlag> flags;
  Issues issues;
  EXPECT_TRUE(split_command_flags(text, test_arity, flags, issues)) << text;
  EXPECT_TRUE(issues.empty());
  return flags;
}

// name -> values of the last occurrence, values joined by '|'.
std::map<std::string, std::string> values(const std::string& text) {
  std::map<std::string, std::string> out;
  for (const CommandFlag& flag : split(text)) {
    std::string joined;
    for (const auto& value : flag.values) joined += (joined.empty() ? "" : "|") + value;
    out[flag.name] = joined;
  }
  return out;
}

TEST(MegatronArgsTest, ContinuationsCommentsAndRepeatedSpaces) {
  // "--on" is on a line of its own: another command, not the training command's flag.
  const auto v = values("torchrun   pretrain_gpt.py \\\n   --one-a   1 \\\r\n --one-b 2  # a comment --one-c 3\n--on");
  EXPECT_EQ(v, (std::map<std::string, std::string>{{"--one-a", "1"}, {"--one-b", "2"}}));
  const auto bare = values("--one-a   1 \\\r\n --one-b 2  # a comment --one-c 3\n--on");
  EXPECT_EQ(bare, (std::map<std::string, std::string>{{"--one-a", "1"}, {"--one-b", "2"}, {"--on", ""}}));
}

TEST(MegatronArgsTest, EqualsFormAndQuotes) {
  const auto v = values(R"(--one-a=4 --one-b "x y" --one-c 'it''s' --one-d="q\"r" --one-e '$HOME')");
  EXPECT_EQ(v.at("--one-a"), "4");
  EXPECT_EQ(v.at("--one-b"), "x y");
  EXPECT_EQ(v.at("--one-c"), "its");
  EXPECT_EQ(v.at("--one-d"), "q\"r");
  EXPECT_EQ(v.at("--one-e"), "$HOME");
}

TEST(MegatronArgsTest, AssignmentsExpandInScriptOrder) {
  const auto v = values(
      "N=3\nexport TP=${TP:-8}\nM=\"$N$N\"\nW=${WS:-\"16\"}\n"
      "cmd --one-a $N --one-b ${N} --one-c ${TP} --one-d \"$M\" --one-e $W --one-f ${UNSET-5}");
  EXPECT_EQ(v.at("--one-a"), "3");
  EXPECT_EQ(v.at("--one-b"), "3");
  EXPECT_EQ(v.at("--one-c"), "8");
  EXPECT_EQ(v.at("--one-d"), "33");
  EXPECT_EQ(v.at("--one-e"), "16");
  EXPECT_EQ(v.at("--one-f"), "5");
}

TEST(MegatronArgsTest, RunTimeValuesStayUnresolved) {
  const auto flags = split("WS=$(($A*$B))\ncmd --one-a $UNSET --one-b $(nproc) --one-c `hostname` --one-d $1 --one-e $WS");
  ASSERT_EQ(flags.size(), 5u);
  EXPECT_EQ(flags[0].unresolved, "$UNSET");
  EXPECT_EQ(flags[1].unresolved, "$(nproc)");
  EXPECT_EQ(flags[2].unresolved, "`hostname`");
  EXPECT_EQ(flags[3].unresolved, "$1");
  EXPECT_EQ(flags[4].unresolved, "$WS");
}

TEST(MegatronArgsTest, UnquotedExpansionsAreWordSplit) {
  const auto v = values("DIST=\"--one-n 4 --one-p 8\"\ntorchrun $DIST pretrain_gpt.py --one-a \"$DIST\"");
  EXPECT_EQ(v.at("--one-n"), "4");
  EXPECT_EQ(v.at("--one-p"), "8");
  EXPECT_EQ(v.at("--one-a"), "--one-n 4 --one-p 8");
}

TEST(MegatronArgsTest, ArraysAreScannedWhereTheyAreDefined) {
  const auto v = values(
      "ARGS=(\n  --one-a 1   # one\n  \"--one-b 2\"\n  --list x y\n)\nMORE=(--on --one-c 3)\n"
      "ARGS+=(\n --one-d 4\n)\ntorchrun pretrain_gpt.py ${ARGS[@]} \"${MORE[@]}\"");
  EXPECT_EQ(v, (std::map<std::string, std::string>{{"--one-a", "1"},
                                                    {"--one-b", "2"},
                                                    {"--list", "x|y"},
                                                    {"--on", ""},
                                                    {"--one-c", "3"},
                                                    {"--one-d", "4"}}));
}

TEST(MegatronArgsTest, SeparatorsEndValuesAndDescriptorsAreNotWords) {
  const auto flags = split("--list a b\nc --unknown d; e --on 2>&1 | tee log.txt --one-x 5 > out.log");
  ASSERT_EQ(flags.size(), 4u);
  EXPECT_EQ(flags[0].values, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(flags[1].values, (std::vector<std::string>{"d"}));
  EXPECT_TRUE(flags[2].stray.empty());
  EXPECT_EQ(flags[3].values, (std::vector<std::string>{"5"}));
}

TEST(MegatronArgsTest, NegativeNumbersAreValuesAndNoValueFlagsCollectStrays) {
  const auto flags = split("--one-eps -1e-8 --on true --one-b --on --unknown x y --standalone pretrain_gpt.py");
  ASSERT_EQ(flags.size(), 6u);
  EXPECT_EQ(flags[0].values, (std::vector<std::string>{"-1e-8"}));
  EXPECT_EQ(flags[1].stray, (std::vector<std::string>{"true"}));
  EXPECT_TRUE(flags[2].values.empty());  // the next word is a flag
  EXPECT_EQ(flags[4].values, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(flags[5].stray, (std::vector<std::string>{"pretrain_gpt.py"}));
}

struct BadShell {
  const char* name;
  const char* text;
  const char* message;
};

class MegatronArgsBadTest : public ::testing::TestWithParam<BadShell> {};

TEST_P(MegatronArgsBadTest, ReportsLine) {
  std::vector<CommandFlag> flags;
  Issues issues;
  EXPECT_FALSE(split_command_flags(GetParam().text, test_arity, flags, issues));
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].path, "/args");
  EXPECT_EQ(issues[0].message, GetParam().message);
}

const BadShell kBadShell[] = {
    {"single_quote", "--one-a 1\n--one-b 'x", "unterminated single quote (line 2)"},
    {"double_quote", "--one-a \"x\n\n", "unterminated double quote (line 1)"},
    {"command_substitution", "--one-a $(nproc", "unterminated $( (line 1)"},
    {"braced_variable", "\n\n--one-a ${N", "unterminated ${ (line 3)"},
    {"backquote", "--one-a `date", "unterminated backquote (line 1)"},
};

INSTANTIATE_TEST_SUITE_P(Shell, MegatronArgsBadTest, ::testing::ValuesIn(kBadShell),
                         [](const auto& p) { return std::string(p.param.name); });

}  // namespace
}  // namespace trainsim::interop
